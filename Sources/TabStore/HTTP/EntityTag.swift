/// An entity-tag (RFC 9110 §8.8.3): an opaque quoted string, optionally marked weak (`W/"…"`).
package struct EntityTag: Sendable, Hashable {
    /// The characters between the quotes.
    package let opaque: String
    package let isWeak: Bool

    package init(_ opaque: String, weak: Bool = false) {
        self.opaque = opaque
        self.isWeak = weak
    }

    /// The header form: `"…"` or `W/"…"`.
    package var text: String { (isWeak ? "W/" : "") + "\"" + opaque + "\"" }

    /// Strong comparison (§8.8.3.2): both strong, same opaque bytes.
    package func strongMatches(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && Array(opaque.utf8) == Array(other.opaque.utf8)
    }

    /// Weak comparison: same opaque bytes, weakness ignored.
    package func weakMatches(_ other: EntityTag) -> Bool {
        Array(opaque.utf8) == Array(other.opaque.utf8)
    }
}

/// The value of `If-Match` or `If-None-Match` (RFC 9110 §13.1.1, §13.1.2): `*`, or a list of entity-tags.
package enum EntityTagCondition: Sendable, Equatable {
    case any
    case tags([EntityTag])

    /// Parses every field line of one precondition header, combined as one list (RFC 9110 §5.3).
    /// Returns nil when the header is absent; throws when it is malformed.
    /// - Throws: `EntityTagCondition.Malformed`.
    package static func parse(_ fieldValues: [String]) throws(Malformed) -> EntityTagCondition? {
        guard !fieldValues.isEmpty else { return nil }
        var tags: [EntityTag] = []
        var sawStar = false
        for value in fieldValues {
            let trimmed = value.trimmingOWS()
            if trimmed == "*" {
                sawStar = true
                continue
            }
            tags += try parseList(Array(trimmed.utf8))
        }
        // `*` stands alone: mixed with entity-tags (or repeated) the field is not `"*" / #entity-tag`.
        if sawStar {
            guard tags.isEmpty, fieldValues.count == 1 else { throw Malformed() }
            return .any
        }
        // An empty list is grammatical (`#entity-tag` allows zero members, RFC 9110 §5.6.1): it names no
        // representation, so `If-Match` with it fails and `If-None-Match` with it passes.
        return .tags(tags)
    }

    package struct Malformed: Error, Sendable, Equatable {}

    /// `#entity-tag`: comma-separated, optional whitespace around members, empty members allowed (§5.6.1).
    /// Commas may occur inside an opaque-tag, so the list is scanned, never split.
    private static func parseList(_ bytes: [UInt8]) throws(Malformed) -> [EntityTag] {
        var tags: [EntityTag] = []
        var index = 0
        func skipOWS() { while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 } }
        while true {
            skipOWS()
            if index == bytes.count { break }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            var weak = false
            if bytes[index] == UInt8(ascii: "W"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                weak = true
                index += 2
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Malformed() }
            index += 1
            let start = index
            // etagc = %x21 / %x23-7E / obs-text
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                let byte = bytes[index]
                guard byte == 0x21 || (0x23...0x7E).contains(byte) || byte >= 0x80 else { throw Malformed() }
                index += 1
            }
            guard index < bytes.count else { throw Malformed() }  // no closing quote
            guard let opaque = String(validating: bytes[start..<index], as: UTF8.self) else { throw Malformed() }
            tags.append(EntityTag(opaque, weak: weak))
            index += 1
            skipOWS()
            guard index == bytes.count || bytes[index] == UInt8(ascii: ",") else { throw Malformed() }
        }
        return tags
    }

    /// `If-Match` (§13.1.1): `*` matches when a current representation exists; otherwise strong comparison
    /// against any listed tag.
    package func matchesStrongly(_ current: EntityTag, exists: Bool = true) -> Bool {
        switch self {
        case .any: exists
        // A listed tag is compared with the current representation's tag whatever `exists` says: the empty
        // customization at revision 0 has a tag, and naming it matches it.
        case .tags(let tags): tags.contains { $0.strongMatches(current) }
        }
    }

    /// `If-None-Match` (§13.1.2): true when the condition *fails*, i.e. `*` and a representation exists,
    /// or a listed tag matches the current one by weak comparison.
    package func matchesWeakly(_ current: EntityTag, exists: Bool = true) -> Bool {
        switch self {
        case .any: exists
        case .tags(let tags): tags.contains { $0.weakMatches(current) }
        }
    }
}
