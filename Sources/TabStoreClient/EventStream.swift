import Foundation

/// One server-sent event (WHATWG HTML "server-sent events").
struct ServerSentEvent: Sendable, Hashable {
    var event: String = "message"
    var id: String?
    var data: String = ""
    var retry: Int?
}

/// Splits a `text/event-stream` body into events as its bytes arrive in pieces of any size: lines end with LF,
/// CRLF or CR (also split across pieces), comments are skipped, an event is dispatched at a blank line.
struct EventStreamParser: Sendable {
    private var line: [UInt8] = []
    private var afterCR = false
    private var pending = ServerSentEvent()
    private var hasData = false
    private var dataLines: [String] = []
    private var started = false
    /// The last `retry:` the stream gave (milliseconds).
    private(set) var retry: Int?

    /// The events completed by `bytes`.
    mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [ServerSentEvent] where Bytes.Element == UInt8 {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0A: finishLine(&events)
            case 0x0D: finishLine(&events); afterCR = true
            default: line.append(byte)
            }
        }
        return events
    }

    private mutating func finishLine(_ events: inout [ServerSentEvent]) {
        defer { line.removeAll(keepingCapacity: true) }
        var bytes = line[...]
        if !started {
            started = true
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }  // a byte-order mark
        }
        if bytes.isEmpty {
            if hasData {
                pending.data = dataLines.joined(separator: "\n")
                events.append(pending)
            }
            let id = pending.id
            pending = ServerSentEvent()
            pending.id = id  // the last event id carries over, as in EventSource
            hasData = false
            dataLines = []
            return
        }
        if bytes.first == UInt8(ascii: ":") { return }
        let field: String
        var value: Substring
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: bytes[..<colon], as: UTF8.self)
            var rest = bytes[bytes.index(after: colon)...]
            if rest.first == UInt8(ascii: " ") { rest = rest.dropFirst() }
            value = Substring(String(decoding: rest, as: UTF8.self))
        } else {
            field = String(decoding: bytes, as: UTF8.self)
            value = ""
        }
        switch field {
        case "event": pending.event = String(value)
        case "data":
            dataLines.append(String(value))
            hasData = true
        case "id" where !value.contains("\0"): pending.id = String(value)
        case "retry":
            if let milliseconds = Int(value), milliseconds >= 0 { retry = milliseconds; pending.retry = milliseconds }
        default: value = ""
        }
    }
}
