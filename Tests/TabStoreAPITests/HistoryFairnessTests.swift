import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreSupport
@testable import TabStore
import TabStoreTestSupport

/// Issue 27: one user's history reads must not slow everyone. One read per user at a time (a few wait, the rest
/// get 429), a few in the store at once over all users, and rendered pages kept until the user's revision changes.
@Suite("History reads: admission and the page cache")
struct HistoryFairnessTests {
    /// Holds every read that reaches its slot until `open`.
    final class Gate: Sendable {
        private let state = Locked<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

        func pass() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let open = state.withLock { state -> Bool in
                    if !state.open { state.waiting.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }

        func open() {
            let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    /// Waits (yielding, no clock) until `condition` holds; records an issue after many rounds.
    static func eventually(_ what: String, _ condition: () -> Bool) async {
        for _ in 0..<200_000 where !condition() { await Task.yield() }
        #expect(condition(), "never: \(what)")
    }

    static func key(_ app: String, _ user: String) -> UserKey { UserKey(appId: Identifier(app), userId: Identifier(user)) }

    @Test(
        "twelve reads of one user at once: one in the store, four wait their turn, seven get 429 with Retry-After; the waiting ones then answer from the cache"
    )
    func oneUserIsAdmittedOneAtATime() async throws {
        let gate = Gate()
        try await withInProcessAPI(configure: { $0.concurrentHistoryReads = 4; $0.historyReadPause = { await gate.pass() } }) { api in
            let creds = try await Credentials.register(on: api)
            for index in 0..<5 {
                _ = await api.send(
                    .patch(creds.customization).bearer(creds.userToken).json(Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")))
            }
            let reads = api.api.historyReads
            let user = Self.key(creds.app.id, Credentials.user)
            let history = TestRequest.get(creds.customization + "/history?limit=100").bearer(creds.userToken)
            let responses = await withTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<12 { group.addTask { await api.send(history) } }
                var refused: [TestResponse] = []
                var answered: [TestResponse] = []
                // The seven refusals come back while the first read is held at the gate.
                while refused.count < 7, let response = await group.next() {
                    if response.status == 429 { refused.append(response) } else { answered.append(response) }
                }
                await Self.eventually("one read in the store and four waiting") { reads.running == 1 && reads.waiting(user) == 4 }
                gate.open()
                for await response in group { answered.append(response) }
                return (refused, answered)
            }
            #expect(responses.0.count == 7 && responses.1.count == 5)
            for refused in responses.0 {
                #expect(refused.problemType == "urn:tabstore:problem:too-many-history-reads" && refused.header("Retry-After") == "1")
                #expect(refused.header("Content-Type") == "application/problem+json")
            }
            for answered in responses.1 { #expect(answered.status == 200 && answered.body == responses.1[0].body) }
            #expect(HistoryTests.revisions(responses.1[0]) == [5, 4, 3, 2, 1])
            #expect(reads.peakRunning == 1, "one user's reads take turns, whatever the server-wide bound")
            let pages = api.api.historyPages.statistics
            #expect(pages.misses == 1 && pages.hits == 4, "the reads that waited found the first one's page")
        }
    }

    @Test("reads of three users at once hold at most the server-wide bound of slots; the others wait (first come) and all answer")
    func serverWideBound() async throws {
        let gate = Gate()
        try await withInProcessAPI(configure: { $0.concurrentHistoryReads = 1; $0.historyReadPause = { await gate.pass() } }) { api in
            let creds = try await Credentials.register(on: api)
            let users = ["u1", "u2", "u3"]
            for user in users {
                let put = await api.send(.patch(creds.app.userPath(user) + "/customization").bearer(creds.app.token(for: user))
                    .json(Sync.visibility("bell", "hidden")))
                #expect(put.status == 200)
            }
            let reads = api.api.historyReads
            let statuses = await withTaskGroup(of: Int.self) { group in
                for user in users {
                    group.addTask {
                        await api.send(.get(creds.app.userPath(user) + "/customization/history").bearer(creds.app.token(for: user))).status
                    }
                }
                await Self.eventually("one in its slot, two queued") { reads.running == 1 && reads.queued == 2 }
                gate.open()
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == [200, 200, 200])
            #expect(reads.peakRunning == 1)
        }
    }

    @Test(
        "a cached page is the uncached page byte for byte; a write, an erase and another page each make a new one",
        arguments: PostgresTestCluster.backends)
    func cachedPagesFollowTheRevision(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            for index in 0..<3 {
                _ = try await live.send(
                    .patch(creds.customization).bearer(creds.userToken).json(Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")))
            }
            let pages = live.service.api.historyPages
            let history = creds.customization + "/history?limit=2"
            let first = try await live.send(.get(history).bearer(creds.userToken))
            let again = try await live.send(.get(history).bearer(creds.userToken))
            #expect(first.status == 200 && again.body == first.body && HistoryTests.revisions(first) == [3, 2])
            #expect(pages.statistics.hits == 1 && pages.statistics.misses == 1)
            // Another page is another entry.
            let older = try await live.send(.get(creds.customization + "/history?limit=2&before=3").bearer(creds.userToken))
            #expect(HistoryTests.revisions(older) == [2, 1] && older.body != first.body)
            // A write: the next read is rendered again and lists it.
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.visibility("bell", "visible")))
            let written = try await live.send(.get(history).bearer(creds.userToken))
            #expect(HistoryTests.revisions(written) == [4, 3])
            // An erase: nothing is listed, and the revisions after it are new ones.
            let erase = try await live.send(.delete(creds.app.userPath(Credentials.user)).bearer(live.admin))
            #expect(erase.status == 204)
            #expect(HistoryTests.revisions(try await live.send(.get(history).bearer(creds.userToken))).isEmpty)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.visibility("bell", "hidden")))
            #expect(HistoryTests.revisions(try await live.send(.get(history).bearer(creds.userToken))) == [5])
        }
    }

    @Test("the cache changes no page: with it and without it, every page of a history is the same bytes")
    func cacheIsTransparent() async throws {
        var bodies: [[[UInt8]]] = []
        for cacheBytes in [16 << 20, 0] {
            let body = try await withInProcessAPI(configure: { $0.historyPageCacheBytes = cacheBytes }) { api in
                let creds = try await Credentials.register(on: api)
                for index in 0..<6 {
                    _ = await api.send(
                        .patch(creds.customization).bearer(creds.userToken).json(Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")))
                }
                var found: [[UInt8]] = []
                for query in ["", "?limit=2", "?limit=2&before=5", "?schemaVersion=1", "?limit=2"] {
                    let page = await api.send(.get(creds.customization + "/history" + query).bearer(creds.userToken))
                    #expect(page.status == 200)
                    // Timestamps differ between the two runs; everything else must not.
                    found.append(Array(page.text.replacing(/"updatedAt":"[^"]*"/, with: "").utf8))
                }
                return found
            }
            bodies.append(body)
        }
        #expect(bodies[0] == bodies[1])
    }

    @Test("an export holds a slot like a history read; it still answers every revision")
    func exportTakesASlot() async throws {
        let gate = Gate()
        try await withInProcessAPI(configure: { $0.concurrentHistoryReads = 1; $0.historyReadPause = { await gate.pass() } }) { api in
            let creds = try await Credentials.register(on: api)
            _ = await api.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.visibility("bell", "hidden")))
            let reads = api.api.historyReads
            let status = await withTaskGroup(of: Int.self) { group in
                group.addTask { await api.send(.get(creds.app.userPath(Credentials.user) + "/export").bearer(api.admin)).status }
                group.addTask { await api.send(.get(creds.customization + "/history").bearer(creds.userToken)).status }
                await Self.eventually("the export and the history read take turns") { reads.running == 1 && reads.queued == 1 }
                gate.open()
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(status == [200, 200] && reads.peakRunning == 1)
        }
    }

    @Test("past its bytes a second, a user's next read is 429 with Retry-After until the debt is paid back; other users read on")
    func byteBudget() async throws {
        let base = Credentials.now()
        let passed = Locked(0)
        try await withInProcessAPI(configure: { $0.historyBytesPerUserPerSecond = 1_000; $0.clock = { base + passed.withLock { $0 } } }) { api in
            let creds = try await Credentials.register(on: api)
            // The server's clock stands at `base` while the test runs (however long a loaded machine takes),
            // so the tokens are issued then: one issued later would be past the 30 s leeway on `iat`.
            let alice = creds.app.token(for: Credentials.user, issuedAt: base)
            let bob = creds.app.token(for: "bob", issuedAt: base)
            for index in 0..<6 {
                _ = await api.send(.patch(creds.customization).bearer(alice).json(Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")))
            }
            _ = await api.send(.patch(creds.app.userPath("bob") + "/customization").bearer(bob).json(Sync.visibility("bell", "hidden")))
            let history = TestRequest.get(creds.customization + "/history").bearer(alice)
            let first = await api.send(history)
            #expect(first.status == 200 && first.body.count > 1_000, "one page may overdraw the budget")
            let second = await api.send(history)
            #expect(second.status == 429 && second.problemType == "urn:tabstore:problem:too-many-history-reads")
            let owed = first.body.count - 1_000
            #expect(second.header("Retry-After") == String(max(1, (owed + 999) / 1_000)))
            let bobs = await api.send(.get(creds.app.userPath("bob") + "/customization/history").bearer(bob))
            #expect(bobs.status == 200, "another user's budget is their own")
            passed.withLock { $0 += 60 }
            let later = await api.send(history)
            #expect(later.status == 200 && later.body == first.body)
        }
    }

    @Test(
        "pages of large revisions stop past 1 MiB, the store reading only what a page shows, and walking them lists every revision once",
        arguments: PostgresTestCluster.backends)
    func largePagesWalkEveryRevision(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live, schema: Seeds.apiExample)
            for revision in 1...25 {
                let entries = (0..<(550 + revision)).map {
                    #""com.myApp.playlist.\#(String(repeating: "x", count: 16))-\#($0)": {"sidebarVisibility": "hidden"}"#
                }
                let put = try await live.send(
                    .put(creds.customization).bearer(creds.userToken).json("{\"tabs\": {\(entries.joined(separator: ","))}}"))
                #expect(put.status == 200)
            }
            let rows = try await live.service.store.history(appId: creds.app.id, userId: Credentials.user, before: nil, limit: 26, keep: 100,
                                                            maxBytes: ApplicationServices.maxHistoryPageBytes)
            let sizes = rows.map { $0.document.count + ($0.operations?.count ?? 0) }
            #expect(rows.count > 2 && rows.count < 25, "the store stopped early")
            #expect(
                sizes.dropLast().reduce(0, +) <= ApplicationServices.maxHistoryPageBytes
                    && sizes.reduce(0, +) > ApplicationServices.maxHistoryPageBytes,
                    "every row a page shows, and the one after it")
            var listed: [Int] = []
            var query = "?limit=100"
            for _ in 0..<25 {
                let page = try await live.send(.get(creds.customization + "/history" + query).bearer(creds.userToken))
                listed += HistoryTests.revisions(page)
                guard case .integer(let next)? = page.field("nextBefore") else { break }
                query = "?limit=100&before=\(next)"
            }
            #expect(listed == Array((1...25).reversed()))
        }
    }

    @Test("--history-reads and --history-cache-bytes parse from flags and the environment")
    func options() throws {
        #expect(try ServiceOptions.parse(["--history-reads", "3"], environment: [:]).0.historyReads == 3)
        #expect(try ServiceOptions.parse([], environment: ["TAB_SERVER_HISTORY_CACHE_BYTES": "0"]).0.historyCacheBytes == 0)
        #expect(throws: ServiceOptions.Invalid.self) { try ServiceOptions.parse(["--history-reads", "0"], environment: [:]) }
        #expect(ServiceOptions().historyReads >= 1)
    }
}
