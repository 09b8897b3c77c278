import Foundation
import Testing
@testable import TabStoreClient

/// The change feed through the client: a real stream over `URLSession` (a data delegate, which streams on Linux
/// too), reconnects with `Last-Event-ID`, and fresh tokens when the server says `token-expired`.
@Suite("TabStoreClient live updates", .serialized)
struct UpdatesTests {
    /// Follows `client.updates()` into an inbox until cancelled.
    static func follow(_ client: TabStoreClient, into inbox: Inbox<Customization>) -> Task<Void, any Error> {
        Task { for try await customization in client.updates() { await inbox.push(customization) } }
    }

    @Test("each revision arrives while the stream stays open; across a server restart the final state arrives, nothing twice")
    func acrossRestart() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let transport = RecordingTransport()
            let client = app.client(server, transport: transport)
            let writer = app.client(server)
            let inbox = Inbox<Customization>()
            let follower = Self.follow(client, into: inbox)
            defer { follower.cancel() }
            _ = try await inbox.wait { $0.last?.revision == 0 }
            try await writer.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            _ = try await inbox.wait { $0.last?.revision == 1 }
            #expect(transport.exchanges.filter(\.streamed).count == 1)  // one open stream delivered both

            await server.stop()
            try server.start()
            try await writer.apply([.setSidebarVisibility(tab: climate, visibility: .hidden)])
            try await writer.apply([.setTabOrder(section: categories, tabOrder: [lights, climate])])
            let received = try await inbox.wait { $0.last?.revision == 3 }
            let revisions = received.map(\.revision)
            #expect(revisions == revisions.sorted() && Set(revisions).count == revisions.count, "\(revisions)")
            #expect(received.last == (try await writer.customization()))
            let resumed = transport.exchanges.filter(\.streamed).dropFirst()
            #expect(!resumed.isEmpty && resumed.allSatisfy { $0.requestHeaders["last-event-id"] != nil })
            #expect(resumed.contains { $0.status == 200 && $0.requestHeaders["last-event-id"] == "1.1" })
            // The feed keeps the cache current: a read now is a 304.
            _ = try await client.customization()
            #expect(transport.statuses.last == 304)
        }
    }

    @Test("token-expired: a fresh token from the provider, the stream resumes where it was")
    func tokenExpired() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let calls = Inbox<Bool>()
            let refreshed = Inbox<String>()
            let transport = RecordingTransport()
            // The first token expires within ten seconds (`iat` is whole seconds, and a feed opened at or past `exp` is
            // a 401, so a short one could end before the first stream opened on a loaded machine); the refreshed one lasts.
            let client = app.client(server, transport: transport) { refresh in
                await calls.push(refresh)
                guard refresh else { return app.token(for: "alice", expiresIn: 10) }
                let token = app.token(for: "alice", expiresIn: 3600)
                await refreshed.push("Bearer " + token)
                return token
            }
            let inbox = Inbox<Customization>()
            let follower = Self.follow(client, into: inbox)
            defer { follower.cancel() }
            _ = try await inbox.wait { $0.last?.revision == 0 }
            _ = try await calls.wait { $0.contains(true) }
            try await app.client(server).apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            let seenRevisions = try await inbox.wait { $0.last?.revision == 1 }.map(\.revision)
            #expect(seenRevisions == [0, 1], "\(seenRevisions) \(transport.exchanges.map { ($0.streamed, $0.status, $0.requestHeaders["last-event-id"]) })")
            // The streams that opened: the last one on a refreshed token; every one after the first resumes where the
            // first was (a loaded machine may take seconds to open one: a first attempt past the short token's `exp`
            // is a 401, refreshed the same way, and then the one stream that opens is on the refreshed token).
            let streams = transport.exchanges.filter { $0.streamed && $0.status == 200 }
            let fresh = await refreshed.values
            #expect(!streams.isEmpty && fresh.contains(streams.last?.requestHeaders["authorization"] ?? ""))
            #expect(streams.dropFirst().allSatisfy { $0.requestHeaders["last-event-id"] == "0.1" },
                    "\(streams.map { $0.requestHeaders["last-event-id"] ?? "-" })")
        }
    }

    @Test("a token provider that fails (its backend offline) is retried with backoff, not the end of the feed")
    func failingProvider() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let calls = Inbox<Bool>()
            let client = app.client(server) { refresh in
                await calls.push(refresh)
                guard await calls.values.count > 2 else { throw TestFailure(description: "backend offline") }
                return app.token(for: "alice")
            }
            let inbox = Inbox<Customization>()
            let follower = Self.follow(client, into: inbox)
            defer { follower.cancel() }
            #expect(try await inbox.wait { !$0.isEmpty }.map(\.revision) == [0])
            #expect(await calls.values.count == 3)
        }
    }

    @Test("a feed refused for good ends the sequence with the error")
    func refusedFeed() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let client = app.client(server) { _ in "not-a-token" }
            await #expect { for try await _ in client.updates() {} } throws: { error in
                guard case TabStoreError.unauthorized = error else { return false }
                return true
            }
            let other = TabStoreClient(baseURL: server.baseURL, appId: TabStoreID(app.id), userId: "bob") { _ in app.token(for: "alice") }
            await #expect { for try await _ in other.updates() {} } throws: { error in
                guard case TabStoreError.server(403, _) = error else { return false }
                return true
            }
        }
    }
}

