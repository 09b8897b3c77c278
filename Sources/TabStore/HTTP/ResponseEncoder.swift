import Glibc
import TabStoreSupport

/// Writes a response head and body in HTTP/1.1 wire format.
package enum ResponseEncoder {
    /// Appends the response to `out`. `Content-Length`, `Date` and `Connection` are set here, once;
    /// header values never carry CR, LF or NUL onto the wire (no response splitting).
    package static func encode(_ response: HTTPResponse, keepAlive: Bool, includeBody: Bool, date: String, into out: inout [UInt8]) {
        appendStatusAndFields(response, into: &out)
        let bodyAllowed = response.status != 204 && response.status != 304 && response.status >= 200
        // The reserve and the pieces below make one allocation at most (none once the connection's buffer has
        // grown): no interpolated `String` per line, each of which was a heap object past 15 bytes.
        out.reserveCapacity(out.count + 128 + (bodyAllowed && includeBody ? response.body.count : 0))
        if bodyAllowed {
            append("Content-Length: ", into: &out)
            appendDecimal(response.body.count, into: &out)
            append("\r\n", into: &out)
        }
        appendDate(date, into: &out)
        append(keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n", into: &out)
        if bodyAllowed, includeBody { out.append(contentsOf: response.body) }
    }

    private static func append(_ text: StaticString, into out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// A non-negative integer's decimal digits, most significant first (a negative one, which no status or
    /// length is, as 0).
    private static func appendDecimal(_ value: Int, into out: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, into: &out) }
        out.append(UInt8(ascii: "0") + UInt8(max(0, value % 10)))
    }

    private static func appendDate(_ date: String, into out: inout [UInt8]) {
        append("Date: ", into: &out)
        out.append(contentsOf: date.utf8)
        append("\r\n", into: &out)
    }

    /// Appends the head of a response whose body follows as a stream of unknown length (its `body` is
    /// ignored): framed with `Transfer-Encoding: chunked` when `chunked`, else delimited by closing the
    /// connection (an HTTP/1.0 client), so `keepAlive` is then ignored.
    package static func encodeStreamHead(_ response: HTTPResponse, chunked: Bool, keepAlive: Bool, date: String, into out: inout [UInt8]) {
        appendStatusAndFields(response, into: &out, skippingTransferEncoding: true)
        if chunked { out.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8) }
        appendDate(date, into: &out)
        append(chunked && keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n", into: &out)
    }

    /// The status line and the handler's fields, minus those the encoder sets itself.
    private static func appendStatusAndFields(_ response: HTTPResponse, into out: inout [UInt8], skippingTransferEncoding: Bool = false) {
        append("HTTP/1.1 ", into: &out)
        appendDecimal(response.status, into: &out)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: HTTPStatus.reason(response.status).utf8)
        append("\r\n", into: &out)
        for (name, value) in response.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(HTTPParser.isTokenByte) else { continue }
            if HTTPHeaders.equal(name, "Content-Length") || HTTPHeaders.equal(name, "Connection") || HTTPHeaders.equal(name, "Date") { continue }
            if skippingTransferEncoding, HTTPHeaders.equal(name, "Transfer-Encoding") { continue }
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: ": ".utf8)
            for byte in value.utf8 { out.append(byte == 0x0D || byte == 0x0A || byte == 0x00 ? 0x20 : byte) }
            out.append(contentsOf: "\r\n".utf8)
        }
    }

    /// RFC 9110 §5.6.7 IMF-fixdate for the current second.
    package static func httpDate(_ seconds: time_t) -> String {
        var time = seconds
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

/// Minimal RFC 9457 problem documents for errors the server itself answers (framing, limits, timeouts).
package enum ServerProblem {
    package static func response(_ status: Int, _ detail: String) -> HTTPResponse {
        let body: JSONValue = .object(JSONObject([
            ("type", "about:blank"), ("title", .string(HTTPStatus.reason(status))), ("status", .integer(status)), ("detail", .string(detail)),
        ]))
        // Refusals the server makes itself (framing, limits, timeouts, overload) are never worth storing.
        return HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/problem+json"), ("Cache-Control", "no-store")]),
                            body: JSONWriter.bytes(body))
    }
}
