/// Text a client sent, quoted back in problem details and logs: cut to a byte budget, so one request cannot
/// make an answer or a log line many times larger than what a message needs.
package enum ClientText {
    /// The most bytes of client text quoted in a problem's `detail`.
    package static let maxQuotedBytes = 64

    /// The longest prefix of `text` of at most `maxBytes` UTF-8 bytes that ends on a Unicode scalar boundary
    /// (never half a UTF-8 sequence), followed by "…" when something was cut.
    package static func excerpt(_ text: String, maxBytes: Int) -> String {
        guard text.utf8.count > maxBytes else { return text }
        let ellipsis = "…"
        let budget = max(0, maxBytes - ellipsis.utf8.count)
        var end = text.unicodeScalars.startIndex
        var used = 0
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            if used + size > budget { break }
            used += size
            end = text.unicodeScalars.index(after: end)
        }
        return String(text.unicodeScalars[..<end]) + ellipsis
    }

    /// `text` in double quotes, cut to `maxQuotedBytes`.
    package static func quoted(_ text: String) -> String { "\"" + excerpt(text, maxBytes: maxQuotedBytes) + "\"" }
}
