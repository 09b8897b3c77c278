import Foundation
import Testing
import TabStoreClient

/// The client against a real server in-process, over real sockets: reads, writes, 304s, conflicts, refusals,
/// ids that need percent-encoding and token refresh.
@Suite("TabStoreClient against the server", .serialized)
struct ClientTests {
    @Test("reads and writes; a repeated read is a 304 served from the cache, also after a write")
    func readWrite() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let transport = RecordingTransport()
            let client = app.client(server, transport: transport)
            let empty = try await client.customization()
            #expect(empty.revision == 0 && empty.tabs.isEmpty && empty.userId == "alice" && empty.etag == "\"0.1\"")
            #expect(try await client.customization() == empty)
            #expect(transport.statuses == [200, 304])
            #expect(transport.exchanges.last?.requestHeaders["if-none-match"] == "\"0.1\"")

            let written = try await client.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            #expect(written.revision == 1 && written[tab: bell].sidebarVisibility == .hidden)
            #expect(try await client.customization() == written)
            #expect(transport.statuses.last == 304)

            let layout = try await client.layout(sizeClass: .regular)
            #expect(layout.hidden == [bell] && layout.sidebar.map(\.id) == [home, categories] && layout.revision == 1)
            #expect(try await client.layout(sizeClass: .regular) == layout)
            #expect(transport.statuses.suffix(2) == [200, 304])
            let iPad = try await client.layout(sizeClass: .regular, platform: .iPadOS, style: .sidebarAdaptable)
            #expect(iPad.platform == .iPadOS && iPad.style == .sidebarAdaptable && iPad.customizationApplied && iPad.hidden == [bell])
            let compact = try await client.layout(sizeClass: .compact, platform: .iOS)
            #expect(!compact.customizationApplied && compact.sidebar.isEmpty)

            var choices = written
            choices.tabs = [climate: TabChoice(sidebarVisibility: .hidden)]
            choices.sections = [categories: SectionChoice(tabOrder: [lights, climate])]
            let replaced = try await client.replace(choices)
            #expect(
                replaced.revision == 2 && replaced.tabs.keys.sorted() == [climate] && replaced.sections[categories]?.tabOrder == [lights, climate])

            let history = try await client.history()
            #expect(history.items.map(\.revision) == [2, 1] && history.items.map(\.change) == [.put, .patch] && history.nextBefore == nil)
            #expect(history.items.last?.operations == [.setSidebarVisibility(tab: bell, visibility: .hidden)])
            #expect(try await client.history(limit: 1).nextBefore == 2)

            let reverted = try await client.revert(to: 1)
            #expect(reverted.revision == 3 && reverted.tabs == written.tabs && reverted.sections.isEmpty)
            try await client.reset()
            let reset = try await client.customization()
            #expect(reset.revision == 4 && reset.tabs.isEmpty)
        }
    }

    @Test("If-Match on request: a stale write is a typed conflict carrying the server's current state")
    func conflict() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let phone = app.client(server)
            let tablet = app.client(server)
            let seen = try await phone.customization()
            try await tablet.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            do {
                try await phone.apply([.setSidebarVisibility(tab: climate, visibility: .hidden)], ifMatch: seen)
                Issue.record("a stale If-Match was applied")
            } catch TabStoreError.conflict(let current) {
                #expect(
                    current.revision == 1 && current[tab: bell].sidebarVisibility == .hidden && current[tab: climate].sidebarVisibility == .automatic)
                let rebased = try await phone.apply([.setSidebarVisibility(tab: climate, visibility: .hidden)], ifMatch: current)
                #expect(rebased.revision == 2)
            }
            await #expect(throws: TabStoreError.self) { try await phone.replace(seen, ifMatch: seen) }
            await #expect(throws: TabStoreError.self) { try await phone.reset(ifMatch: seen) }
            #expect(try await tablet.customization().revision == 2)
            // Without If-Match, writes from two devices merge.
            let merged = try await tablet.apply([.setSidebarVisibility(tab: lights, visibility: .hidden)])
            #expect(merged.revision == 3 && merged.tabs.keys.sorted() == [bell, climate, lights])
        }
    }

    @Test("a refusal carries its rule code; nothing changes")
    func refused() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let client = app.client(server)
            do {
                try await client.apply([.setSidebarVisibility(tab: bell, visibility: .hidden), .setSidebarVisibility(tab: home, visibility: .hidden)])
                Issue.record("hiding a disabled tab was applied")
            } catch TabStoreError.refused(let problem) {
                #expect(problem.status == 422 && problem.type == .ruleViolation && problem.codes == [.notHideable])
                #expect(problem.errors?.first?.pointer.hasPrefix("/operations/1") == true)
            }
            #expect(try await client.customization().revision == 0)
            do {
                _ = try await client.revert(to: 7)
                Issue.record("a revert to an unknown revision succeeded")
            } catch TabStoreError.server(let status, let problem) {
                #expect(status == 404 && problem?.type == .revisionNotFound)
            }
        }
    }

    @Test("user ids with any allowed bytes are percent-encoded as one path segment", arguments: ["al/ice ?#%ü+", "..", ".", "a;b=c&d"])
    func userIds(_ user: String) async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let client = app.client(server, user: user)
            let written = try await client.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            #expect(written.userId == TabStoreID(user) && written.revision == 1)
            #expect(try await client.customization().userId == TabStoreID(user))
            #expect(try await client.layout(sizeClass: .compact).userId == TabStoreID(user))
            #expect(try await app.client(server, user: "someone-else").customization().revision == 0)
        }
    }

    @Test("a 401 asks the provider for a fresh token and retries once; a second 401 is an error")
    func tokenRefresh() async throws {
        try await withServer { server in
            let app = try await server.makeApp()
            let calls = Inbox<Bool>()
            let transport = RecordingTransport()
            let expired = app.token(for: "alice", expiresIn: 60, issuedAt: Int(Date().timeIntervalSince1970) - 600)
            let client = app.client(server, transport: transport) { refresh in
                await calls.push(refresh)
                return refresh ? app.token(for: "alice") : expired
            }
            #expect(try await client.customization().revision == 0)
            #expect(await calls.values == [false, true] && transport.statuses == [401, 200])
            _ = try await client.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            #expect(await calls.values == [false, true] && transport.statuses.last == 200)

            let hopeless = RecordingTransport()
            let refused = app.client(server, transport: hopeless) { _ in "not-a-token" }
            await #expect { try await refused.customization() } throws: { error in
                guard case TabStoreError.unauthorized(let problem) = error else { return false }
                return problem?.status == 401
            }
            #expect(hopeless.statuses == [401, 401])
        }
    }
}
