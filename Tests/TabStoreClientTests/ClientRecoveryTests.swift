import Foundation
import Testing
@testable import TabStoreClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an app developer's trial of the client found, kept fixed: an empty queue file opens as a new queue, a
/// queued write refused with 403 (a token for another user) stays queued, a `Retry-After` is waited out, and
/// the app's own cancellation never says the connection went offline.
@Suite("TabStoreClient recovers: empty queue files, refused queued writes, Retry-After, cancellation (without a server)")
struct ClientRecoveryTests {
    @Test("an empty queue file (created, never written) opens as a new, empty queue")
    func emptyQueueFile() async throws {
        let file = SchemaVersionStubTests.queueFile()
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data()))
        let client = SchemaVersionStubTests.client(
            StubTransport { _ in StubTransport.customization(revision: 1, schemaVersion: 1) }, schemaVersion: 1)
        let queue = try client.offlineQueue(file: file)
        #expect(await queue.pending.isEmpty)
        await queue.close()
    }

    @Test("a queued write answered 403 (the token is for another user) stays queued for the next token; a 422 is dropped")
    func forbiddenKeepsTheWrite() async throws {
        let transport = StubTransport { _ in StubTransport.problem(403, "forbidden") }
        let client = SchemaVersionStubTests.client(transport, schemaVersion: 1)
        let queue = try client.offlineQueue(file: SchemaVersionStubTests.queueFile())
        _ = try await queue.enqueue([.setSidebarVisibility(tab: "com.myApp.bell", visibility: .hidden)])
        let refused = await queue.replay()
        #expect(refused.remaining == 1 && refused.events.isEmpty)
        transport.answer { _ in StubTransport.problem(422, "rule-violation") }
        let dropped = await queue.replay()
        #expect(dropped.remaining == 0 && dropped.events.count == 1)
        await queue.close()
    }

    @Test("a direct write waits out a short Retry-After and applies once; a long one is thrown at once")
    func retryAfter() async throws {
        let calls = Counter()
        let transport = StubTransport { _ in
            calls.next() == 0
                ? TransportResponse(status: 429, headers: ["Retry-After": "1", "Content-Type": "application/problem+json"], body: Data())
                : StubTransport.customization(revision: 2, schemaVersion: 1)
        }
        let client = SchemaVersionStubTests.client(transport, schemaVersion: 1)
        let started = Date()
        let stored = try await client.apply([.setSidebarVisibility(tab: "com.myApp.bell", visibility: .hidden)])
        #expect(stored.revision == 2 && transport.requests.count == 2)
        #expect(Date().timeIntervalSince(started) >= 0.9)  // an outcome: the second attempt came after the asked wait

        let long = StubTransport { _ in TransportResponse(status: 503, headers: ["Retry-After": "3600"], body: Data()) }
        let impatient = SchemaVersionStubTests.client(long, schemaVersion: 1)
        let error = await thrown { try await impatient.apply([.setSidebarVisibility(tab: "com.myApp.bell", visibility: .hidden)]) }
        #expect((error as? TabStoreError)?.isTransient == true && long.requests.count == 1)
    }

    @Test("cancelling a request is not a network failure: the status stays as it was")
    func cancellationKeepsStatus() async throws {
        let client = SchemaVersionStubTests.client(
            StubTransport { _ in StubTransport.customization(revision: 1, schemaVersion: 1) }, schemaVersion: 1)
        _ = try await client.customization()
        #expect(client.statusHub.current.connectivity == .online)
        client.statusHub.failed(.unreachable(URLError(.cancelled)))
        client.statusHub.failed(.unreachable(CancellationError()))
        #expect(client.statusHub.current.connectivity == .online && client.statusHub.current.lastError == nil)
        client.statusHub.failed(.unreachable(URLError(.cannotConnectToHost)))
        #expect(client.statusHub.current.connectivity != .online)
    }
}

/// A thread-safe counter of calls.
final class Counter: @unchecked Sendable {
    // `lock` guards `value`.
    private let lock = NSLock()
    private var value = 0

    func next() -> Int { lock.withLock { defer { value += 1 }; return value } }
}
