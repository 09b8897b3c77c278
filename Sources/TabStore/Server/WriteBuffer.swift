import Glibc
import TabStoreHTTP
import TabStoreSupport

/// A connection's pending output: encoded bytes not yet accepted by the socket, written in order, a
/// partial write resuming where the last one stopped.
///
/// Whole responses are always taken (their size is bounded by the handlers). A stream adds a step only once
/// the buffer is empty (`EventLoop.pollStream`), plus its last event; `streamLimit` is the safety net behind
/// that (`isFull`), so a long-lived response cannot hold unbounded memory whatever its source does. When a
/// flush drains it, the storage is kept for the next response unless it grew past `retainedCapacity`.
struct WriteBuffer {
    enum FlushResult: Equatable {
        /// Everything was written.
        case drained
        /// The socket took what it could; wait until it is writable.
        case pending
        /// The write failed (the peer is gone): close.
        case failed
    }

    static let retainedCapacity = 64 * 1024
    /// Pending bytes past which a stream's client counts as not keeping up.
    static let streamLimit = 1 << 20
    private var bytes: [UInt8] = []
    private var offset = 0

    var hasPending: Bool { offset < bytes.count }
    var pendingCount: Int { bytes.count - offset }
    /// More is pending than a stream may add to.
    var isFull: Bool { pendingCount > Self.streamLimit }

    /// Appends through an encoder that writes into the buffer's storage directly (no intermediate copy).
    mutating func append(_ encode: (inout [UInt8]) -> Void) {
        encode(&bytes)
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// One chunk of a streamed body: framed as an HTTP/1.1 chunk (size in hex, CRLF, data, CRLF) when
    /// `chunked`, raw otherwise. Never call it with no bytes: a chunk of size 0 ends the stream.
    mutating func appendChunk(_ chunk: [UInt8], chunked: Bool) {
        guard chunked else {
            bytes.append(contentsOf: chunk)
            return
        }
        bytes.append(contentsOf: String(chunk.count, radix: 16).utf8)
        append("\r\n")
        bytes.append(contentsOf: chunk)
        append("\r\n")
    }

    /// Writes to `fd` until everything is written or the socket would block.
    mutating func flush(to fd: Int32) -> FlushResult {
        flush { buffer throws(SystemError) in
            try Syscall.nonBlocking("write") { Glibc.write(fd, buffer.baseAddress, buffer.count) }
        }
    }

    /// Writes through `write`, which returns how many bytes it took, nil when it would block, or throws.
    mutating func flush(_ write: (UnsafeRawBufferPointer) throws(SystemError) -> Int?) -> FlushResult {
        while offset < bytes.count {
            let written: Int?
            do {
                written = try bytes.withUnsafeBytes { buffer throws(SystemError) in
                    try write(UnsafeRawBufferPointer(rebasing: buffer[offset...]))
                }
            } catch {
                return .failed
            }
            guard let written else { return .pending }
            offset += written
        }
        bytes.removeAll(keepingCapacity: bytes.capacity <= Self.retainedCapacity)
        offset = 0
        return .drained
    }
}
