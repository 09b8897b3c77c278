import Glibc

/// An identity (app, user, tab, section, token, JSON member name): equal to another only when their
/// UTF-8 bytes are equal, hashed and ordered by those bytes.
///
/// Swift's `String ==`, `hashValue` and `<` use Unicode canonical equivalence: `"\u{212A}ate" == "Kate"`
/// (KELVIN SIGN) and precomposed `"café" == "cafe\u{301}"`. That is not identity: SQLite keys rows by bytes,
/// so a `String` comparison let one user's token reach another's row. Every identity in TabStore is this type,
/// so it cannot be compared as a `String` by accident. The rule (documented in docs/operations.md "Trust and limits"): ids are exact byte
/// strings; no normalization happens anywhere, and two spellings are two ids.
package struct Identifier: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The id's text, for JSON, SQL binding and messages. Compare `Identifier`s, never this.
    package let text: String

    @inlinable
    package init(_ text: String) { self.text = text }

    @inlinable
    package init(_ text: Substring) { self.text = String(text) }

    package init(stringLiteral value: String) { self.text = value }

    /// Length in UTF-8 bytes: every limit on ids is in bytes, never in characters or grapheme clusters.
    @inlinable
    package var byteCount: Int { text.utf8.count }

    package var description: String { text }

    /// Compared over their contiguous UTF-8 storage (a token cache hit compares a few hundred bytes; a
    /// byte-by-byte walk through `String.UTF8View` cost more than the hash).
    @inlinable
    package static func == (lhs: Identifier, rhs: Identifier) -> Bool {
        guard lhs.text.utf8.count == rhs.text.utf8.count else { return false }
        var left = lhs.text, right = rhs.text
        return left.withUTF8 { a in
            right.withUTF8 { b in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }

    @inlinable
    package func hash(into hasher: inout Hasher) {
        var copy = text
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(copy.utf8.count)
    }

    /// Byte order (the order of SQLite's BINARY collation), so sorted output is the same on every platform.
    @inlinable
    package static func < (lhs: Identifier, rhs: Identifier) -> Bool {
        lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
    }

    /// Whether the id starts with `prefix`, byte for byte.
    @inlinable
    package func hasBytePrefix(_ prefix: Identifier) -> Bool {
        text.utf8.starts(with: prefix.text.utf8)
    }

    /// The id without its first `count` bytes, when that is still valid UTF-8 text.
    package func droppingBytes(_ count: Int) -> String {
        String(decoding: text.utf8.dropFirst(count), as: UTF8.self)
    }
}

/// Validation rules for ids that come from clients (docs/api.md "Conventions"), in UTF-8 bytes.
extension Identifier {
    /// Longest user, tab or section id, in UTF-8 bytes.
    package static let maxBytes = 256
    /// Longest app id, in bytes (ASCII only).
    package static let maxAppIdBytes = 128

    /// `appId`: 1-128 bytes of `[A-Za-z0-9._-]`.
    package var isValidAppId: Bool {
        !text.isEmpty && text.utf8.count <= Self.maxAppIdBytes && text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// `userId` and tab/section ids: 1-256 UTF-8 bytes without control characters.
    package var isValidId: Bool { !text.isEmpty && text.utf8.count <= Self.maxBytes && Self.isPrintable(text) }

    /// No control characters (C0, DEL, C1): they could split log lines or smuggle into headers.
    package static func isPrintable(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value))
        }
    }
}

/// Identifiers seen so far, by bytes: compared in place while there are few (most JSON objects and queries),
/// hashed once there are more, so a long list stays linear.
package struct SeenIdentifiers {
    /// Up to this many, in place.
    package static let few = 8
    private var list: [Identifier] = []
    private var set: Set<Identifier>?

    package init() {}

    /// Adds `id`; false when it was already there.
    package mutating func insert(_ id: Identifier) -> Bool {
        if set == nil, list.count < Self.few {
            if list.contains(id) { return false }
            list.append(id)
            return true
        }
        if set == nil { set = Set(list) }
        return set!.insert(id).inserted
    }
}
