import Foundation
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport

/// Helpers for `TrustTests`: hand-built tokens, percent-encoding, JSON bodies, random spellings.
package enum Trust {
    /// Percent-encodes every byte outside RFC 3986's unreserved set, so a path carries an id's exact bytes.
    package static func pct(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF")
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out.append("%")
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }

    /// An HS256 JWT whose header and payload are exactly the given texts (no re-encoding of hostile claims).
    package static func jwt(payload: String, secret: String, header: String = #"{"alg":"HS256","typ":"JWT"}"#) -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        return input + "." + Base64URL.encode(Crypto.hmacSHA256(key: Array(secret.utf8), message: Array(input.utf8)))
    }

    package static func text(_ value: JSONValue) -> String { JSONWriter.string(value) }

    package static func patch(_ operations: [JSONValue]) -> String { text(["operations": .array(operations)]) }

    package static func hide(_ tab: String) -> JSONValue { ["op": "setSidebarVisibility", "tab": .string(tab), "visibility": "hidden"] }

    // MARK: Random spellings

    /// Pieces of ids, each with its canonically equivalent spellings (single-spelling pieces add noise).
    package static let pieces: [[String]] = [
        ["K", "\u{212A}"], ["\u{3A9}", "\u{2126}"], ["\u{C5}", "\u{212B}", "A\u{30A}"], ["\u{E9}", "e\u{301}"],
        [";", "\u{37E}"], ["\u{AC00}", "\u{1100}\u{1161}"], ["\u{1E69}", "s\u{323}\u{307}", "s\u{307}\u{323}"],
        ["\u{F6}", "o\u{308}"], ["\u{1F80}", "\u{1F00}\u{345}", "\u{3B1}\u{313}\u{345}"],
        ["a"], ["b"], ["z"], ["0"], ["-"], ["."], ["~"], ["\u{301}"], ["\u{308}"], ["\u{212A}"], ["%"], ["/"],
    ]

    /// Two distinct valid ids: usually the same pieces spelled differently (equal as Swift Strings), sometimes
    /// one piece more or less, sometimes unrelated.
    package static func randomPair(_ rng: inout SeededGenerator) -> (String, String) {
        let groups = (0..<Int.random(in: 1...10, using: &rng)).map { _ in Int.random(in: 0..<pieces.count, using: &rng) }
        var parts = groups.map { pieces[$0].randomElement(using: &rng)! }
        let a = parts.joined()
        var b: String
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: b = a + pieces.randomElement(using: &rng)!.randomElement(using: &rng)!
        case 1: b = (0..<Int.random(in: 1...10, using: &rng)).map { _ in pieces.randomElement(using: &rng)!.randomElement(using: &rng)! }.joined()
        default: b = groups.map { pieces[$0].randomElement(using: &rng)! }.joined()
        }
        if Array(a.utf8) == Array(b.utf8) {
            // Respell the first piece that has another spelling; else append one.
            if let position = groups.firstIndex(where: { pieces[$0].count > 1 }) {
                let current = Array(parts[position].utf8)
                parts[position] = pieces[groups[position]].first { Array($0.utf8) != current }!
                b = parts.joined()
            } else {
                b = a + "\u{212A}"
            }
        }
        return (a, b)
    }
}
