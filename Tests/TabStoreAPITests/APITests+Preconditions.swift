import Foundation
import Testing
@testable import TabStoreSupport
import TabStoreTestSupport

/// Conditional writes and reads of a customization (RFC 9110 §13): ETag "<revision>.<schemaVersion>",
/// If-Match, If-None-Match, and the `revision` a PUT body may carry.
extension APITests {
    static let hideBellOperation = #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}"#
    static let showBellOperation = #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "automatic"}]}"#

    /// `alice`'s customization at `revision`, reached by hiding and showing the bell in turn (schema version 1).
    static func customization(at revision: Int, on live: LiveService) async throws -> Credentials {
        let creds = try await Credentials.register(on: live)
        for step in 0..<revision {
            let operation = step.isMultiple(of: 2) ? hideBellOperation : showBellOperation
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).json(operation)).status == 200, "revision \(step + 1)")
        }
        return creds
    }

    // MARK: A user without a customization

    @Test("If-Match * on a user with no customization is 412 with the empty one's ETag \"0.1\": there is nothing to match")
    func ifMatchStarOnNone() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let star = try await live.send(.put(creds.customization).bearer(creds.userToken).ifMatch("*").json(Self.hideBell))
            #expect(star.status == 412)
            #expect(star.etag == "\"0.1\"")
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).ifMatch("*").json(Self.hideBellOperation)).status == 412)
        }
    }

    @Test("If-Match \"0.1\" names the empty customization as GET tags it: the first write applies")
    func ifMatchEmptyTag() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let created = try await live.send(.put(creds.customization).bearer(creds.userToken).ifMatch("\"0.1\"").json(Self.hideBell))
            #expect(created.status == 200)
            #expect(created.etag == "\"1.1\"")
        }
    }

    @Test("for a user with none, GET and writes agree: the empty customization's tag matches, `*` does not")
    func emptyCustomizationPreconditions() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let get = TestRequest.get(creds.customization).bearer(creds.userToken)
            let delete = TestRequest.delete(creds.customization).bearer(creds.userToken)
            #expect(try await live.send(get.ifMatch("*")).status == 412)
            #expect(try await live.send(get.ifMatch("\"0.1\"")).status == 200)
            #expect(try await live.send(delete.ifMatch("*")).status == 412)
            #expect(try await live.send(delete.ifMatch("\"0.1\"")).status == 204)
        }
    }

    @Test("a first write that changes nothing stores nothing: revision 0 and its ETag stay")
    func noOpFirstWrite() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            for (method, body) in [("PUT", "{}"), ("PATCH", #"{"operations": []}"#), ("PATCH", #"{"operations": [{"op": "resetTabBarOrder"}]}"#)] {
                let answer = try await live.send(.method(method, creds.customization).bearer(creds.userToken).json(body))
                #expect(answer.status == 200, "\(method) \(body)")
                #expect(answer.field("revision") == .integer(0), "\(method) \(body)")
                #expect(answer.etag == "\"0.1\"", "\(method) \(body)")
            }
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken).ifNoneMatch("\"0.1\"")).status == 304)
        }
    }

    @Test("If-None-Match: * lets the first write through, once")
    func ifNoneMatchStarFirstWrite() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let first = try await live.send(.patch(creds.customization).bearer(creds.userToken).ifNoneMatch("*").json(Self.hideBellOperation))
            #expect(first.status == 200)
            #expect(first.etag == "\"1.1\"")
            let again = try await live.send(.put(creds.customization).bearer(creds.userToken).ifNoneMatch("*").json("{}"))
            #expect(again.status == 412)
            #expect(again.etag == "\"1.1\"")
            #expect(try await live.send(.delete(creds.customization).bearer(creds.userToken).ifNoneMatch("*")).status == 412)
        }
    }

    // MARK: A stored customization

    @Test("If-None-Match with the current tag is 304; an earlier tag, or the old format \"1\", is 200")
    func ifNoneMatchOnRead() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 1, on: live)
            let get = TestRequest.get(creds.customization).bearer(creds.userToken)
            #expect(try await live.send(get.ifNoneMatch("\"1.1\"")).status == 304)
            #expect(try await live.send(get.ifNoneMatch("\"0.1\"")).status == 200)
            // The old format names no representation of this API any more.
            #expect(try await live.send(get.ifNoneMatch("\"1\"")).status == 200)
        }
    }

    @Test("a write with a stale If-Match is 412 and tells the current ETag")
    func staleIfMatch() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 1, on: live)
            let stale = try await live.send(.patch(creds.customization).bearer(creds.userToken).ifMatch("\"1\"")
                .json(#"{"operations": [{"op": "resetVisibility"}]}"#))
            #expect(stale.status == 412)
            #expect(stale.etag == "\"1.1\"")
        }
    }

    @Test("a PUT body with a stale revision is 412 and tells the current ETag")
    func staleRevisionInBody() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 1, on: live)
            let staleBody = try await live.send(.put(creds.customization).bearer(creds.userToken).json(#"{"revision": 0, "tabs": {}}"#))
            #expect(staleBody.status == 412)
            #expect(staleBody.etag == "\"1.1\"")
        }
    }

    @Test("a PUT body's schemaVersion and updatedAt must be the served ones: a GET's body PUT back applies, a changed one is 412 and applies nothing")
    func serverOwnedFieldsInBody() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 1, on: live)
            let read = try await live.send(.get(creds.customization).bearer(creds.userToken))
            guard case .object(var document)? = try? read.json() else { Issue.record("no document: \(read.text)"); return }
            #expect(try await live.send(.put(creds.customization).bearer(creds.userToken).json(read.text)).status == 200, "the body as read")
            document["schemaVersion"] = .integer(2)
            let otherSchema = try await live.send(
                .put(creds.customization).bearer(creds.userToken).json(String(decoding: JSONWriter.bytes(.object(document)), as: UTF8.self)))
            #expect(otherSchema.status == 412)
            #expect(otherSchema.problemType == "urn:tabstore:problem:revision-mismatch")
            #expect(otherSchema.etag == "\"1.1\"")
            document["schemaVersion"] = .integer(1)
            document["updatedAt"] = .string("2001-01-01T00:00:00.000Z")
            let otherTime = try await live.send(
                .put(creds.customization).bearer(creds.userToken).json(String(decoding: JSONWriter.bytes(.object(document)), as: UTF8.self)))
            #expect(otherTime.status == 412)
            #expect(otherTime.etag == "\"1.1\"")
            // Nothing applied: still revision 1, with the time it was written.
            let after = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(after.field("revision") == .integer(1))
            #expect(after.field("updatedAt") == read.field("updatedAt"))
            // A user never written has no time: any is refused, null is absent.
            let fresh = creds.app.userPath("nobody") + "/customization"
            let admin = live.admin
            #expect(try await live.send(.put(fresh).bearer(admin).json(#"{"updatedAt": "2001-01-01T00:00:00.000Z"}"#)).status == 412)
            #expect(try await live.send(.put(fresh).bearer(admin).json(#"{"updatedAt": null, "schemaVersion": 1}"#)).status == 200)
        }
    }

    @Test("a PUT body naming another user is 400")
    func putNamingAnotherUser() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 1, on: live)
            let mismatch = try await live.send(.put(creds.customization).bearer(creds.userToken).json(#"{"userId": "someone-else"}"#))
            #expect(mismatch.status == 400)
        }
    }

    @Test("the same choices again change nothing: same revision, same tag, and the current tag passes If-Match")
    func sameChoicesSameTag() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            #expect(try await live.send(.put(creds.customization).bearer(creds.userToken).json(Self.hideBell)).status == 200)
            let same = try await live.send(.put(creds.customization).bearer(creds.userToken).ifMatch("\"1.1\"")
                .json(#"{"revision": 1, "tabs": {"com.myApp.bell": {"sidebarVisibility": "hidden"}}}"#))
            #expect(same.status == 200)
            #expect(same.etag == "\"1.1\"")
        }
    }

    @Test("DELETE moves the revision forward, so an old ETag never matches new content")
    func deleteMovesRevision() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 1, on: live)
            #expect(try await live.send(.delete(creds.customization).bearer(creds.userToken).ifMatch("\"1.1\"")).status == 204)
            let after = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(after.field("revision") == .integer(2))
            #expect(after.etag == "\"2.1\"")
            #expect(after.field("tabs") == .object(JSONObject()))
        }
    }

    // MARK: Comparison and syntax

    @Test("If-None-Match with the current tag on a write is 412, compared weakly")
    func ifNoneMatchCurrentOnWrite() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 1, on: live)
            let write = TestRequest.patch(creds.customization).bearer(creds.userToken).ifNoneMatch("W/\"1.1\"").json(Self.showBellOperation)
            #expect(try await live.send(write).status == 412)
        }
    }

    @Test("If-Match compares strongly: a weak tag never matches")
    func ifMatchStrong() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 1, on: live)
            let weak = try await live.send(.patch(creds.customization).bearer(creds.userToken).ifMatch("W/\"1.1\"").json(Self.showBellOperation))
            #expect(weak.status == 412)
            #expect(weak.etag == "\"1.1\"")
        }
    }

    @Test("If-Match with a list containing the current tag matches, also over two field lines; * matches a stored one")
    func ifMatchLists() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 1, on: live)
            let patch = TestRequest.patch(creds.customization).bearer(creds.userToken)
            let listed = try await live.send(patch.ifMatch("\"0.1\", \"1.1\"").json(Self.showBellOperation))
            #expect(listed.status == 200)
            #expect(listed.etag == "\"2.1\"")
            let split = try await live.send(patch.ifMatch("\"1.1\"").ifMatch("\"2.1\"").json(Self.hideBellOperation))
            #expect(split.status == 200, "a list over two field lines")
            #expect(try await live.send(patch.ifMatch("*").json(Self.showBellOperation)).status == 200)
        }
    }

    @Test("a malformed If-Match is 400 invalid-if-match on writes and reads, and nothing is applied")
    func malformedIfMatch() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 4, on: live)
            for malformed in ["4.1", "\"4.1", "W/4.1", "\"4.1\" \"3.1\"", "*, \"4.1\"", "'4.1'"] {
                let answer = try await live.send(.patch(creds.customization).bearer(creds.userToken).ifMatch(malformed).json(Self.showBellOperation))
                #expect(answer.status == 400, "\(malformed)")
                #expect(answer.problemType == "urn:tabstore:problem:invalid-if-match", "\(malformed)")
                let read = try await live.send(.get(creds.customization).bearer(creds.userToken).ifMatch(malformed))
                #expect(read.status == 400, "GET \(malformed)")
            }
            #expect(
                try await live.send(.get(creds.customization).bearer(creds.userToken)).field("revision") == .integer(4),
                "nothing malformed was applied")
        }
    }

    @Test("a malformed If-None-Match is 400 invalid-if-none-match")
    func malformedIfNoneMatch() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 4, on: live)
            let badNone = try await live.send(.get(creds.customization).bearer(creds.userToken).ifNoneMatch("4.1"))
            #expect(badNone.status == 400)
            #expect(badNone.problemType == "urn:tabstore:problem:invalid-if-none-match")
        }
    }

    @Test("an empty list (RFC 9110 §5.6.1) names nothing: If-None-Match passes, If-Match fails")
    func emptyLists() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 4, on: live)
            for empty in ["", " , "] {
                #expect(
                    try await live.send(.get(creds.customization).bearer(creds.userToken).ifNoneMatch(empty)).status == 200,
                    "If-None-Match '\(empty)'")
                let write = TestRequest.patch(creds.customization).bearer(creds.userToken).ifMatch(empty).json(Self.showBellOperation)
                #expect(try await live.send(write).status == 412, "If-Match '\(empty)'")
            }
        }
    }

    @Test("GET: If-None-Match compares weakly, also in a list")
    func ifNoneMatchWeakOnRead() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 4, on: live)
            let get = TestRequest.get(creds.customization).bearer(creds.userToken)
            #expect(try await live.send(get.ifNoneMatch("W/\"4.1\"")).status == 304)
            #expect(try await live.send(get.ifNoneMatch("\"3.1\", W/\"4.1\"")).status == 304)
        }
    }

    @Test("GET: If-Match is evaluated too, strongly and before If-None-Match")
    func ifMatchOnRead() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 4, on: live)
            let get = TestRequest.get(creds.customization).bearer(creds.userToken)
            #expect(try await live.send(get.ifMatch("\"4.1\"")).status == 200)
            let mismatched = try await live.send(get.ifMatch("\"3.1\""))
            #expect(mismatched.status == 412)
            #expect(mismatched.etag == "\"4.1\"")
            #expect(try await live.send(get.ifMatch("\"3.1\"").ifNoneMatch("\"4.1\"")).status == 412)
        }
    }

    @Test("a layout's tags are its own: a customization's tag does not match it, nor another size class's")
    func layoutTagsAreTheirOwn() async throws {
        try await withLiveService { live in
            let creds = try await Self.customization(at: 4, on: live)
            let layout = TestRequest.get(creds.layout("compact")).bearer(creds.userToken)
            #expect(try await live.send(layout.ifMatch("\"4.1\"")).status == 412, "a customization tag is not a layout's")
            #expect(try await live.send(layout.ifMatch("\"4.1.compact\"")).status == 200)
            #expect(try await live.send(layout.ifNoneMatch("\"4.1.regular\"")).status == 200)
        }
    }
}
