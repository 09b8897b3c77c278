/// The `Host` field's grammar (RFC 9112 §3.2, RFC 3986 §3.2.2-3.2.3): `uri-host [ ":" port ]`, where
/// `uri-host` is an IP-literal in brackets or a reg-name (an IPv4 address is one too). A server must answer
/// 400 to any other value (§3.2); an empty value is what a client sends for a target without authority.
extension HTTPParser {
    static func isValidHost(_ value: String) -> Bool {
        // Parsed field values are native strings: their UTF-8 is contiguous, so this copies nothing.
        value.utf8.withContiguousStorageIfAvailable { isValidHost($0) } ?? false
    }

    private static func isValidHost(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), isIPLiteral(bytes[1..<close]) else { return false }
            index = close + 1
        } else {
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                let byte = bytes[index]
                if byte == UInt8(ascii: "%") {
                    guard index + 2 < bytes.count, PercentDecoding.hexValue(bytes[index + 1]) != nil,
                          PercentDecoding.hexValue(bytes[index + 2]) != nil
                    else { return false }
                    index += 3
                    continue
                }
                guard isUnreserved(byte) || isSubDelimiter(byte) else { return false }
                index += 1
            }
        }
        guard index < bytes.count else { return true }
        // port = *DIGIT
        guard bytes[index] == UInt8(ascii: ":") else { return false }
        return bytes[(index + 1)...].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// Between the brackets: `IPvFuture` (`v` HEXDIG+ `.` then unreserved, sub-delims or `:`), or an IPv6
    /// address checked for its alphabet and shape only (hex digits, at least two `:`, `.` for an embedded IPv4).
    private static func isIPLiteral(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard let first = bytes.first, bytes.count <= 64 else { return false }
        if first == UInt8(ascii: "v") || first == UInt8(ascii: "V") {
            let rest = bytes.dropFirst()
            guard let dot = rest.firstIndex(of: UInt8(ascii: ".")), dot > rest.startIndex, dot + 1 < rest.endIndex,
                  rest[rest.startIndex..<dot].allSatisfy({ PercentDecoding.hexValue($0) != nil })
            else { return false }
            return rest[(dot + 1)...].allSatisfy { isUnreserved($0) || isSubDelimiter($0) || $0 == UInt8(ascii: ":") }
        }
        guard bytes.count(where: { $0 == UInt8(ascii: ":") }) >= 2 else { return false }
        return bytes.allSatisfy { PercentDecoding.hexValue($0) != nil || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
    }

    /// RFC 3986 §2.3.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// RFC 3986 §2.2 sub-delims.
    private static func isSubDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="): true
        default: false
        }
    }
}
