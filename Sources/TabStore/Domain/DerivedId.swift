import TabStoreSupport
/// The id of a tab registered without a customization ID.
///
/// SwiftUI needs no customization ID for a tab whose customization is off in both the sidebar and the tab bar
/// (docs/domain.md "Tabs without an id"). Such a tab still needs an id in every answer (layouts list it, selection falls back to it), so the
/// service derives one from what identifies the tab in the builder without an id: its **place** (top level, or
/// the id of its section), its **title** (the registered title, as UTF-8 bytes) and, when several id-less tabs
/// share both, its **occurrence** among them (1, 2, … in builder order). Nothing else enters it, so the id
/// survives re-registering the same schema and every change to other items (adding, removing or moving other
/// tabs, renaming other tabs, changing this tab's image or defaults); it changes when the tab is retitled or
/// moved to another section.
///
/// The id is `~derived.` and the 16 lowercase hex digits of the 64-bit FNV-1a hash of that place, title and
/// occurrence (each length-prefixed, so two different triples never encode alike). The `~derived.` prefix is
/// reserved: an app's own ids and dynamic prefixes may not start with it, so a derived id never collides with
/// an app's id, and a schema read back from the service (which shows derived ids) registers as the same schema.
package enum DerivedId {
    package static let prefix: Identifier = "~derived."

    /// Whether an id is in the reserved space of derived ids.
    package static func isReserved(_ id: Identifier) -> Bool { id.hasBytePrefix(prefix) }

    /// The derived id of the `occurrence`-th id-less tab titled `title` at the top level (`section` nil) or in `section`.
    package static func make(section: Identifier?, title: String, occurrence: Int) -> Identifier {
        var hash = FNV1a()
        if let section {
            hash.add(1)
            hash.add(length: section.byteCount)
            hash.add(section.text.utf8)
        } else {
            hash.add(0)
        }
        hash.add(length: title.utf8.count)
        hash.add(title.utf8)
        hash.add(length: occurrence)
        return Identifier(prefix.text + hash.hex)
    }
}

/// 64-bit FNV-1a (Fowler–Noll–Vo, IETF draft-eastlake-fnv): a fixed, platform-independent hash. Swift's `Hasher` is
/// seeded per process, so it could never name the same tab twice alike.
private struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ byte: UInt8) {
        value ^= UInt64(byte)
        value = value &* 0x0000_0100_0000_01b3
    }

    mutating func add(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { add(byte) }
    }

    /// A length or count as 8 bytes, big-endian.
    mutating func add(length: Int) {
        let wide = UInt64(length)
        for shift in stride(from: 56, through: 0, by: -8) { add(UInt8(truncatingIfNeeded: wide >> UInt64(shift))) }
    }

    var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
