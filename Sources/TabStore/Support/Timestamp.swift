import Foundation

/// RFC 3339 UTC timestamps (`2026-11-29T22:00:00Z`), as the API shows them.
package enum Timestamp {
    package static func now() -> String { format(Date()) }

    package static func format(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }
}

extension Timestamp {
    /// Seconds since 1970, UTC.
    package static func unixNow() -> Double { Date().timeIntervalSince1970 }
}

extension Timestamp {
    /// Seconds since 1970 of an RFC 3339 `date-time` (§5.6): `YYYY-MM-DDTHH:MM:SS`, optional fraction (dropped),
    /// then `Z` or `±HH:MM`; `T` and `Z` in either case. Every field is range-checked (a 30 February, hour 24 or
    /// offset `+24:00` is refused); a leap second (`:60`) is taken as the second before. Nil for anything else.
    package static func parse(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for index in from..<(from + count) {
                guard (0x30...0x39).contains(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - 0x30)
            }
            return value
        }
        func byte(_ index: Int, _ allowed: String) -> Bool { allowed.utf8.contains(bytes[index]) }
        guard let year = number(0, 4), byte(4, "-"), let month = number(5, 2), byte(7, "-"), let day = number(8, 2), byte(10, "Tt"),
              let hour = number(11, 2), byte(13, ":"), let minute = number(14, 2), byte(16, ":"), let second = number(17, 2)
        else { return nil }
        var index = 19
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            guard index > start, index < bytes.count else { return nil }
        }
        var offset = 0
        if byte(index, "Zz") {
            guard index + 1 == bytes.count else { return nil }
        } else {
            guard byte(index, "+-"), index + 6 == bytes.count, let offsetHour = number(index + 1, 2), byte(index + 3, ":"),
                  let offsetMinute = number(index + 4, 2), offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offset = (offsetHour * 60 + offsetMinute) * 60 * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...days[month - 1]).contains(day), hour <= 23, minute <= 59, second <= 60 else { return nil }
        // Days from 1970-01-01 to the date (the proleptic Gregorian calendar; Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let daysSince1970 = era * 146_097 + dayOfEra - 719_468
        return daysSince1970 * 86_400 + hour * 3_600 + minute * 60 + min(second, 59) - offset
    }
}
