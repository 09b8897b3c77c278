import Foundation
import Testing
@testable import TabStoreClient

/// The offline queue against a real server: writes queued while it is down survive the client, replay in order
/// exactly once (also when an answer was lost), and a refusal is reported and dropped.
@Suite("TabStoreClient offline queue", .serialized)
struct QueueTests {
    static func queueFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tabstore-queue-\(UUID().uuidString)/queue.json")
    }

    static let edits: [[TabOperation]] = [
        [.setSidebarVisibility(tab: bell, visibility: .hidden)],
        [.setSidebarVisibility(tab: climate, visibility: .hidden)],
        [.setTabOrder(section: categories, tabOrder: [lights, climate])],
    ]

    @Test("queued while the server is down, the client dropped and reopened from its file, replayed in order once each")
    func offlineAcrossRestart() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await server.makeApp()
            await server.stop()
            var keys: [String] = []
            do {
                let queue = try app.client(server).offlineQueue(file: file)
                for edit in Self.edits { keys.append(try await queue.enqueue(edit).idempotencyKey) }
                let attempt = await queue.replay()
                #expect(attempt.remaining == 3 && attempt.events.isEmpty)
                #expect((attempt.stoppedBy as? TabStoreError)?.isTransient == true)
            }  // the client and its queue are gone, as when the app is killed
            try server.start()
            let queue = try app.client(server).offlineQueue(file: file)
            #expect(await queue.pending.map(\.idempotencyKey) == keys && Set(keys).count == 3)
            #expect(await queue.pending.map(\.operations) == Self.edits)
            let replay = await queue.replay()
            #expect(replay.remaining == 0 && replay.stoppedBy == nil && replay.events.count == 3)
            let client = app.client(server)
            let now = try await client.customization()
            #expect(now.revision == 3 && now.tabs.keys.sorted() == [bell, climate] && now.sections[categories]?.tabOrder == [lights, climate])
            let history = try await client.history()
            #expect(history.items.map(\.operations) == Self.edits.reversed().map { Optional($0) })
            #expect(await queue.replay().events.isEmpty)
            #expect(try await client.offlineQueue(file: file).pending.isEmpty)
        }
    }

    @Test("an answer lost after the server applied the write: the replay is answered again, applied once")
    func lostAnswer() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await server.makeApp()
            let lossy = RecordingTransport()
            let queue = try app.client(server, transport: lossy).offlineQueue(file: file)
            let write = try await queue.enqueue(Self.edits[0])
            lossy.loseAnswers(1)
            let lost = await queue.replay()
            #expect(lost.remaining == 1 && (lost.stoppedBy as? TabStoreError)?.isTransient == true)
            #expect(lossy.statuses == [200])  // the server answered; the client never saw it
            let observer = app.client(server)
            #expect(try await observer.customization().revision == 1)
            await queue.close()  // as when the app is killed: the file's lock is released

            let transport = RecordingTransport()
            let reopened = try app.client(server, transport: transport).offlineQueue(file: file)
            #expect(await reopened.pending.map(\.idempotencyKey) == [write.idempotencyKey])
            let replay = await reopened.replay()
            #expect(replay.remaining == 0 && replay.events.count == 1)
            guard case .applied(let applied, let customization)? = replay.events.first else {
                Issue.record("not applied: \(replay.events)")
                return
            }
            #expect(applied.idempotencyKey == write.idempotencyKey && customization?.revision == 1)
            let exchange = try #require(transport.exchanges.last)
            #expect(exchange.requestHeaders["idempotency-key"] == write.idempotencyKey)
            #expect(exchange.responseHeaders["idempotent-replayed"] == "true")
            #expect(try await observer.customization().revision == 1)
            #expect(try await observer.history().items.count == 1)
        }
    }

    @Test("a refused write is reported with its rule code and dropped; the rest goes on")
    func refusal() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await server.makeApp()
            let queue = try app.client(server).offlineQueue(file: file)
            let refused = try await queue.enqueue([.setSidebarVisibility(tab: home, visibility: .hidden)])
            try await queue.enqueue(Self.edits[0])
            let replay = await queue.replay()
            #expect(replay.remaining == 0 && replay.events.count == 2)
            guard case .refused(let write, let error)? = replay.events.first, case .applied? = replay.events.last else {
                Issue.record("unexpected: \(replay.events)")
                return
            }
            #expect(write.idempotencyKey == refused.idempotencyKey && error.problem?.codes == [.notHideable])
            var reported = queue.events.makeAsyncIterator()
            guard case .refused(let first, _)? = await reported.next() else {
                Issue.record("the refusal was not reported on events")
                return
            }
            #expect(first.idempotencyKey == refused.idempotencyKey)
            #expect(try await app.client(server).offlineQueue(file: file).pending.isEmpty)
            #expect(try await app.client(server).customization().revision == 1)
        }
    }

    @Test("started, the queue retries with backoff while the server is down and settles once it is back")
    func backoff() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await server.makeApp()
            await server.stop()
            let transport = RecordingTransport()
            let queue = try app.client(server, transport: transport).offlineQueue(file: file)
            let settled = Inbox<String>()
            let reader = Task {
                for await event in queue.events {
                    if case .applied(let write, _) = event { await settled.push(write.idempotencyKey) }
                }
            }
            defer { reader.cancel() }
            await queue.start()
            let write = try await queue.enqueue(Self.edits[0])
            // Wait for two failed attempts before the server comes back (the backoff at work, not a timed guess).
            for _ in 0..<200 where transport.statuses.count < 2 { try await Task.sleep(nanoseconds: 10_000_000) }
            #expect(transport.statuses.count >= 2 && transport.statuses.allSatisfy { $0 == nil })
            try server.start()
            #expect(try await settled.wait { $0.contains(write.idempotencyKey) } == [write.idempotencyKey])
            #expect(await queue.pending.isEmpty)
            #expect(try await app.client(server).customization().revision == 1)
            await queue.stop()
        }
    }

    @Test("a queue file of another person is refused, a damaged one is reported and left alone")
    func foreignFile() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let base = URL(string: "http://127.0.0.1:9")!
        let alice = TabStoreClient(baseURL: base, appId: "com.myApp", userId: "alice") { _ in "t" }
        try await alice.offlineQueue(file: file).enqueue(Self.edits[0])
        let bob = TabStoreClient(baseURL: base, appId: "com.myApp", userId: "bob") { _ in "t" }
        #expect(throws: OfflineQueueError.self) { try bob.offlineQueue(file: file) }
        try Data("{not json".utf8).write(to: file)
        #expect(throws: OfflineQueueError.self) { try alice.offlineQueue(file: file) }
        #expect(try Data(contentsOf: file) == Data("{not json".utf8))
    }
}
