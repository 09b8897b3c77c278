import Dispatch
import Foundation
import Testing
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// Issue 27, SQLite: a disk that stops answering holds the writer thread inside a commit. Writes behind it get
/// 503 `database-unavailable` once their bound passes (never written), `/readyz` says so, and everything serves
/// again by itself once the writer moves. The stuck commit is made here by a write that waits on a semaphore.
@Suite("SQLite writer stuck: bounded answers")
struct StuckWriterTests {
    /// Holds the writer thread until `release`, as a commit stuck in `fsync` would.
    final class StuckCommit: Sendable {
        let gate = DispatchSemaphore(value: 0)
        let running = Locked(false)
        let late = Locked(false)
        let answer = Locked<Result<Void, Error>?>(nil)

        init(_ store: SQLiteStore) {
            Task { [self] in
                let result: Result<Void, Error>
                do {
                    try await store.writer.write({ [self] _ in
                        running.withLock { $0 = true }
                        gate.wait()
                    }, late: { [self] in late.withLock { $0 = true } })
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                answer.withLock { $0 = result }
            }
        }

        func release() { gate.signal() }
    }

    @Test("writes behind a stuck commit get 503 database-unavailable with Retry-After and are not written; /readyz 503; then 200 by itself")
    func stuckWriter() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell"))).status == 200)
            let store = try #require(live.service.store as? SQLiteStore)
            // Made with headroom for a loaded machine; the bound under test from here on.
            store.setWriteTimeout(1)
            let stuck = StuckCommit(store)
            var released = false
            defer { if !released { stuck.release() } }
            try await waitUntil { stuck.running.withLock { $0 } }
            let refused = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            #expect(refused.status == 503 && refused.problemType == "urn:tabstore:problem:database-unavailable", "\(refused.status) \(refused.text)")
            #expect(refused.header("Retry-After") != nil)
            #expect(refused.text.contains("the write was not made"), "\(refused.text)")
            let ready = try await live.send(.get("/readyz"))
            #expect(ready.status == 503 && ready.header("Retry-After") != nil, "\(ready.status) \(ready.text)")
            // The stuck commit's own caller had its answer too (its bound passed while the writer ran it).
            try await waitUntil { stuck.answer.withLock { $0 } != nil }
            #expect(throws: StorageError.self) { try stuck.answer.withLock { $0 }?.get() }
            stuck.release()
            released = true
            // It committed after all, and says so: the API hears of it as of another process's commit.
            try await waitUntil { stuck.late.withLock { $0 } }
            var readyAgain = 0
            for _ in 0..<100 where readyAgain != 200 {
                readyAgain = try await live.send(.get("/readyz")).status
                if readyAgain != 200 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(readyAgain == 200)
            store.setWriteTimeout(30)
            // The refused PATCH was dropped from the queue, never written: the next one is revision 2.
            let after = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            #expect(after.status == 200 && after.revision == 2, "\(after.status) \(after.text)")
            let history = try await live.send(.get(creds.customization + "/history").bearer(creds.userToken))
            guard case .array(let items)? = history.field("items") else { Issue.record("no history: \(history.text)"); return }
            #expect(history.status == 200 && items.count == 2, "\(history.text)")
        }
    }
}

extension StuckWriterTests {
    /// Found by an attack: a keyed write answered 503 while the writer ran it ("it may still be made") did commit,
    /// and its retry with the same Idempotency-Key must get the first answer again, never be applied twice.
    /// The bound's passing is made by `expireRunning` at a chosen moment, so nothing here depends on speed.
    @Test("a keyed write answered 503 while the writer ran it commits; its retry is replayed, not applied again")
    func overrunWriteIsReplayed() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell"))).status == 200)
            let store = try #require(live.service.store as? SQLiteStore)
            // The writer is held by `first`; the keyed PATCH queues behind it, then `second` behind that, so once
            // `first` lets go the PATCH and `second` share a batch: the PATCH runs, and `second` holds the batch open.
            let first = StuckCommit(store)
            var releasedFirst = false
            defer { if !releasedFirst { first.release() } }
            try await waitUntil { first.running.withLock { $0 } }
            let patch = TestRequest.patch(creds.customization).bearer(creds.userToken).header("Idempotency-Key", "overrun-1")
                .json(Sync.hide("climate"))
            let refused = Task { try await live.send(patch) }
            try await waitUntil { store.writer.queuedCount == 1 }
            let second = StuckCommit(store)
            var releasedSecond = false
            defer { if !releasedSecond { second.release() } }
            try await waitUntil { store.writer.queuedCount == 2 }
            first.release()
            releasedFirst = true
            try await waitUntil { second.running.withLock { $0 } }
            // The bound passes while the writer runs the batch the PATCH is in.
            store.writer.expireRunning()
            let answer = try await refused.value
            #expect(answer.status == 503 && answer.problemType == "urn:tabstore:problem:database-unavailable", "\(answer.status) \(answer.text)")
            // The client is told that it may have been made, and how to find out.
            #expect(answer.text.contains("may still be made: retry with the same Idempotency-Key"), "\(answer.text)")
            // Retried at once, while the writer still runs the first attempt: the retry waits for it.
            let retried = Task { try await live.send(patch) }
            try await waitUntil { store.writer.queuedCount == 1 }
            second.release()
            releasedSecond = true
            // The PATCH committed as revision 2; its retry gets that answer again.
            let retry = try await retried.value
            #expect(retry.status == 200 && retry.revision == 2, "\(retry.status) \(retry.text)")
            #expect(retry.header("Idempotent-Replayed") == "true", "\(retry.headers)")
            let read = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(read.revision == 2, "\(read.text)")
            // A PATCH without a key is the next revision.
            let next = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("lights")))
            #expect(next.status == 200 && next.revision == 3, "\(next.status) \(next.text)")
        }
    }
}
