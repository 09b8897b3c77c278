import Dispatch
import Foundation
import Glibc
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreHTTP
@testable import TabStoreSupport
import TabStoreTestSupport

/// `GET …/customization?waitSeconds=N` with `If-None-Match` (docs/devices.md "Follow changes: the change feed", long poll).
@Suite("Long poll", .serialized)
struct LongPollTests {
    static func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    @Test("a client that is behind, or names nothing, is answered at once")
    func answeredAtOnce() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell")))
            let start = DispatchTime.now().uptimeNanoseconds
            let behind = try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(creds.userToken).ifNoneMatch("\"0.1\""))
            #expect(behind.status == 200 && behind.revision == 1 && behind.etag == "\"1.1\"")
            let plain = try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(creds.userToken))
            #expect(plain.status == 200 && plain.revision == 1)
            // Neither waited its 60 s: the bound leaves a loaded machine room, not speed.
            #expect(Self.seconds(since: start) < 50)
        }
    }

    @Test("a waiting poll is answered by the next commit, with what a GET then reads", arguments: ["\"1.1\"", "\"1\""])
    func wokenByCommit(_ has: String) async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell")))
            let start = DispatchTime.now().uptimeNanoseconds
            let poll = Task { try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(creds.userToken).ifNoneMatch(has)) }
            try await waitUntil { live.service.api.followers.longPolls == 1 }
            let write = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            let answer = try await poll.value
            #expect(answer.status == 200 && answer.body == write.body && answer.etag == "\"2.1\"")
            #expect(Self.seconds(since: start) < 45, "woken by the commit, not by waitSeconds (60)")
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).etag == answer.etag)
            #expect(live.service.api.followers.longPolls == 0)
        }
    }

    @Test("a new schema version wakes a poll, whatever form its If-None-Match has", arguments: ["\"1.1\"", "\"1\"", "W/\"1.1\"", "*"])
    func wokenBySchemaChange(_ has: String) async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            let poll = Task { try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(creds.userToken).ifNoneMatch(has)) }
            try await waitUntil { live.service.api.followers.longPolls == 1 }
            #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(Self.withoutClimate)).status == 201)
            let answer = try await poll.value
            #expect(answer.status == 200 && answer.etag == "\"1.2\"" && Sync.hidden(answer) == [])
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).body == answer.body)
        }
    }

    @Test("at the timeout the answer is what is current then: 304 with the current ETag, or 200 for a change nobody announced",
          arguments: ["\"1\"", "\"1.1\""])
    func timeoutAnswersCurrent(_ has: String) async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let patch = { (tab: String) in TestRequest.patch(creds.customization).bearer(api.admin).json(Sync.hide(tab)) }
            _ = await api.send(patch("climate"))
            let poll = TestRequest.get(creds.customization + "?waitSeconds=1").bearer(api.admin).ifNoneMatch(has)
            let unchanged = await api.send(poll)
            #expect(unchanged.status == 304 && unchanged.etag == "\"1.1\"")
            // Another process on the same database (its own followers): no publication reaches this one's polls.
            let other = APIResponder(store: api.store, configuration: APIConfiguration(adminToken: api.admin))
            let waiting = Task { await api.send(poll) }
            try await waitUntil { api.api.followers.longPolls == 1 }
            let written = await other.respond(to: patch("bell").httpRequest, context: RequestContext(requestId: "other", receivedAt: 0))
            #expect(written.status == 200 && written.headers["ETag"] == "\"2.1\"")
            let answer = await waiting.value
            #expect(answer.status == 200 && answer.etag == "\"2.1\"" && answer.body == written.body)
        }
    }

    /// The fixture schema without the climate tab (a user who hid it sees it gone under version 2).
    static let withoutClimate = Seeds.behaviorAllAutomatic.replacing(
        #"{"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},"#, with: "")

    @Test("with nothing committed it answers 304 with the current ETag after waitSeconds")
    func timesOut() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let start = DispatchTime.now().uptimeNanoseconds
            let answer = try await live.send(.get(creds.customization + "?waitSeconds=1").bearer(creds.userToken).ifNoneMatch("\"0.1\""))
            let waited = Self.seconds(since: start)
            #expect(answer.status == 304 && answer.etag == "\"0.1\"" && answer.body.isEmpty)
            // It waits its second, and then answers (how much later is the machine's speed, not the contract).
            #expect(waited >= 0.9 && waited < 30, "waited \(waited) s")
        }
    }

    @Test("a stale If-Match is 412 at once, as for a plain GET; a current one lets the poll wait", arguments: ["\"1.1\"", "\"1\""])
    func ifMatch(_ has: String) async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            _ = await api.send(.patch(creds.customization).bearer(api.admin).json(Sync.hide("climate")))
            let long = TestRequest.get(creds.customization + "?waitSeconds=60").bearer(api.admin).ifNoneMatch(has)
            let start = DispatchTime.now().uptimeNanoseconds
            for stale in ["\"0.1\"", "\"1.2\"", "\"1\""] {
                let refused = await api.send(long.ifMatch(stale))
                #expect(
                    refused.status == 412 && refused.problemType == "urn:tabstore:problem:revision-mismatch" && refused.etag == "\"1.1\"", "\(stale)")
            }
            #expect(Self.seconds(since: start) < 50, "answered without waiting its 60 s")
            let poll = TestRequest.get(creds.customization + "?waitSeconds=1").bearer(api.admin).ifNoneMatch(has)
            let start2 = DispatchTime.now().uptimeNanoseconds
            let waited = await api.send(poll.ifMatch("\"1.1\""))
            #expect(waited.status == 304 && waited.etag == "\"1.1\"" && Self.seconds(since: start2) >= 0.9)
        }
    }

    @Test("bad waitSeconds are 400 invalid-parameter", arguments: ["0", "61", "x", "", "-1", "1.5"])
    func badWait(_ value: String) async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let answer = await api.send(.get(creds.customization + "?waitSeconds=\(value)").bearer(creds.userToken).ifNoneMatch("\"0.1\""))
            #expect(answer.status == 400 && answer.problemType == "urn:tabstore:problem:invalid-parameter")
        }
    }

    @Test("one user's waiting polls are bounded: past the limit 429 with Retry-After")
    func perUserLimit() async throws {
        try await withInProcessAPI(configure: { $0.maxFollowersPerUser = 2 }) { api in
            let creds = try await Credentials.register(on: api)
            let poll = TestRequest.get(creds.customization + "?waitSeconds=2").bearer(creds.userToken).ifNoneMatch("\"0.1\"")
            let waiting = [Task { await api.send(poll) }, Task { await api.send(poll) }]
            try await waitUntil { api.api.followers.longPolls == 2 }
            let refused = await api.send(poll)
            #expect(refused.status == 429 && refused.problemType == "urn:tabstore:problem:too-many-followers" && refused.header("Retry-After") == "1")
            // Another user is not affected.
            let other = TestRequest.get(creds.app.userPath(Credentials.otherUser) + "/customization?waitSeconds=1").bearer(creds.otherUserToken)
            #expect(await api.send(other.ifNoneMatch("\"0.1\"")).status == 304)
            for task in waiting { #expect(await task.value.status == 304) }
        }
    }

    @Test("a client that goes away gives its poll's place back at once, not after waitSeconds", arguments: [false, true])
    func clientGone(_ reset: Bool) async throws {
        try await withLiveService(adjust: { $0.maxFollowersPerUser = 2 }) { live in
            let creds = try await Credentials.register(on: live)
            let poll = TestRequest.get(creds.customization + "?waitSeconds=60").bearer(creds.userToken).ifNoneMatch("\"0.1\"")
            let port = live.port
            let clients = try await offPool { try (0..<2).map { _ in try RawClient(port: port) } }
            for client in clients { client.send(poll.wire) }
            try await waitUntil { live.service.api.followers.longPolls == 2 }
            #expect(try await live.send(poll).status == 429)
            for client in clients {
                if reset {
                    client.abort()  // a reset (RST), as when the device's process dies
                } else {
                    shutdown(client.fd, Int32(SHUT_RDWR))  // an orderly close (FIN), as when the app is closed
                }
            }
            try await waitUntil { live.service.api.followers.longPolls == 0 }
            let again = try await live.send(.get(creds.customization + "?waitSeconds=1").bearer(creds.userToken).ifNoneMatch("\"0.1\""))
            #expect(again.status == 304)
        }
    }

    @Test("past the server's limit of waiting polls: 503 too-many-waiting")
    func serverLimit() async throws {
        try await withInProcessAPI(configure: { $0.maxLongPolls = 1 }) { api in
            let creds = try await Credentials.register(on: api)
            let waiting = Task { await api.send(.get(creds.customization + "?waitSeconds=2").bearer(creds.userToken).ifNoneMatch("\"0.1\"")) }
            try await waitUntil { api.api.followers.longPolls == 1 }
            let other = TestRequest.get(creds.app.userPath(Credentials.otherUser) + "/customization?waitSeconds=1").bearer(creds.otherUserToken)
            let refused = await api.send(other.ifNoneMatch("\"0.1\""))
            #expect(refused.status == 503 && refused.problemType == "urn:tabstore:problem:too-many-waiting" && refused.header("Retry-After") == "1")
            #expect(await waiting.value.status == 304)
        }
    }

    @Test("shutdown answers waiting polls at once; the drain does not wait for them")
    func drainAnswers() async throws {
        // A grace far longer than the bound below: a drain that waited for the poll would take all of it.
        let live = try LiveService(adjust: { $0.shutdownGrace = 60 })
        let creds = try await Credentials.register(on: live)
        let poll = Task { try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(creds.userToken).ifNoneMatch("\"0.1\"")) }
        try await waitUntil { live.service.api.followers.longPolls == 1 }
        let start = DispatchTime.now().uptimeNanoseconds
        await live.stop()
        // Not after the poll's 60 s: the bound leaves a loaded machine room, not speed.
        #expect(Self.seconds(since: start) < 30, "the drain took \(Self.seconds(since: start)) s")
        let answer = try await poll.value
        #expect(answer.status == 304 && answer.etag == "\"0.1\"")
    }

    @Test("another user, or another app's token, is refused before waiting")
    func anotherUserRefused() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            for token in [creds.otherUserToken, creds.otherAppToken] {
                let start = DispatchTime.now().uptimeNanoseconds
                let answer = try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(token).ifNoneMatch("\"0.1\""))
                #expect(answer.status == 403 && Self.seconds(since: start) < 30, "refused before waiting its 60 s")
            }
        }
    }
}
