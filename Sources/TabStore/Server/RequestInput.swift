import TabStoreHTTP

/// A connection's input that is not handled yet, and the parser that reads requests out of it: what
/// `ConnectionStateMachine` buffers between reads. Consumed bytes are dropped as it goes, so the buffer never
/// grows with the number of requests served.
struct RequestInput {
    private var bytes: [UInt8] = []
    private var offset = 0
    private var parser: HTTPParser

    init(limits: HTTPLimits) { parser = HTTPParser(limits: limits) }

    /// Bytes buffered and not parsed yet.
    var buffered: Int { bytes.count - offset }

    /// Body bytes of the request being parsed received so far (0 between requests).
    var bodyBytesReceived: Int { parser.bodyBytesReceived }

    mutating func append(_ more: ArraySlice<UInt8>) {
        bytes.append(contentsOf: more)
    }

    /// Parses what is buffered, up to the next event.
    /// - Throws: `HTTPParseError`: the connection must answer it and close.
    mutating func parse() throws(HTTPParseError) -> HTTPParser.Event {
        try parser.parse(bytes, offset: &offset)
    }

    /// Forgets a partial request in the parser and everything buffered (the connection closes; lingering
    /// reads what still comes into the loop's scratch buffer, never into this).
    mutating func discard() {
        parser = HTTPParser(limits: parser.limits)
        bytes = []
        offset = 0
    }

    /// Drops consumed input: all of it once everything is parsed, else once it is over 16 KiB.
    mutating func compact() {
        if offset == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 64 * 1024)
            offset = 0
        } else if offset > 16 * 1024 {
            bytes.removeFirst(offset)
            offset = 0
        }
    }
}
