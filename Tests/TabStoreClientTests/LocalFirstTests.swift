import Foundation
import Testing
@testable import TabStoreClient

/// The local-first client against a real server: the persisted state for an offline cold launch, queued writes
/// shown at once and replaced by the server's answer, one owner per file, shared feeds, the status stream, a
/// direct write retried once.
@Suite("TabStoreClient local-first", .serialized)
struct LocalFirstTests {
    @Test("offline cold launch: the last served customization and layout come from the file, marked from cache")
    func offlineColdLaunch() async throws {
        let file = QueueTests.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await server.makeApp()
            let served = try await app.client(server).apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            var latest = served
            do {
                let queue = try app.client(server).offlineQueue(file: file)
                let online = try await queue.customization()
                #expect(!online.isFromCache && !online.hasPendingWrites && online.value == served && online.lastSynced != nil)
                let layout = try await queue.layout(sizeClass: .regular)
                #expect(!layout.isFromCache && layout.value.hidden.contains(bell))
                // A direct write by any client of this process for this person: the kept state follows it.
                latest = try await app.client(server).apply([.setSidebarVisibility(tab: lights, visibility: .hidden)])
                await queue.close()
            }
            await server.stop()
            let queue = try app.client(server).offlineQueue(file: file)  // a cold launch, offline
            let local = try await queue.customization()
            #expect(local.isFromCache && !local.hasPendingWrites && local.value == latest && local.value.revision == 2 && local.lastSynced != nil)
            let layout = try await queue.layout(sizeClass: .regular)
            #expect(layout.isFromCache && layout.value.hidden.contains(bell))
            await #expect(throws: TabStoreError.self) { try await queue.layout(sizeClass: .compact) }  // never fetched
            #expect(queue.client.status.isOffline)
            await queue.close()
            try server.start()
        }
    }

    @Test("queued writes show at once (pending), then the server's answer replaces them; a refused one goes back")
    func pendingThenReplaced() async throws {
        let file = QueueTests.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await server.makeApp()
            await server.stop()
            let queue = try app.client(server).offlineQueue(file: file)
            var snapshots = await queue.snapshots().makeAsyncIterator()
            #expect(await snapshots.next()?.value.revision == 0)
            try await queue.enqueue([
                .setSidebarVisibility(tab: climate, visibility: .hidden), .setTabOrder(section: categories, tabOrder: [lights, climate]),
            ])
            try await queue.enqueue([.setSidebarVisibility(tab: home, visibility: .hidden)])  // the schema refuses it
            let shown = await snapshots.next()
            #expect(shown?.hasPendingWrites == true && shown?.isFromCache == true && shown?.value[tab: climate].sidebarVisibility == .hidden)
            let offline = try await queue.customization()
            #expect(offline.isFromCache && offline.hasPendingWrites && offline.value.revision == 0)
            #expect(offline.value[tab: climate].sidebarVisibility == .hidden && offline.value[tab: home].sidebarVisibility == .hidden)
            #expect(offline.value.sections[categories]?.tabOrder == [lights, climate])
            #expect(queue.client.status.pendingWrites == 2)

            try server.start()
            let replay = await queue.replay()
            #expect(replay.remaining == 0 && replay.events.count == 2)
            let synced = try await queue.customization()
            #expect(!synced.isFromCache && !synced.hasPendingWrites && synced.value.revision == 1)
            #expect(synced.value[tab: climate].sidebarVisibility == .hidden && synced.value[tab: home].sidebarVisibility == .automatic)
            #expect(synced.value == (try await app.client(server).customization()))
            #expect(queue.client.status.pendingWrites == 0 && !queue.client.status.isOffline)
            await queue.close()
        }
    }

    @Test("two opens of one file in a process share one queue; another process holding the file is refused, and sees it held")
    func oneOwnerPerFile() async throws {
        let file = QueueTests.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await server.makeApp()
            await server.stop()
            let first = try app.client(server).offlineQueue(file: file)
            let second = try app.client(server).offlineQueue(file: file)  // a second window
            #expect(first === second)
            try await first.enqueue([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            try await second.enqueue([.setSidebarVisibility(tab: climate, visibility: .hidden)])
            #expect(await first.pending.count == 2)
            #expect(try QueueFile.load(file, appId: "com.myApp", userId: "alice").writes.count == 2)
            #expect(throws: OfflineQueueError.self) { try app.client(server, user: "bob").offlineQueue(file: file) }
            // Another process while this one holds the file: its non-blocking flock fails (exit 3).
            #expect(try Self.python(["hold", file.path + ".lock"]) == 3)
            await first.close()
            // Another process holds it now: this one is refused with a clear error until it lets go.
            let holder = try Self.pythonHolding(file.path + ".lock")
            #expect {
                try app.client(server).offlineQueue(file: file)
            } throws: { error in
                if case OfflineQueueError.lockedByAnotherProcess = error { return true }
                return false
            }
            try holder.input.fileHandleForWriting.close()
            holder.process.waitUntilExit()
            let reopened = try app.client(server).offlineQueue(file: file)
            #expect(await reopened.pending.count == 2)
            await reopened.close()
            try server.start()
        }
    }

    static let lockScript = """
        import fcntl, os, sys, time
        fd = os.open(sys.argv[2], os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(3)
        print("held", flush=True)
        sys.stdin.read()  # until this process's stdin closes (a signal may be blocked in a test process's children)
        """

    /// Runs the lock script in another process; its exit status.
    static func python(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", lockScript] + arguments
        process.standardInput = FileHandle.nullDevice  // a lock taken by mistake is let go at once
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Another process holding the lock until `input` is closed (returned once it printed that it holds it).
    static func pythonHolding(_ path: String) throws -> (process: Process, input: Pipe) {
        let process = Process()
        let output = Pipe(), input = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", lockScript, "hold", path]
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        _ = output.fileHandleForReading.availableData  // "held"
        return (process, input)
    }

    @Test("one feed value iterated from three tasks: each its own iterator, each gets every change, no trap")
    func sharedFeed() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let client = app.client(server)
            let feed = client.updates()
            let inbox = Inbox<Int>()
            let readers = (0..<3).map { _ in
                Task {
                    for try await customization in feed {
                        await inbox.push(customization.revision)
                        if customization.revision == 1 { return }
                    }
                }
            }
            _ = try await inbox.wait { $0.filter { $0 == 0 }.count == 3 }
            try await client.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            _ = try await inbox.wait { $0.filter { $0 == 1 }.count == 3 }
            for reader in readers { try await reader.value }
        }
    }

    @Test("status: online, offline with a reason when the server stops (the feed sees it), online again when it is back")
    func statusTransitions() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let client = app.client(server)
            let inbox = Inbox<SyncStatus>()
            let watcher = Task { for await status in client.statusUpdates() { await inbox.push(status) } }
            let follower = Task { for try await _ in client.updates() {} }
            _ = try await inbox.wait { $0.last?.connectivity == .online && $0.last?.lastSynced != nil }
            await server.stop()
            let offline = try await inbox.wait { $0.contains { if case .offline = $0.connectivity { true } else { false } } }
            #expect(offline.contains { $0.lastError != nil })
            try server.start()
            let back = try await inbox.wait(timeout: 120) { values in
                guard let index = values.lastIndex(where: \.isOffline) else { return false }
                return values[index...].contains { $0.connectivity == .online }
            }
            #expect(back.last?.connectivity == .online)
            follower.cancel()
            watcher.cancel()
        }
    }

    @Test("a direct write whose answer was lost is retried with the same key and applied once")
    func retriedDirectWrite() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let transport = RecordingTransport()
            let client = app.client(server, transport: transport)
            transport.loseAnswers(1)
            let stored = try await client.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)], idempotencyKey: "key-1")
            #expect(stored.revision == 1 && stored[tab: bell].sidebarVisibility == .hidden)
            let writes = transport.exchanges.filter { $0.method == "PATCH" }
            #expect(writes.count == 2 && writes.allSatisfy { $0.requestHeaders["idempotency-key"] == "key-1" })
            #expect(writes.last?.responseHeaders["idempotent-replayed"] == "true")
            #expect(try await client.history().items.count == 1)
            // With `ifMatch`: the repeat is answered as the first attempt was, not as a conflict with its own write.
            transport.loseAnswers(1)
            let guarded = try await client.apply([.setSidebarVisibility(tab: climate, visibility: .hidden)], ifMatch: stored)
            #expect(guarded.revision == 2 && guarded[tab: climate].sidebarVisibility == .hidden)
            #expect(try await client.history().items.count == 2)
            let reset = try await client.reset()
            #expect(reset.revision == 3 && reset.tabs.isEmpty)
            let generated = transport.exchanges.filter { $0.method == "DELETE" }.first?.requestHeaders["idempotency-key"]
            #expect(generated?.isEmpty == false)
        }
    }
}
