@testable import TabStoreHTTP
@testable import TabStoreSupport

/// A request for tests, built by chaining: `.patch(path).bearer(token).ifMatch("\"1.1\"").json(body)`.
/// The same value is answered in-process (`InProcessClient`), by a live server (`LiveService`) or sent
/// on a connection of one's own (`RawClient.request`), so a test reads the same whichever way it runs.
package struct TestRequest: Sendable {
    package var method: String
    /// The request-target as sent: path and query, percent-encoded by the test.
    package var target: String
    /// Fields in the order they are sent, repeats kept; `Host` and `Content-Length` are added when sent.
    package var headers = HTTPHeaders()
    package var body: [UInt8]?
    /// A `Content-Length` announced without sending its body: only the head goes out (admission tests).
    package var announcedLength: Int?
    /// `Transfer-Encoding: chunked` announced without sending a chunk: only the head goes out.
    package var announcedChunked = false

    package init(_ method: String, _ target: String) {
        self.method = method
        self.target = target
    }

    package static func get(_ target: String) -> TestRequest { TestRequest("GET", target) }
    package static func head(_ target: String) -> TestRequest { TestRequest("HEAD", target) }
    package static func post(_ target: String) -> TestRequest { TestRequest("POST", target) }
    package static func put(_ target: String) -> TestRequest { TestRequest("PUT", target) }
    package static func patch(_ target: String) -> TestRequest { TestRequest("PATCH", target) }
    package static func delete(_ target: String) -> TestRequest { TestRequest("DELETE", target) }
    package static func options(_ target: String) -> TestRequest { TestRequest("OPTIONS", target) }
    /// Any method, also one no route implements.
    package static func method(_ method: String, _ target: String) -> TestRequest { TestRequest(method, target) }

    // MARK: Builders

    /// Adds a field (a repeat adds another line, as a client may send).
    package func header(_ name: String, _ value: String) -> TestRequest {
        var copy = self
        copy.headers.add(name, value)
        return copy
    }

    /// Adds each field in order.
    package func headers(_ fields: [(String, String)]) -> TestRequest {
        fields.reduce(self) { $0.header($1.0, $1.1) }
    }

    /// `Authorization: Bearer <token>`; nil sends no credentials, so a table of callers can include "none".
    package func bearer(_ token: String?) -> TestRequest {
        guard let token else { return self }
        return header("Authorization", "Bearer \(token)")
    }

    package func ifMatch(_ value: String) -> TestRequest { header("If-Match", value) }
    package func ifNoneMatch(_ value: String) -> TestRequest { header("If-None-Match", value) }
    package func origin(_ value: String) -> TestRequest { header("Origin", value) }

    /// Replaces the media type (a `json` body keeps this one).
    package func contentType(_ value: String) -> TestRequest {
        var copy = self
        copy.headers.set("Content-Type", value)
        return copy
    }

    /// The body as given, with `Content-Type: application/json` unless a type was set.
    package func json(_ text: String) -> TestRequest { json(bytes: Array(text.utf8)) }

    package func json(_ value: JSONValue) -> TestRequest { json(JSONWriter.string(value)) }

    /// A JSON body, or none when nil (tables where some methods carry a body).
    package func json(ifAny text: String?) -> TestRequest { text.map { json($0) } ?? self }

    /// Body bytes sent as JSON whatever they hold (invalid UTF-8 included).
    package func json(bytes: [UInt8]) -> TestRequest {
        (headers["Content-Type"] == nil ? contentType("application/json") : self).rawBody(bytes)
    }

    /// A body and no `Content-Type` of its own (server tests whose responder ignores the type).
    package func rawBody(_ bytes: [UInt8]) -> TestRequest {
        var copy = self
        copy.body = bytes
        return copy
    }

    package func rawBody(_ text: String) -> TestRequest { rawBody(Array(text.utf8)) }

    /// Announces a body of `length` bytes that is never sent: the server must decide from the head.
    package func announcing(contentLength length: Int) -> TestRequest {
        var copy = self
        copy.announcedLength = length
        return copy
    }

    /// Announces a chunked body that is never sent: the server must decide from the head.
    package func announcingChunked() -> TestRequest {
        var copy = self
        copy.announcedChunked = true
        return copy
    }

    /// `Expect: 100-continue`: a server that admits the head answers 100 before reading the body.
    package func expectingContinue() -> TestRequest { header("Expect", "100-continue") }

    // MARK: What is sent

    /// Every field as sent: `Host` first unless given, then the test's fields, then `Content-Length`.
    package var sentHeaders: HTTPHeaders {
        var all = HTTPHeaders()
        if headers["Host"] == nil { all.add("Host", "test") }
        for (name, value) in headers { all.add(name, value) }
        if announcedChunked {
            all.add("Transfer-Encoding", "chunked")
        } else if let length = contentLength {
            all.add("Content-Length", String(length))
        }
        return all
    }

    package var contentLength: Int? { announcedChunked ? nil : announcedLength ?? body?.count }

    /// The head the server's parser makes of these bytes (RFC 9112 §9.3 keep-alive; §10.1.1 expectations).
    package var parsedHead: HTTPRequestHead {
        HTTPRequestHead(method: method, target: target, version: .http11, headers: sentHeaders,
                        keepAlive: !headers.tokens("Connection").contains("close"), contentLength: contentLength, chunked: announcedChunked,
                        expectsContinue: headers["Expect"]?.lowercased() == "100-continue")
    }

    /// The complete request a responder is handed once its body has arrived.
    package var httpRequest: HTTPRequest { HTTPRequest(head: parsedHead, body: body ?? []) }

    /// The bytes on the wire: request line, fields, blank line, and the body unless it is only announced.
    package var wire: [UInt8] {
        var text = "\(method) \(target) HTTP/1.1\r\n"
        for (name, value) in sentHeaders { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        return Array(text.utf8) + (announcedLength == nil && !announcedChunked ? body ?? [] : [])
    }
}
