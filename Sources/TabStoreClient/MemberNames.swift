import Foundation

/// The reserved spelling of object member names that Foundation's JSON coders would confuse (see `TabStoreJSON`):
/// `\u{0}tabstore-id:` and the name's UTF-8 bytes in upper-case hex. Ids hold no control characters, so no id is
/// spelled so; a name that starts with NUL is reserved too, so the spelling stays one-to-one all the same.
enum MemberNames {
    static let prefix = Array("\u{0}tabstore-id:".utf8)

    /// Set in an encoder's `userInfo` whose output goes through `restoreReserved`.
    static let reserveKey = CodingUserInfoKey(rawValue: "TabStoreClient.reservedMemberNames")!

    static func reserved(_ id: TabStoreID) -> String { String(decoding: prefix, as: UTF8.self) + hex(id.utf8) }

    /// The reserved spelling of `name` as a JSON string token.
    static func reservedToken(_ name: [UInt8]) -> [UInt8] { quoted(prefix + Array(hex(name).utf8)) }

    private static func hex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        bytes.map { String($0 >> 4, radix: 16, uppercase: true) + String($0 & 0x0F, radix: 16, uppercase: true) }.joined()
    }

    /// The id a member name (as Foundation decoded it) stands for.
    static func id(_ name: String) -> TabStoreID {
        unreserve(Array(name.utf8)).flatMap { TabStoreID(utf8: $0) } ?? TabStoreID(name)
    }

    /// The bytes a reserved spelling stands for; nil for any other name.
    static func unreserve(_ name: [UInt8]) -> [UInt8]? {
        guard name.starts(with: prefix), (name.count - prefix.count) % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = prefix.count
        while index < name.count {
            guard let high = hexValue(name[index]), let low = hexValue(name[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `data` with the member names Foundation would confuse in the reserved spelling: within one object, the names
    /// that are one Swift String but not the same bytes (and any name that starts with NUL). A text without such
    /// names comes back as it is; so does one that is not JSON (the decoder reports it then).
    static func reserveAmbiguous(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        guard bytes.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "\\") }) else { return data }
        var replacements: [(Range<Int>, [UInt8])] = []
        var objects: [[(range: Range<Int>, name: [UInt8], string: String)]?] = []  // nil: an array
        func close() {
            guard let members = objects.popLast() ?? nil else { return }
            var spellings: [String: Set<[UInt8]>] = [:]
            for member in members { spellings[member.string, default: []].insert(member.name) }
            for member in members where member.name.first == 0 || spellings[member.string, default: []].count > 1 {
                replacements.append((member.range, reservedToken(member.name)))
            }
        }
        scan(bytes) { event in
            switch event {
            case .open(let isObject): objects.append(isObject ? [] : nil)
            case .close: close()
            case .name(let range, let name):
                // Only valid UTF-8 is reserved: the decoder refuses the rest.
                if objects.last != nil, let name, let id = TabStoreID(utf8: name) { objects[objects.count - 1]!.append((range, name, id.string)) }
            }
        }
        while !objects.isEmpty { close() }
        guard !replacements.isEmpty else { return data }
        return Data(splice(bytes, replacements))
    }

    /// `data` (a JSON encoder's output) with every reserved member name back in its exact bytes.
    static func restoreReserved(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        guard bytes.contains(UInt8(ascii: "\\")) else { return data }
        var replacements: [(Range<Int>, [UInt8])] = []
        scan(bytes) { event in
            guard case .name(let range, let name?) = event, let original = unreserve(name) else { return }
            replacements.append((range, quoted(original)))
        }
        return replacements.isEmpty ? data : Data(splice(bytes, replacements))
    }

    /// A JSON string of exactly `bytes` (slashes unescaped, as `TabStoreJSON` writes them).
    static func quoted(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0..<0x20: out += Array(("\\u00" + hex([byte])).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    private static func splice(_ bytes: [UInt8], _ replacements: [(Range<Int>, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + replacements.count * 64)
        var position = 0
        for (range, replacement) in replacements.sorted(by: { $0.0.lowerBound < $1.0.lowerBound }) {
            out += bytes[position..<range.lowerBound]
            out += replacement
            position = range.upperBound
        }
        out += bytes[position...]
        return out
    }

    enum Event {
        case open(isObject: Bool)
        case close
        /// A member name: the range of its quoted token, and its bytes (nil when an escape in it is not valid).
        case name(Range<Int>, [UInt8]?)
    }

    /// Walks a JSON text's structure: brackets, and each string followed by a colon (a member name).
    static func scan(_ bytes: [UInt8], _ visit: (Event) -> Void) {
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"): visit(.open(isObject: true)); index += 1
            case UInt8(ascii: "["): visit(.open(isObject: false)); index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): visit(.close); index += 1
            case UInt8(ascii: "\""):
                var end = index + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
                end = min(end + 1, bytes.count)
                var next = end
                while next < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[next]) { next += 1 }
                if next < bytes.count, bytes[next] == UInt8(ascii: ":") {
                    visit(.name(index..<end, unescape(bytes[(index + 1)..<max(index + 1, end - 1)])))
                }
                index = end
            default: index += 1
            }
        }
    }

    /// The bytes a JSON string's content stands for; nil for an escape JSON does not allow (or a lone surrogate).
    static func unescape(_ content: ArraySlice<UInt8>) -> [UInt8]? {
        guard content.contains(UInt8(ascii: "\\")) else { return Array(content) }
        var out: [UInt8] = []
        var index = content.startIndex
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= content.endIndex else { return nil }
            var value: UInt32 = 0
            for byte in content[at..<(at + 4)] {
                let lower = (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                guard let digit = lower ? byte - UInt8(ascii: "a") + 10 : hexValue(byte) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while index < content.endIndex {
            let byte = content[index]
            guard byte == UInt8(ascii: "\\") else { out.append(byte); index += 1; continue }
            guard index + 1 < content.endIndex else { return nil }
            let escape = content[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(index) else { return nil }
                index += 4
                if (0xD800..<0xDC00).contains(scalar) {
                    guard index + 1 < content.endIndex, content[index] == UInt8(ascii: "\\"), content[index + 1] == UInt8(ascii: "u"),
                          let low = hex4(index + 2), (0xDC00..<0xE000).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                out += Array(String(unicode).utf8)
            default: return nil
            }
        }
        return out
    }
}
