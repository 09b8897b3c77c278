import TabStoreSupport
/// The HTTP version of a request; only 1.0 and 1.1 are served.
package enum HTTPVersion: Sendable, Equatable {
    case http10, http11

    package var text: String { self == .http11 ? "HTTP/1.1" : "HTTP/1.0" }
}

/// A request's head, as soon as it is parsed (before the body).
package struct HTTPRequestHead: Sendable, Equatable {
    package var method: String
    /// The raw request-target (origin-form: path and query, still percent-encoded).
    package var target: String
    package var version: HTTPVersion
    package var headers: HTTPHeaders
    /// Whether the connection stays open after the response (RFC 9112 §9.3).
    package var keepAlive: Bool
    /// The declared body length; nil for chunked or no body.
    package var contentLength: Int?
    package var chunked: Bool
    /// The client sent `Expect: 100-continue`.
    package var expectsContinue: Bool

    /// Whether a body follows this head: a `Content-Length` over 0, or chunked (even if it turns out empty).
    package var announcesBody: Bool { chunked || (contentLength ?? 0) > 0 }

    /// Whether `Content-Type` names `application/json` (any case, parameters allowed), compared without copying.
    package var hasJSONContentType: Bool {
        guard let value = headers["Content-Type"] else { return false }
        var type = value.utf8.prefix { $0 != UInt8(ascii: ";") }
        while let first = type.first, first == 0x20 || first == 0x09 { type = type.dropFirst() }
        while let last = type.last, last == 0x20 || last == 0x09 { type = type.dropLast() }
        // ASCII case folding: only A-Z changes.
        return type.count == 16 && zip(type, "application/json".utf8).allSatisfy { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }
    }

    /// The path part of the target (percent-encoded).
    package var path: Substring {
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target[...] }
        return target[..<question]
    }

    /// The query part of the target, without `?`.
    package var query: Substring? {
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        return target[target.utf8.index(after: question)...]
    }

    /// The first query parameter name (percent-decoded) that appears more than once, compared as bytes: such a
    /// request could be read two ways, so the API refuses it rather than pick one. A name that does not decode
    /// (`%zz`, `%FF`) is compared as sent, so it cannot be repeated unnoticed either.
    package var repeatedQueryParameter: String? {
        var seen = SeenIdentifiers()
        var repeated: String?
        forEachQueryPair { name, _ in
            let decoded = PercentDecoding.decode(name, plusAsSpace: true) ?? String(name)
            if seen.insert(Identifier(decoded)) { return true }
            repeated = decoded
            return false
        }
        return repeated
    }

    /// Calls `body` with each non-empty `name=value` pair of the query, raw (still percent-encoded; `value` nil
    /// when there is no `=`), until it returns false. The query is split on the bytes `&` and `=`, never on
    /// `Character`s: RFC 3986 delimits by bytes, and a `Character` walk paid a grapheme-break check per character
    /// (a twentieth of a GET layout's CPU).
    package func forEachQueryPair(_ body: (_ name: Substring, _ value: Substring?) -> Bool) {
        guard let query else { return }
        let bytes = query.utf8
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            if start < end {
                let more: Bool
                // `&` and `=` are ASCII, so both ends are scalar boundaries: slicing the Substring there is exact.
                if let equals = bytes[start..<end].firstIndex(of: UInt8(ascii: "=")) {
                    more = body(query[start..<equals], query[bytes.index(after: equals)..<end])
                } else {
                    more = body(query[start..<end], nil)
                }
                if !more { return }
            }
            start = end < bytes.endIndex ? bytes.index(after: end) : end
        }
    }
}

/// A complete request.
package struct HTTPRequest: Sendable {
    package var head: HTTPRequestHead
    package var body: [UInt8]

    package init(head: HTTPRequestHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }

    package var method: String { head.method }
    package var headers: HTTPHeaders { head.headers }

    /// A query parameter, percent-decoded (the API refuses a repeated one before a handler runs:
    /// `HTTPRequestHead.repeatedQueryParameter`).
    package func queryParameter(_ name: String) -> String? {
        var found: String?
        head.forEachQueryPair { raw, value in
            guard Self.queryName(raw, is: name) else { return true }
            found = value.map { PercentDecoding.decode($0, plusAsSpace: true) ?? "" } ?? ""
            return false
        }
        return found
    }

    /// Whether the query's first `name` parameter has a value that does not decode (a bad escape, or bytes that are
    /// not UTF-8), which `queryParameter` reads as empty.
    package func queryParameterIsUndecodable(_ name: String) -> Bool {
        var undecodable = false
        head.forEachQueryPair { raw, value in
            guard Self.queryName(raw, is: name) else { return true }
            if let value, !value.isEmpty { undecodable = PercentDecoding.decode(value, plusAsSpace: true) == nil }
            return false
        }
        return undecodable
    }

    /// The first query parameter's name that is none of `allowed` (as the client sent it, still encoded), or nil.
    package func unknownQueryParameter(allowed: [String]) -> String? {
        var unknown: String?
        head.forEachQueryPair { raw, _ in
            guard !allowed.contains(where: { Self.queryName(raw, is: $0) }) else { return true }
            unknown = String(raw.prefix(64))
            return false
        }
        return unknown
    }

    /// Whether a raw (still percent-encoded) query name is `name`, by bytes; decoded only when it has escapes.
    static func queryName(_ raw: Substring, is name: String) -> Bool {
        if !raw.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return raw.utf8.elementsEqual(name.utf8) }
        guard let decoded = PercentDecoding.decode(raw, plusAsSpace: true) else { return false }
        return Identifier(decoded) == Identifier(name)
    }
}

/// A response a handler returns: whole (`body`), or streamed (`stream`, whose bytes follow the head as
/// they come; `body` is ignored then).
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: HTTPHeaders
    package var body: [UInt8]
    package var stream: (any HTTPBodyStream)?

    package init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], stream: (any HTTPBodyStream)? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.stream = stream
    }
}

/// RFC 3986 percent-decoding.
package enum PercentDecoding {
    /// Decodes `%XX` escapes; nil for a malformed escape or a result that is not UTF-8.
    package static func decode(_ text: Substring, plusAsSpace: Bool = false) -> String? {
        // Most segments have nothing to decode: no copy through a byte array then.
        if !text.utf8.contains(UInt8(ascii: "%")), !(plusAsSpace && text.utf8.contains(UInt8(ascii: "+"))) { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            } else if plusAsSpace, byte == UInt8(ascii: "+") {
                bytes.append(0x20)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Reason phrases for the statuses the server sends.
package enum HTTPStatus {
    package static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}
