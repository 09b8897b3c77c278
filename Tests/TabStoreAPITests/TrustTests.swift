import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// The audit's trust findings, each attacked several ways: ids are bytes, JWT claims cannot trap, limits are
/// in bytes and hold for what is stored, one bad row never fails a whole-app operation, path ids never reach
/// SQL unchecked, token errors reveal nothing, and every route's access is declared and enforced.
/// Item 5 is in TrustTests+Storage.swift, items 6-9 in TrustTests+Access.swift; helpers in TrustSupport.swift.
@Suite("Trust at the edges", .serialized)
struct TrustTests {
    /// Canonically equivalent spellings that are different bytes (Swift's `String ==` calls them equal).
    static let spellingPairs: [(String, String)] = [
        ("Kate", "\u{212A}ate"),          // KELVIN SIGN
        ("caf\u{E9}", "cafe\u{301}"),     // precomposed / decomposed
        ("\u{C5}", "\u{212B}"),           // ANGSTROM SIGN
        ("a;b", "a\u{37E}b"),             // GREEK QUESTION MARK
        ("\u{3A9}", "\u{2126}"),          // OHM SIGN
    ]

    // MARK: 1. Ids are bytes

    @Test("a token for one spelling never reaches another spelling's customization (both directions, every verb)")
    func spellingsAreDifferentUsers() async throws {
        try await withLiveService { live in
            for (direction, app) in ["app.fwd", "app.rev"].enumerated() {
                let registered = try await Credentials.App.register(on: live, id: app, schema: Seeds.behaviorAllAutomatic)
                for pair in Self.spellingPairs {
                    let (first, second) = direction == 0 ? pair : (pair.1, pair.0)
                    #expect(first == second, "the pair must be canonically equivalent to be an attack")
                    let firstPath = "/v1/apps/\(app)/users/\(Trust.pct(first))"
                    let secondPath = "/v1/apps/\(app)/users/\(Trust.pct(second))"
                    let firstToken = registered.token(for: first)
                    let secondToken = registered.token(for: second)
                    let created = try await live.send(
                        .patch(firstPath + "/customization").bearer(firstToken).json(Trust.patch([Trust.hide("com.myApp.bell")])))
                    #expect(created.status == 200, "\(first.debugDescription)")

                    let label = "\(second.debugDescription) on \(first.debugDescription)'s path"
                    let customization = firstPath + "/customization"
                    #expect(try await live.send(.get(customization).bearer(secondToken)).status == 403, "\(label)")
                    #expect(
                        try await live.send(.patch(customization).bearer(secondToken).json(Trust.patch([Trust.hide("com.myApp.lights")]))).status
                            == 403, "\(label)")
                    #expect(try await live.send(.put(customization).bearer(secondToken).json(#"{"tabs": {}}"#)).status == 403, "\(label)")
                    #expect(try await live.send(.delete(customization).bearer(secondToken)).status == 403, "\(label)")
                    for sizeClass in ["compact", "regular"] {
                        #expect(try await live.send(.get(firstPath + "/layout?sizeClass=\(sizeClass)").bearer(secondToken)).status == 403, "\(label)")
                    }
                    #expect(try await live.send(.get(secondPath + "/customization").bearer(firstToken)).status == 403, "and back")

                    // The second spelling's own customization: empty, revision 0, and named by its own bytes.
                    let own = try await live.send(.get(secondPath + "/customization").bearer(secondToken))
                    #expect(own.status == 200)
                    #expect(own.field("revision") == .integer(0), "\(second.debugDescription)")
                    #expect(own.field("tabs") == .object(JSONObject()), "\(second.debugDescription)")
                    #expect(own.identifier("userId") == Identifier(second))

                    // The first user's data is unchanged.
                    let stored = try await live.send(.get(customization).bearer(live.admin))
                    #expect(stored.field("revision") == .integer(1), "\(first.debugDescription)")
                    #expect(stored.identifier("userId") == Identifier(first))
                    #expect(stored.identifierKeys("tabs") == [Identifier("com.myApp.bell")])
                }
            }
        }
    }

    @Test("Identifier: distinct spellings are unequal, hash apart and are two Set and Dictionary members")
    func identifierIsBytes() {
        for (first, second) in Self.spellingPairs {
            let a = Identifier(first), b = Identifier(second)
            #expect(first == second)  // Swift's String says equal...
            #expect(a != b)  // ...the identity does not
            #expect(a.hashValue != b.hashValue)
            #expect(Set([a, b, Identifier(first)]).count == 2)
            var map: [Identifier: Int] = [:]
            map[a] = 1
            map[b] = 2
            #expect(map.count == 2 && map[a] == 1 && map[b] == 2)
            #expect((a < b) != (b < a))
            #expect(a.byteCount == first.utf8.count && b.byteCount == second.utf8.count)
        }
    }

    @Test("JSON member names are bytes: Kelvin and K, NFC and NFD are two members")
    func jsonMembersAreBytes() throws {
        let documents: [(String, String, String)] = [
            (#"{"K": 1, "\u212A": 2}"#, "K", "\u{212A}"),
            ("{\"K\": 1, \"\u{212A}\": 2}", "K", "\u{212A}"),
            (#"{"caf\u00e9": 1, "cafe\u0301": 2}"#, "caf\u{E9}", "cafe\u{301}"),
            ("{\"\u{3A9}\": 1, \"\u{2126}\": 2}", "\u{3A9}", "\u{2126}"),
        ]
        for (text, first, second) in documents {
            guard case .object(let object) = try JSONParser.parse(Array(text.utf8)) else {
                Issue.record("not an object: \(text)")
                continue
            }
            #expect(object.members.count == 2, "\(text)")
            #expect(object[first] == .integer(1) && object[second] == .integer(2), "\(text)")
            #expect(object.keys.map { Identifier($0) } == [Identifier(first), Identifier(second)])
        }
    }

    @Test("a JSON member name repeated with the same bytes is refused, escaped or not")
    func jsonDuplicateMembersRefused() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(#"{"K": 1, "K": 2}"#.utf8)) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(#"{"\u212A": 1, "\u212A": 2}"#.utf8)) }
    }

    @Test("PUT naming both spellings of a tab: the one the schema lacks is refused as unknown-tab, never merged")
    func putBothSpellingsOfATab() async throws {
        try await withLiveService { live in
            for (app, declared, other) in [("app.nfc", "caf\u{E9}", "cafe\u{301}"), ("app.nfd", "cafe\u{301}", "caf\u{E9}"),
                                           ("app.kelvin", "Kelvin", "\u{212A}elvin")] {
                let schema = Trust.text([
                    "items": [["kind": "tab", "id": "home", "title": "Home"], ["kind": "tab", "id": .string(declared), "title": "Caf\u{E9}"]]
                ])
                let registered = try await Credentials.App.register(on: live, id: app, schema: schema)
                let token = registered.token(for: "u")
                let path = registered.userPath("u") + "/customization"
                let hidden: JSONValue = ["sidebarVisibility": "hidden"]
                for tabs in [JSONObject([(declared, hidden), (other, hidden)]), JSONObject([(other, hidden), (declared, hidden)]),
                             JSONObject([(other, hidden)])] {
                    let refused = try await live.send(.put(path).bearer(token).json(.object(JSONObject([("tabs", .object(tabs))]))))
                    #expect(refused.status == 422, "\(app) \(tabs.keys.map(\.debugDescription))")
                    #expect(refused.codes == ["unknown-tab"], "\(app)")
                }
                #expect(try await live.send(.get(path).bearer(token)).field("revision") == .integer(0), "nothing stored")
                let accepted = try await live.send(
                    .put(path).bearer(token).json(.object(JSONObject([("tabs", .object(JSONObject([(declared, hidden)])))]))))
                #expect(accepted.status == 200)
                #expect(accepted.identifierKeys("tabs") == [Identifier(declared)])
                // PATCH is held to the same rule.
                let patched = try await live.send(.patch(path).bearer(token).json(Trust.patch([Trust.hide(other)])))
                #expect(patched.status == 422 && patched.codes == ["unknown-tab"])
            }
        }
    }

    // MARK: 2. Property: no spelling reaches another

    @Test("300 random pairs of distinct byte strings: a token for one never reaches the other's path (in-process)")
    func randomSpellingsNeverCross() async throws {
        try await withInProcessAPI { api in
            let app = try await Credentials.App.register(on: api, id: "app", schema: Seeds.behaviorAllAutomatic)
            var rng = SeededGenerator(state: 0x7A85_7005)
            var equivalent = 0
            for round in 0..<300 {
                let (a, b) = Trust.randomPair(&rng)
                #expect(Identifier(a) != Identifier(b) && Identifier(a).isValidId && Identifier(b).isValidId)
                if a == b { equivalent += 1 }
                let token = app.token(for: a)
                let label = "round \(round): \(a.debugDescription) → \(b.debugDescription)"
                let other = app.userPath(Trust.pct(b))
                #expect(await api.send(.get(other + "/customization").bearer(token)).status == 403, "\(label)")
                #expect(
                    await api.send(.patch(other + "/customization").bearer(token).json(Trust.patch([Trust.hide("com.myApp.bell")]))).status == 403,
                    "\(label)")
                #expect(await api.send(.get(other + "/layout?sizeClass=regular").bearer(token)).status == 403, "\(label)")
                let own = await api.send(.get(app.userPath(Trust.pct(a)) + "/customization").bearer(token))
                #expect(own.status == 200, "\(label)")
                #expect(own.identifier("userId") == Identifier(a), "\(label)")
            }
            // Most pairs are the hard case: equal as Swift Strings, different bytes.
            #expect(equivalent > 150)
        }
    }

    // MARK: 3. JWT numeric claims

    static let hostileNumbers = ["9223372036854775807", "-9223372036854775808", "1e300", "253402300800", "-1",
                                 "9223372036854775808", "-1e300", "1.7976931348623157e308", "\"1700000000\"", "true"]

    @Test("hostile exp, nbf and iat: 401 with a problem document, and the server stays up")
    func hostileTimeClaims() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let (secret, path) = (creds.app.secret, creds.customization)
            let valid = creds.issuedAt + 600
            // The hand-built token is accepted when its claims are sane, so every 401 below is the claim's.
            let sane = Trust.jwt(
                payload: #"{"sub":"alice","aud":"app.one","exp":\#(valid),"nbf":\#(valid - 900),"iat":\#(valid - 900)}"#, secret: secret)
            #expect(try await live.send(.get(path).bearer(sane)).status == 200)
            for number in Self.hostileNumbers {
                let payloads = [
                    #"{"sub":"alice","aud":"app.one","exp":\#(number)}"#,
                    #"{"sub":"alice","aud":"app.one","exp":\#(valid),"nbf":\#(number)}"#,
                    #"{"sub":"alice","aud":"app.one","exp":\#(valid),"iat":\#(number)}"#,
                    #"{"sub":"alice","aud":"app.one","exp":\#(number),"nbf":\#(number),"iat":\#(number)}"#,
                ]
                for payload in payloads {
                    let response = try await live.send(.get(path).bearer(Trust.jwt(payload: payload, secret: secret)))
                    #expect(response.status == 401, "\(payload)")
                    #expect(response.headers["Content-Type"] == "application/problem+json", "\(payload)")
                    #expect(response.field("status") == .integer(401), "\(payload)")
                    #expect(response.field("revision") == nil)
                }
            }
            #expect(try await live.send(.get("/healthz")).status == 200)
            #expect(try await live.send(.get(path).bearer(sane)).status == 200)
        }
    }

    @Test("JWT time checks never trap, whatever the clock or claims")
    func timeChecksDoNotTrap() throws {
        #expect(throws: JWT.Failure.expired) { try JWT.checkTimes(expiresAt: JWT.maxTimestamp, notBefore: 0, now: Int.max) }
        #expect(throws: JWT.Failure.notYetValid) { try JWT.checkTimes(expiresAt: JWT.maxTimestamp, notBefore: 0, now: Int.min) }
        let extremes = [Int.min, Int.min + 1, -1, 0, JWT.maxTimestamp, Int.max - 1, Int.max]
        var outcomes = 0
        for now in extremes {
            for expiresAt in extremes {
                for notBefore in extremes.map(Optional.some) + [nil] {
                    do {
                        try JWT.checkTimes(expiresAt: expiresAt, notBefore: notBefore, now: now)
                    } catch {
                        #expect(error == .expired || error == .notYetValid)
                    }
                    outcomes += 1
                }
            }
        }
        #expect(outcomes == 7 * 7 * 8)
    }

    @Test("parsing refuses every out-of-range time claim before any arithmetic sees it")
    func hostileClaimsRefusedByParsing() {
        for number in Self.hostileNumbers {
            for claim in ["exp", "nbf", "iat"] {
                let exp = claim == "exp" ? number : "1000"
                let extra = claim == "exp" ? "" : #","\#(claim)":\#(number)"#
                let token = Trust.jwt(payload: #"{"sub":"a","aud":"app","exp":\#(exp)\#(extra)}"#, secret: "s")
                #expect(throws: JWT.Failure.self, "\(claim) = \(number)") { try JWT.parse(token) }
            }
        }
    }

    // MARK: 4. Byte limits

    /// A tab id of exactly 256 bytes in 86 characters.
    static let wideTab = "t" + String(repeating: "\u{212A}", count: 85)
    static let wideSchema = Trust.text([
        "items": [["kind": "tab", "id": "home", "title": "Home"], ["kind": "tab", "id": .string(wideTab), "title": "Wide"]]
    ])

    @Test("a user id over 256 bytes in few characters is refused: 400 in a path, 401 in a token")
    func longUserIdsRefused() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.wideSchema)
            let tooLong = [
                "a" + String(repeating: "\u{301}", count: 128),  // 257 bytes, one character
                "ab" + String(repeating: "\u{301}", count: 128),  // 258 bytes, two characters
                String(repeating: "\u{212A}", count: 86),  // 258 bytes
                String(repeating: "\u{1F600}", count: 65),  // 260 bytes
                String(repeating: "\u{E9}", count: 129),  // 258 bytes
                String(repeating: "a", count: 257),
            ]
            for id in tooLong {
                #expect(id.utf8.count > 256)
                let path = creds.app.userPath(Trust.pct(id)) + "/customization"
                let response = try await live.send(.get(path).bearer(live.admin))
                #expect(response.status == 400, "\(id.utf8.count) bytes, \(id.count) characters")
                #expect(response.problemType == "urn:tabstore:problem:invalid-user-id")
                // Nor can a token name such a user.
                let token = Trust.jwt(
                    payload: Trust.text(["sub": .string(id), "aud": "app.one", "exp": .integer(creds.issuedAt + 600)]), secret: creds.app.secret)
                #expect(try await live.send(.get(path).bearer(token)).status == 401)
            }
        }
    }

    @Test("a tab id over 256 bytes is refused as invalid-id wherever a request names one")
    func longTabIdsRefused() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.wideSchema)
            let longTab = "a" + String(repeating: "\u{301}", count: 290)
            let operations: [JSONValue] = [
                Trust.hide(longTab),
                ["op": "setTabBarVisibility", "tab": .string(longTab), "visibility": "hidden"],
                ["op": "moveTab", "section": .string(longTab), "tab": "home", "toIndex": 0],
                ["op": "setTabBarOrder", "tabBarOrder": ["home", .string(longTab)]],
                ["op": "setSectionExpanded", "section": .string(longTab), "expanded": true],
            ]
            for operation in operations {
                let response = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Trust.patch([operation])))
                #expect(response.status == 400, "\(Trust.text(operation).prefix(40))")
                #expect(response.codes == ["invalid-id"], "\(Trust.text(operation).prefix(40))")
            }
            let put = try await live.send(.put(creds.customization).bearer(creds.userToken)
                .json(["tabs": .object(JSONObject([(longTab, ["sidebarVisibility": "hidden"])]))]))
            #expect(put.status == 400 && put.codes == ["invalid-id"])
        }
    }

    @Test("exactly 256 bytes is a valid id: as a user id, in the path and the token, and as a tab id")
    func idsOf256BytesAccepted() async throws {
        #expect(Self.wideTab.utf8.count == 256)
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.wideSchema)
            for id in [
                "ab" + String(repeating: "\u{301}", count: 127), String(repeating: "\u{212A}", count: 85) + "a", String(repeating: "x", count: 256),
            ] {
                #expect(id.utf8.count == 256)
                let own = creds.app.userPath(Trust.pct(id)) + "/customization"
                let patched = try await live.send(.patch(own).bearer(creds.app.token(for: id)).json(Trust.patch([Trust.hide(Self.wideTab)])))
                #expect(patched.status == 200, "\(id.count) characters")
                #expect(patched.identifier("userId") == Identifier(id))
                #expect(patched.identifierKeys("tabs") == [Identifier(Self.wideTab)])
            }
        }
    }
}
