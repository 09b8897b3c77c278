/// An incremental HTTP/1.1 request parser (RFC 9112): bytes in, events out, no I/O.
///
/// Feed it the connection's unread bytes; it consumes what it used by advancing `offset`, and
/// returns `.head` for a request with a body (so the caller can answer `100 Continue` before reading it),
/// then `.request` when the body is complete; a request without a body comes as `.request` at once.
/// A declared body over the limit is refused (413) from its head, before a byte of it is read.
package struct HTTPParser: Sendable {
    package enum Event: Sendable {
        case needMore
        case head(HTTPRequestHead)
        case request(HTTPRequest)
    }

    private enum State: Sendable {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
    }

    package let limits: HTTPLimits
    private var state = State.head
    private var scanned = 0
    private var currentHead: HTTPRequestHead?
    private var body: [UInt8] = []
    private var trailerBytes = 0
    private var sawLineEnd = false

    package init(limits: HTTPLimits = HTTPLimits()) { self.limits = limits }

    /// Body bytes of the current request received so far (decoded, for a chunked body); 0 between requests.
    package var bodyBytesReceived: Int { body.count }

    /// Parses from `buffer[offset...]`, advancing `offset` past what was consumed.
    /// - Throws: `HTTPParseError`; the connection must answer it and close.
    package mutating func parse(_ buffer: [UInt8], offset: inout Int) throws(HTTPParseError) -> Event {
        while true {
            switch state {
            case .head:
                guard let head = try parseHead(buffer, offset: &offset) else { return .needMore }
                body = []
                if head.chunked {
                    state = .chunkSize
                } else if let length = head.contentLength, length > 0 {
                    state = .fixedBody(remaining: length)
                } else {
                    return .request(HTTPRequest(head: head, body: []))
                }
                currentHead = head
                return .head(head)
            case .fixedBody(let remaining):
                let left = takeBody(remaining, from: buffer, offset: &offset)
                if left > 0 {
                    state = .fixedBody(remaining: left)
                    return .needMore
                }
                return finish()
            case .chunkSize:
                guard let line = try readLine(buffer, offset: &offset, limit: 1024) else { return .needMore }
                let size = try parseChunkSize(line)
                if size == 0 {
                    state = .trailers
                    trailerBytes = 0
                } else {
                    guard body.count + size <= limits.maxBodyBytes else {
                        throw HTTPParseError(413, "request body larger than \(limits.maxBodyBytes) bytes")
                    }
                    state = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let left = takeBody(remaining, from: buffer, offset: &offset)
                if left > 0 {
                    state = .chunkData(remaining: left)
                    return .needMore
                }
                state = .chunkDataEnd
            case .chunkDataEnd:
                guard buffer.count - offset >= 2 else { return .needMore }
                guard buffer[offset] == 0x0D, buffer[offset + 1] == 0x0A else { throw .bad("chunk data not followed by CRLF") }
                offset += 2
                state = .chunkSize
            case .trailers:
                // Trailer fields are read and discarded (RFC 9112 §7.1.2), within the header limits.
                guard let line = try readLine(buffer, offset: &offset, limit: limits.maxHeaderBytes) else { return .needMore }
                if line.isEmpty { return finish() }
                trailerBytes += line.count + 2
                guard trailerBytes <= limits.maxHeaderBytes else { throw HTTPParseError(431, "trailer section too large") }
                _ = try parseField(line)
            }
        }
    }

    /// Moves up to `remaining` body bytes from the buffer into the body; returns how many are still to come.
    private mutating func takeBody(_ remaining: Int, from buffer: [UInt8], offset: inout Int) -> Int {
        let available = min(remaining, buffer.count - offset)
        if available > 0 {
            body.append(contentsOf: buffer[offset..<(offset + available)])
            offset += available
        }
        return remaining - available
    }

    private mutating func finish() -> Event {
        let request = HTTPRequest(head: currentHead!, body: body)
        body = []
        currentHead = nil
        state = .head
        scanned = 0
        return .request(request)
    }

    // MARK: - Lines

    /// A CRLF-terminated line without its terminator; bare LF or CR is an error (RFC 9112 §2.2).
    private func readLine(_ buffer: [UInt8], offset: inout Int, limit: Int) throws(HTTPParseError) -> ArraySlice<UInt8>? {
        var index = offset
        while index < buffer.count {
            let byte = buffer[index]
            if byte == 0x0A { throw .bad("bare LF") }
            if byte == 0x0D {
                guard index + 1 < buffer.count else { return nil }
                guard buffer[index + 1] == 0x0A else { throw .bad("bare CR") }
                let line = buffer[offset..<index]
                offset = index + 2
                return line
            }
            index += 1
            if index - offset > limit { throw .bad("line too long") }
        }
        return nil
    }

    /// `chunk-size [ chunk-ext ]` (RFC 9112 §7.1): hex digits (leading zeros are not significant), then
    /// optionally BWS and `;`-extensions, which are ignored but may hold no control character.
    private func parseChunkSize(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        var size = 0
        var significant = 0
        var index = line.startIndex
        while index < line.endIndex, let value = PercentDecoding.hexValue(line[index]) {
            if significant > 0 || value != 0 { significant += 1 }
            guard significant <= 15 else { throw HTTPParseError(413, "chunk size too large") }
            size = size << 4 | Int(value)
            index += 1
        }
        guard index > line.startIndex else { throw .bad("invalid chunk size") }
        guard index < line.endIndex else { return size }
        while index < line.endIndex, line[index] == 0x20 || line[index] == 0x09 { index += 1 }
        guard index < line.endIndex, line[index] == UInt8(ascii: ";") else { throw .bad("invalid chunk size") }
        guard line[index...].allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else { throw .bad("invalid character in a chunk extension") }
        return size
    }

    // MARK: - Head

    private mutating func parseHead(_ buffer: [UInt8], offset: inout Int) throws(HTTPParseError) -> HTTPRequestHead? {
        var index = offset + scanned
        var end: Int?
        while index < buffer.count {
            let byte = buffer[index]
            if byte == 0x0A {
                guard index > offset, buffer[index - 1] == 0x0D else { throw .bad("bare LF in header section") }
                if index - offset == 1 {
                    // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line.
                    offset = index + 1
                    index = offset
                    continue
                }
                sawLineEnd = true
                if index - offset >= 3, buffer[index - 2] == 0x0A, buffer[index - 3] == 0x0D {
                    end = index + 1
                    break
                }
            } else if index > offset, buffer[index - 1] == 0x0D {
                throw .bad("bare CR in header section")
            }
            index += 1
        }
        guard let end else {
            scanned = index - offset
            if scanned > limits.maxHeaderBytes { throw HTTPParseError(431, "header section larger than \(limits.maxHeaderBytes) bytes") }
            if !sawLineEnd, scanned > limits.maxRequestLine + 2 {
                throw HTTPParseError(414, "request line longer than \(limits.maxRequestLine) bytes")
            }
            return nil
        }
        guard end - offset <= limits.maxHeaderBytes + 4 else {
            throw HTTPParseError(431, "header section larger than \(limits.maxHeaderBytes) bytes")
        }
        let head = try buildHead(buffer[offset..<(end - 4)])
        offset = end
        scanned = 0
        sawLineEnd = false
        return head
    }

    private func buildHead(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPRequestHead {
        // CR and LF were checked while scanning: here they only ever come as CRLF pairs.
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 0x0D {
                lines.append(bytes[start..<index])
                index += 2
                start = index
                continue
            }
            index += 1
        }
        lines.append(bytes[start..<bytes.endIndex])
        guard lines[0].count <= limits.maxRequestLine else { throw HTTPParseError(414, "request line longer than \(limits.maxRequestLine) bytes") }
        let (method, target, version) = try parseRequestLine(lines[0])
        var headers = HTTPHeaders()
        guard lines.count - 1 <= limits.maxHeaderCount else { throw HTTPParseError(431, "more than \(limits.maxHeaderCount) header fields") }
        for line in lines.dropFirst() {
            let (name, value) = try parseField(line)
            headers.add(name, value)
        }
        return try frame(method: method, target: target, version: version, headers: headers)
    }

    private func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String, HTTPVersion) {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .bad("malformed request line") }
        guard !parts[0].isEmpty, parts[0].allSatisfy(Self.isTokenByte) else { throw .bad("invalid method") }
        // The target: visible ASCII only (RFC 9112 §3.2); origin-form, or `*` for OPTIONS.
        guard !parts[1].isEmpty, parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .bad("invalid request target") }
        let method = String(decoding: parts[0], as: UTF8.self)
        let target = String(decoding: parts[1], as: UTF8.self)
        guard target.hasPrefix("/") || (target == "*" && method == "OPTIONS") else { throw .bad("request target must be origin-form") }
        // A fragment is the client's own business and never part of a request target (RFC 9112 §3.2.1).
        guard !parts[1].contains(UInt8(ascii: "#")) else { throw .bad("fragment in the request target") }
        let version: HTTPVersion
        switch String(decoding: parts[2], as: UTF8.self) {
        case "HTTP/1.1": version = .http11
        case "HTTP/1.0": version = .http10
        case let other where other.hasPrefix("HTTP/") && other.count == 8:
            throw HTTPParseError(505, "HTTP version \(other.dropFirst(5)) is not supported")
        default: throw .bad("invalid HTTP version")
        }
        return (method, target, version)
    }

    private func parseField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String) {
        guard let first = line.first else { throw .bad("empty header line") }
        // obs-fold (a line starting with whitespace) is refused (RFC 9112 §5.2).
        if first == 0x20 || first == 0x09 { throw .bad("obsolete line folding") }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .bad("header field without ':'") }
        let name = line[line.startIndex..<colon]
        // No whitespace between name and colon (RFC 9112 §5.1): a classic smuggling vector.
        guard !name.isEmpty, name.allSatisfy(Self.isTokenByte) else { throw .bad("invalid header field name") }
        var value = line[(colon + 1)...]
        while let byte = value.first, byte == 0x20 || byte == 0x09 { value = value.dropFirst() }
        while let byte = value.last, byte == 0x20 || byte == 0x09 { value = value.dropLast() }
        // Field values: visible characters, SP, HTAB and obs-text; never NUL, CR, LF or other controls.
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else { throw .bad("invalid character in header field value") }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// RFC 9110 §5.6.2 tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// Message framing (RFC 9112 §6): Content-Length and Transfer-Encoding, keep-alive, Expect, Host.
    private func frame(method: String, target: String, version: HTTPVersion, headers: HTTPHeaders) throws(HTTPParseError) -> HTTPRequestHead {
        let hosts = headers.values("Host")
        if version == .http11, hosts.count != 1 { throw .bad(hosts.isEmpty ? "missing Host header" : "more than one Host header") }
        for host in hosts where !Self.isValidHost(host) { throw .bad("invalid Host header") }
        let lengths = headers.values("Content-Length")
        let encodings = headers.tokens("Transfer-Encoding")
        var contentLength: Int?
        var chunked = false
        if !headers.values("Transfer-Encoding").isEmpty {
            // Both framings at once is how requests are smuggled (RFC 9112 §6.1): refuse.
            guard lengths.isEmpty else { throw .bad("both Content-Length and Transfer-Encoding") }
            guard version == .http11 else { throw .bad("Transfer-Encoding in an HTTP/1.0 request") }
            // RFC 9112 §6.3: when chunked is not the final coding the length cannot be known: 400 and close.
            // §6.1: a coding we do not implement before a final chunked: 501.
            guard encodings.last == "chunked" else { throw .bad("chunked must be the final transfer coding") }
            guard encodings == ["chunked"] else { throw HTTPParseError(501, "only the chunked transfer coding is supported") }
            chunked = true
        } else if !lengths.isEmpty {
            // One Content-Length, digits only; repeated or comma lists are refused (RFC 9112 §6.3).
            guard lengths.count == 1, let value = lengths.first, !value.isEmpty, value.count <= 18,
                  value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(value)
            else { throw .bad("invalid Content-Length") }
            contentLength = length
        }
        if let contentLength, contentLength > limits.maxBodyBytes {
            throw HTTPParseError(413, "request body larger than \(limits.maxBodyBytes) bytes")
        }
        let connection = headers.tokens("Connection")
        let keepAlive = version == .http11 ? !connection.contains("close") : connection.contains("keep-alive")
        var expectsContinue = false
        if let expect = headers["Expect"] {
            guard expect.lowercased() == "100-continue" else { throw HTTPParseError(417, "unsupported expectation") }
            expectsContinue = version == .http11
        }
        return HTTPRequestHead(method: method, target: target, version: version, headers: headers, keepAlive: keepAlive,
                               contentLength: contentLength, chunked: chunked, expectsContinue: expectsContinue)
    }
}
