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