/// The parts without a server: the event-stream parser, path segments, and edits as operations.
@Suite("TabStoreClient core")
struct CoreTests {
    @Test("the event-stream parser: pieces of any size, CRLF and CR, comments, multi-line data")
    func parser() {
        let text = "retry: 1000\r\n\r\n: keep-alive\n\nevent: customization\nid: 3.2\ndata: {\"a\":\ndata: 1}\r\rdata: plain\n\n"
        let expected = [ServerSentEvent(event: "customization", id: "3.2", data: "{\"a\":\n1}", retry: nil),
                        ServerSentEvent(event: "message", id: "3.2", data: "plain", retry: nil)]
        for size in [1, 2, 3, 7, text.utf8.count] {
            var parser = EventStreamParser()
            var events: [ServerSentEvent] = []
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                events += parser.feed(bytes.prefix(size))
                bytes = bytes.dropFirst(size)
            }
            #expect(events == expected, "pieces of \(size)")
            #expect(parser.retry == 1000)
        }
    }

    @Test("path segments: every byte but the unreserved ones encoded, and dot-only segments too")
    func segments() {
        #expect(TabStoreClient.segment("com.myApp") == "com.myApp")
        #expect(TabStoreClient.segment("al/ice ?#%ü+") == "al%2Fice%20%3F%23%25%C3%BC%2B")
        #expect(TabStoreClient.segment("..") == "%2E%2E" && TabStoreClient.segment(".") == "%2E")
        let client = TabStoreClient(baseURL: URL(string: "https://tabs.example/api/")!, appId: "com.myApp", userId: "a b") { _ in "t" }
        #expect(client.resource("layout", query: [("sizeClass", "compact")]).absoluteString
            == "https://tabs.example/api/v1/apps/com.myApp/users/a%20b/layout?sizeClass=compact")
    }

    @Test("a person's edit as operations: changed visibilities per placement and changed section orders, in id order")
    func snapshotOperations() {
        let before = ChoicesSnapshot(tabs: [bell: TabChoice(sidebarVisibility: .hidden), lights: TabChoice()],
                                     tabOrders: [categories: [climate, lights]])
        let after = ChoicesSnapshot(tabs: [climate: TabChoice(sidebarVisibility: .hidden, tabBarVisibility: .hidden), lights: TabChoice()],
                                    tabOrders: [categories: [lights, climate]])
        #expect(before.operations(to: after) == [
            .setSidebarVisibility(tab: bell, visibility: .automatic),
            .setSidebarVisibility(tab: climate, visibility: .hidden),
            .setTabBarVisibility(tab: climate, visibility: .hidden),
            .setTabOrder(section: categories, tabOrder: [lights, climate]),
        ])
        #expect(after.operations(to: after).isEmpty)
        let stored = Customization(appId: "a", userId: "u", tabs: [bell: TabChoice(sidebarVisibility: .hidden)],
                                   sections: [categories: SectionChoice(tabOrder: [climate, lights])])
        #expect(
            ChoicesSnapshot(stored)
                == ChoicesSnapshot(tabs: [bell: TabChoice(sidebarVisibility: .hidden)], tabOrders: [categories: [climate, lights]]))
    }
}
