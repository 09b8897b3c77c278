import Foundation
import Glibc
import Testing
@testable import TabStoreServer
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("The event loop's parts: write buffer and epoll selector")
struct WriteBufferAndSelectorTests {
    @Test("partial writes resume where they stopped; drained once all is taken; full past the stream limit; a failed write says so")
    func partialWrites() {
        var buffer = WriteBuffer()
        buffer.append("HTTP/1.1 100 Continue\r\n\r\n")
        var written: [UInt8] = []
        var budget = 10
        let takeTen = { (bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int? in
            guard budget > 0 else { return nil }
            let count = min(budget, bytes.count)
            budget -= count
            written += bytes.prefix(count)
            return count
        }
        #expect(buffer.flush(takeTen) == .pending)
        #expect(buffer.pendingCount == 15)
        #expect(!buffer.isFull)
        budget = 10
        #expect(buffer.flush(takeTen) == .pending)
        budget = 100
        #expect(buffer.flush(takeTen) == .drained)
        #expect(!buffer.hasPending)
        #expect(String(decoding: written, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        buffer.append { $0 += [UInt8](repeating: 0x78, count: WriteBuffer.streamLimit + 1) }
        #expect(buffer.isFull)
        #expect(buffer.flush { (_: UnsafeRawBufferPointer) throws(SystemError) -> Int? in throw SystemError(call: "write", errno: EPIPE) } == .failed)
    }

    @Test("stream chunks: framed in hex when chunked, raw when the close delimits the body")
    func chunkFraming() {
        var buffer = WriteBuffer()
        buffer.appendChunk(Array(repeating: UInt8(ascii: "a"), count: 26), chunked: true)
        buffer.appendChunk(Array("raw".utf8), chunked: false)
        var written: [UInt8] = []
        #expect(buffer.flush { (bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int? in
            written += bytes
            return bytes.count
        } == .drained)
        #expect(String(decoding: written, as: UTF8.self) == "1a\r\n" + String(repeating: "a", count: 26) + "\r\nraw")
    }

    @Test("registered descriptors come back with their token and readiness; wake() from another thread ends a wait")
    func selector() throws {
        let selector = try EpollSelector(wakeToken: 1)
        defer { selector.close() }
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { fds.forEach { Glibc.close($0) } }
        #expect(selector.register(fds[0], mask: EpollSelector.mask(.read), token: 42))
        #expect(ready(selector, 0) == 0)
        _ = Glibc.write(fds[1], "x", 1)
        #expect(ready(selector, 1000) == 1)
        #expect(selector.token(at: 0) == 42)
        #expect(selector.readiness(at: 0).readable)
        #expect(!selector.readiness(at: 0).writable)
        selector.modify(fds[0], mask: EpollSelector.mask([.write]), token: 43)
        #expect(ready(selector, 1000) == 1)
        #expect(selector.token(at: 0) == 43)
        #expect(selector.readiness(at: 0).writable)
        selector.deregister(fds[0])
        #expect(ready(selector, 0) == 0)
        let waker = Thread { usleep(20_000); selector.wake() }
        waker.start()
        #expect(ready(selector, 5000) == 1)
        #expect(selector.token(at: 0) == 1)
        selector.consumeWake()
        #expect(ready(selector, 0) == 0)
    }

    /// How many events a wait returned; nil when it failed.
    private func ready(_ selector: EpollSelector, _ timeout: Int32) -> Int? {
        if case .success(let count) = selector.wait(timeout: timeout) { return count }
        return nil
    }
}
