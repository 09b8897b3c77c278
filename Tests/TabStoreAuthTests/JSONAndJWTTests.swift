import Testing
@testable import TabStoreAuth
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("JSON parser and JWT")
struct JSONAndJWTTests {
    @Test("SHA-256 and HMAC-SHA256 give the published test vectors (FIPS 180-2, RFC 4231 case 2)")
    func digestVectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(Crypto.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(Crypto.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(Crypto.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("the parser refuses what could be read two ways", arguments: [
        "{\"a\": 1, \"a\": 2}", "[1, 2", "{\"a\" 1}", "01", "1.", "-", "1e", "\"\\ud800\"", "\"\\x\"", "\"a\u{1}\"",
        "[1] [2]", "nul", "1e400", "{\"a\": 1,}", "[,]",
    ])
    func refused(text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test("a repeated member name is refused in small objects and large ones (past the in-place comparison); names are bytes")
    func duplicateNames() throws {
        for count in [1, 7, 8, 9, 40] {
            let names = (0..<count).map { "\"m\($0)\": \($0)" }
            for repeated in [0, count - 1] {
                let text = "{" + (names + ["\"m\(repeated)\": 0"]).joined(separator: ", ") + "}"
                #expect(throws: JSONParser.Failure.self, "\(count) members, m\(repeated) again") { try JSONParser.parse(Array(text.utf8)) }
            }
            guard case .object(let distinct) = try JSONParser.parse(Array(("{" + names.joined(separator: ", ") + "}").utf8)) else {
                Issue.record("not an object"); return
            }
            #expect(distinct.members.count == count)
        }
        // "K" and KELVIN SIGN are canonically equivalent but two names; so are precomposed and decomposed é.
        guard case .object(let equivalent) = try JSONParser.parse(Array("{\"K\": 1, \"\u{212A}\": 2, \"\u{E9}\": 3, \"e\u{301}\": 4}".utf8)) else {
            Issue.record("not an object"); return
        }
        #expect(equivalent.members.count == 4)
        // Built from members: a repeated key keeps its first position and its last value, below and past 8 members.
        for count in [3, 12] {
            let object = JSONObject((0..<count).map { ("k\($0)", JSONValue.integer($0)) } + [("k0", .integer(-1))])
            #expect(object.members.count == count && object.members[0].key == "k0" && object["k0"] == .integer(-1))
        }
    }

    @Test("invalid UTF-8 and nesting deeper than the limit are refused")
    func refusedEdges() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(deep.utf8)) }
    }

    @Test("numbers keep their kind: integers stay integers, the rest doubles, also through the writer")
    func numbersKeepTheirKind() throws {
        #expect(try JSONParser.parse(Array("[1, -2, 3.5, 1e2, 9223372036854775807, 99999999999999999999]".utf8))
            == .array([.integer(1), .integer(-2), .number(3.5), .number(100), .integer(Int.max), .number(1e20)]))
        // Found by the fuzzer: a whole double must read back as a double.
        for number in [-2500.0, 0, 1e14, 1e20, 0.1] {
            #expect(try JSONParser.parse(JSONWriter.bytes(.number(number))) == .number(number))
        }
    }

    @Test("strings round-trip through the writer, escapes and control characters included")
    func stringsRoundTrip() throws {
        let text = "{\"s\":\"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\",\"t\":true,\"n\":null}"
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(try JSONParser.parse(JSONWriter.bytes(value)) == value)
        #expect(JSONWriter.string(["x": "\u{1}"]) == #"{"x":"\u0001"}"#)
    }

    static let token = JWT.sign(subject: "alice", audience: "app", expiresAt: 2_000, issuedAt: 1_000, secret: "secret")

    @Test("JWT: a signed token verifies with its secret and gives back its claims, inside the leeway too")
    func jwtRoundTrip() throws {
        let claims = try JWT.verify(Self.token, secret: "secret", now: 1_500)
        #expect(claims.subject == "alice")
        #expect(claims.audience == ["app"])
        _ = try JWT.verify(Self.token, secret: "secret", now: 2_000 + JWT.leeway)  // inside the leeway
    }

    @Test("JWT: another secret or a changed signature is refused")
    func jwtTampering() {
        #expect(throws: JWT.Failure.badSignature) { try JWT.verify(Self.token, secret: "other", now: 1_500) }
        let parts = Self.token.split(separator: ".")
        let signature = parts[2]
        let variant = String(signature.dropLast()) + (signature.last == "A" ? "B" : "A")
        #expect(throws: JWT.Failure.self) { try JWT.verify("\(parts[0]).\(parts[1]).\(variant)", secret: "secret", now: 1_500) }
    }

    @Test("JWT: outside the leeway a token is expired, or not yet valid")
    func jwtTimeClaims() {
        #expect(throws: JWT.Failure.expired) { try JWT.verify(Self.token, secret: "secret", now: 2_000 + JWT.leeway + 1) }
        #expect(throws: JWT.Failure.notYetValid) { try JWT.verify(Self.token, secret: "secret", now: 1_000 - JWT.leeway - 1) }
    }

    @Test("JWT: every algorithm but HS256 is refused", arguments: ["none", "HS512", "RS256"])
    func jwtAlgorithms(alg: String) {
        let parts = Self.token.split(separator: ".")
        let header = Base64URL.encode(Array(#"{"alg":"\#(alg)"}"#.utf8))
        #expect(throws: JWT.Failure.unsupportedAlgorithm(alg)) { try JWT.verify("\(header).\(parts[1]).\(parts[2])", secret: "secret", now: 1_500) }
    }

    @Test("JWT: a token without exp, or not three base64url parts, is malformed")
    func jwtMalformed() {
        let parts = Self.token.split(separator: ".")
        let noExp = Base64URL.encode(Array(#"{"sub":"a","aud":"app"}"#.utf8))
        #expect(throws: JWT.Failure.malformed("missing exp")) { try JWT.unverifiedClaims("\(parts[0]).\(noExp).x") }
        #expect(throws: JWT.Failure.self) { try JWT.unverifiedClaims("a.b") }
        #expect(throws: JWT.Failure.self) { try JWT.unverifiedClaims("!!!.???.x") }
    }

    @Test("base64url round-trips, and refuses an impossible length or non-canonical trailing bits (one spelling per signature)")
    func base64URL() {
        #expect(Base64URL.decode(Base64URL.encode([0, 1, 2, 250, 251, 252, 253])) == [0, 1, 2, 250, 251, 252, 253])
        #expect(Base64URL.decode("a") == nil)
        // Found by the fuzzer: non-canonical trailing bits are refused, so a signature has one spelling.
        #expect(Base64URL.decode("QQ") == [0x41])
        #expect(Base64URL.decode("QR") == nil)
        #expect(Base64URL.decode("QUI") == [0x41, 0x42])
        #expect(Base64URL.decode("QUJ") == nil)
    }
}
