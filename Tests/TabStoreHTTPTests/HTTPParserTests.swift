import Testing
@testable import TabStoreHTTP
@testable import TabStoreSupport
import TabStoreTestSupport

/// Feeds `input` to a parser in pieces of `step` bytes (0 = whole) and collects the requests,
/// or the error that stopped it.
func parseAll(_ input: [UInt8], step: Int, limits: HTTPLimits = HTTPLimits()) -> (requests: [HTTPRequest], error: HTTPParseError?) {
    var parser = HTTPParser(limits: limits)
    var buffer: [UInt8] = []
    var offset = 0
    var requests: [HTTPRequest] = []
    var position = 0
    while position < input.count {
        let next = step == 0 ? input.count : min(input.count, position + step)
        buffer.append(contentsOf: input[position..<next])
        position = next
        while true {
            do {
                let event = try parser.parse(buffer, offset: &offset)
                switch event {
                case .needMore: break
                case .head: continue
                case .request(let request):
                    requests.append(request)
                    continue
                }
            } catch {
                return (requests, error)
            }
            break
        }
    }
    return (requests, nil)
}

@Suite("HTTP/1.1 request parser")
struct HTTPParserTests {
    struct Case: Sendable, CustomStringConvertible {
        let name: String
        let raw: String
        /// Expected status of the error, or nil when the request parses.
        let status: Int?
        var body: String = ""
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "simple GET", raw: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", status: nil),
        Case(name: "HTTP/1.0 without Host", raw: "GET / HTTP/1.0\r\n\r\n", status: nil),
        Case(name: "content-length body", raw: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", status: nil, body: "hello"),
        Case(name: "chunked body with extension and trailer",
             raw: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: y\r\n\r\n",
             status: nil, body: "hello world"),
        Case(name: "leading empty line ignored", raw: "\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", status: nil),
        Case(name: "CL with TE", raw: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400),
        Case(name: "duplicate CL", raw: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", status: 400),
        Case(name: "CL list", raw: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc", status: 400),
        Case(name: "negative CL", raw: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", status: 400),
        Case(name: "CL with plus", raw: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc", status: 400),
        Case(name: "huge CL", raw: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n", status: 400),
        Case(name: "CL over the body limit", raw: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", status: 413),
        Case(name: "unsupported transfer coding", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", status: 501),
        // RFC 9112 §6.3: chunked not final means the length cannot be known: 400, whatever the codings are.
        Case(name: "chunked not final", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n", status: 400),
        Case(name: "only an unknown coding", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", status: 400),
        Case(name: "TE in HTTP/1.0", raw: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400),
        Case(name: "obs-fold", raw: "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n", status: 400),
        Case(name: "space before colon", raw: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n", status: 400),
        Case(name: "bare LF", raw: "GET / HTTP/1.1\nHost: x\r\n\r\n", status: 400),
        Case(name: "bare CR", raw: "GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n", status: 400),
        Case(name: "NUL in value", raw: "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n", status: 400),
        Case(name: "invalid header name", raw: "GET / HTTP/1.1\r\nHost: x\r\nX(A): 1\r\n\r\n", status: 400),
        Case(name: "HTTP/2.0", raw: "GET / HTTP/2.0\r\nHost: x\r\n\r\n", status: 505),
        Case(name: "garbage version", raw: "GET / FOO\r\nHost: x\r\n\r\n", status: 400),
        Case(name: "missing Host", raw: "GET / HTTP/1.1\r\n\r\n", status: 400),
        Case(name: "two Hosts", raw: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400),
        Case(name: "absolute-form target", raw: "GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
        Case(name: "bad chunk size", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status: 400),
        Case(name: "chunk without CRLF", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", status: 400),
        Case(name: "unknown expectation", raw: "POST / HTTP/1.1\r\nHost: x\r\nExpect: magic\r\nContent-Length: 1\r\n\r\na", status: 417),
        Case(name: "long request line", raw: "GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\nHost: x\r\n\r\n", status: 414),
        Case(
            name: "huge header block",
            raw: "GET / HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Filler: \(String(repeating: "b", count: 1000))\r\n", count: 70) + "\r\n",
            status: 431),
        // RFC 9112 §3.2: a Host that is not `host[:port]` (RFC 3986 reg-name, IPv4 or IP-literal) is 400.
        Case(name: "Host with a space", raw: "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", status: 400),
        Case(name: "Host with userinfo", raw: "GET / HTTP/1.1\r\nHost: a@b\r\n\r\n", status: 400),
        Case(name: "Host with a path", raw: "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", status: 400),
        Case(name: "Host with a non-digit port", raw: "GET / HTTP/1.1\r\nHost: a:8o\r\n\r\n", status: 400),
        Case(name: "Host with two ports", raw: "GET / HTTP/1.1\r\nHost: a:80:81\r\n\r\n", status: 400),
        Case(name: "Host with an unclosed IP-literal", raw: "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", status: 400),
        Case(name: "Host with a bad IP-literal", raw: "GET / HTTP/1.1\r\nHost: [::g]\r\n\r\n", status: 400),
        Case(name: "Host with a bad percent-escape", raw: "GET / HTTP/1.1\r\nHost: a%4\r\n\r\n", status: 400),
        Case(name: "invalid Host in HTTP/1.0", raw: "GET / HTTP/1.0\r\nHost: a b\r\n\r\n", status: 400),
        Case(name: "Host name and port", raw: "GET / HTTP/1.1\r\nHost: api.example.com:8080\r\n\r\n", status: nil),
        Case(name: "Host IPv4", raw: "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", status: nil),
        Case(name: "Host IPv6 and port", raw: "GET / HTTP/1.1\r\nHost: [::ffff:127.0.0.1]:80\r\n\r\n", status: nil),
        Case(name: "Host IPvFuture", raw: "GET / HTTP/1.1\r\nHost: [v7.a:b]\r\n\r\n", status: nil),
        Case(name: "Host reg-name characters", raw: "GET / HTTP/1.1\r\nHost: a-b.c_d~e%41!$&'()*+,;=:\r\n\r\n", status: nil),
        Case(name: "empty Host", raw: "GET / HTTP/1.1\r\nHost: \r\n\r\n", status: nil),
        // A fragment is never sent in a request target (RFC 9112 §3.2.1 origin-form has none).
        Case(name: "fragment in the target", raw: "GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
        // Chunk lines (RFC 9112 §7.1): leading zeros are not significant; BWS may precede `;`; no controls.
        Case(name: "chunk size with leading zeros",
             raw: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0000000000000011\r\n0123456789abcdefg\r\n0000\r\n\r\n",
             status: nil, body: "0123456789abcdefg"),
        Case(name: "BWS before a chunk extension",
             raw: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n11 ; a=b\r\n0123456789abcdefg\r\n3\t;x\r\nxyz\r\n0 ;z\r\n\r\n",
             status: nil, body: "0123456789abcdefgxyz"),
        Case(name: "whitespace after a chunk size without an extension",
             raw: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n", status: 400),
        Case(name: "NUL in a chunk extension",
             raw: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;a=\u{0}\r\nabc\r\n0\r\n\r\n", status: 400),
        Case(name: "DEL in a chunk extension",
             raw: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;a\u{7F}\r\nabc\r\n0\r\n\r\n", status: 400),
        Case(name: "too many significant chunk size digits",
             raw: "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n", status: 413),
        Case(name: "too many headers", raw: "GET / HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-A: 1\r\n", count: 101) + "\r\n", status: 431),
    ]

    @Test("each case fed whole and byte by byte", arguments: cases)
    func table(testCase: Case) {
        for step in [0, 1] {
            let (requests, error) = parseAll(Array(testCase.raw.utf8), step: step)
            if let status = testCase.status {
                #expect(error?.status == status, "step \(step)")
                #expect(requests.isEmpty)
            } else {
                #expect(error == nil, "step \(step)")
                #expect(requests.count == 1, "step \(step)")
                #expect(requests.first.map { String(decoding: $0.body, as: UTF8.self) } == testCase.body)
            }
        }
    }

    @Test("every accepted case pipelined back to back, fed whole and byte by byte, in order")
    func pipelined() {
        let good = Self.cases.filter { $0.status == nil }
        let raw = good.map(\.raw).joined()
        for step in [0, 1, 7] {
            let (requests, error) = parseAll(Array(raw.utf8), step: step)
            #expect(error == nil)
            #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == good.map(\.body))
        }
    }

    @Test("keep-alive defaults and Connection tokens")
    func keepAlive() {
        let cases: [(String, Bool)] = [
            ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: x\r\nConnection: foo, Close\r\n\r\n", false),
            ("GET / HTTP/1.0\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
        ]
        for (raw, expected) in cases {
            #expect(parseAll(Array(raw.utf8), step: 0).requests.first?.head.keepAlive == expected)
        }
    }

    @Test("headers keep order and repeats, lookup ignores case; query decoding")
    func headers() {
        let raw = "GET /v1/apps?limit=5&cursor=a%2Fb HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\nExpect: 100-continue\r\n\r\n"
        let request = parseAll(Array(raw.utf8), step: 0).requests.first
        #expect(request?.headers.values("X-A") == ["1", "2"])
        #expect(request?.headers["x-A"] == "1")
        #expect(request?.head.path == "/v1/apps")
        #expect(request?.queryParameter("cursor") == "a/b")
        #expect(request?.queryParameter("limit") == "5")
        #expect(request?.head.expectsContinue == true)
    }

    @Test("query pairs split on the bytes & and =: empty pairs skipped, a name alone has no value, escapes decoded after the split")
    func queryPairs() {
        let raw = "GET /x?a=1&&b&c=&d=x%26y=z&e+f=%2B+&a%3D=2&=v HTTP/1.1\r\nHost: x\r\n\r\n"
        guard let request = parseAll(Array(raw.utf8), step: 0).requests.first else { Issue.record("not parsed"); return }
        var pairs: [String] = []
        request.head.forEachQueryPair { name, value in
            pairs.append("\(name)|\(value.map(String.init) ?? "nil")")
            return true
        }
        #expect(pairs == ["a|1", "b|nil", "c|", "d|x%26y=z", "e+f|%2B+", "a%3D|2", "|v"])
        #expect(request.queryParameter("a") == "1")
        #expect(request.queryParameter("b") == "")
        #expect(request.queryParameter("c") == "")
        #expect(request.queryParameter("d") == "x&y=z")
        #expect(request.queryParameter("e f") == "+ ")
        #expect(request.queryParameter("a=") == "2")
        #expect(request.queryParameter("z") == nil)
        #expect(request.head.repeatedQueryParameter == nil)
        // A pair the & follows immediately by a combining mark is still two pairs (a Character walk saw one).
        let head = HTTPRequestHead(method: "GET", target: "/x?k=1&\u{301}=2&k=3", version: .http11, headers: HTTPHeaders(), keepAlive: true,
                                   contentLength: nil, chunked: false, expectsContinue: false)
        var names: [[UInt8]] = []
        head.forEachQueryPair { name, _ in names.append(Array(name.utf8)); return true }
        #expect(names == [[0x6B], [0xCC, 0x81], [0x6B]])
        #expect(head.repeatedQueryParameter == "k")
        // A name that does not decode is compared as sent (it was skipped: `?%zz=1&%zz=2` passed).
        for target in ["/x?%zz=1&%zz=2", "/x?%FF&%FF=1", "/x?a%=1&b=2&a%=3"] {
            let bad = HTTPRequestHead(method: "GET", target: target, version: .http11, headers: HTTPHeaders(), keepAlive: true,
                                      contentLength: nil, chunked: false, expectsContinue: false)
            #expect(bad.repeatedQueryParameter != nil, "\(target)")
        }
    }

    @Test("a chunked body over the limit is refused with 413")
    func chunkedLimit() {
        var limits = HTTPLimits()
        limits.maxBodyBytes = 10
        let raw = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n"
        #expect(parseAll(Array(raw.utf8), step: 0, limits: limits).error?.status == 413)
    }
}
