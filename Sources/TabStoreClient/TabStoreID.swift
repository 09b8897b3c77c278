import Foundation

/// An id the server knows (app, user, tab, section, dynamic tab): a byte string. Two ids are equal only when
/// their UTF-8 bytes are, as on the server: unlike Swift `String`, which compares by Unicode canonical
/// equivalence, `TabStoreID("caf\u{E9}")` (precomposed) and `TabStoreID("cafe\u{301}")` are two ids, and so are
/// `"K"` and `"\u{212A}"` (KELVIN SIGN). Equality, hashing and order are over the bytes; a string literal is an id
/// (`.setSidebarVisibility(tab: "com.myApp.bell", visibility: .hidden)`). In JSON it is a string.
public struct TabStoreID: Hashable, Comparable, Sendable, Codable, ExpressibleByStringInterpolation, CustomStringConvertible,
    CustomDebugStringConvertible {
    /// The id as a string, its scalars exactly as given (Swift never normalizes a string's storage). Compare ids,
    /// never these strings.
    public let string: String

    /// The value spelled by this string.
    public init(_ string: String) {
        var native = string
        native.makeContiguousUTF8()
        self.string = native
    }

    /// The id a string literal spells.
    public init(stringLiteral value: String) { self.init(value) }

    /// The id of these UTF-8 bytes; nil when they are not valid UTF-8.
    public init?<Bytes: Collection>(utf8 bytes: Bytes) where Bytes.Element == UInt8 {
        let string = String(decoding: bytes, as: UTF8.self)
        guard string.utf8.elementsEqual(bytes) else { return nil }  // invalid sequences were replaced
        self.init(string)
    }

    /// The id's bytes.
    public var utf8: String.UTF8View { string.utf8 }

    /// A line for logs.
    public var description: String { string }

    /// The scalars spelled out, so that two ids that print alike can be told apart.
    public var debugDescription: String {
        "TabStoreID(\"" + string.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{" + String($0.value, radix: 16, uppercase: true) + "}" }.joined()
            + "\")"
    }

    /// Runs `body` over the id's bytes.
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try string.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = string  // not native (bridged on Apple platforms): made so, once, in the copy
        return try copy.withUTF8(body)
    }

    /// Whether the two are byte for byte the same.
    public static func == (left: TabStoreID, right: TabStoreID) -> Bool {
        left.withBytes { a in right.withBytes { b in a.count == b.count && a.elementsEqual(b) } }
    }

    /// Hashes the bytes.
    public func hash(into hasher: inout Hasher) {
        withBytes { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            hasher.combine(bytes.count)
        }
    }

    /// Byte order, as the server orders ids.
    public static func < (left: TabStoreID, right: TabStoreID) -> Bool {
        left.withBytes { a in right.withBytes { b in a.lexicographicallyPrecedes(b) } }
    }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}
