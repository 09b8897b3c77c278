// Entity-tags as values, shared by the API (which parses and sends them) and the application layer (which checks a
// write's preconditions against the customization's tag): no HTTP parsing here (TabStoreHTTP parses the headers).

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
