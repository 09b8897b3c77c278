import Foundation
import Testing
import TabStoreClient
import TabStoreSwiftUI

/// A stand-in for SwiftUI's `TabViewCustomization` that behaves as Apple documents it: an id it never saw reads
/// `automatic` and a nil order; `sidebarVisibility` has a setter, `tabBarVisibility` and `tabOrder` only getters
/// (the `person…` methods are what SwiftUI's own UI does); `resetVisibility()` resets the sidebar visibilities,
/// `resetSectionOrder()` every order; it is `Codable`.
struct FakeTabViewCustomization: TabViewCustomizationMembers, Equatable {
    enum FakeVisibility: String, Codable, TabVisibilityValue {
        case automatic, visible, hidden
        init(tabStoreVisibility: TabVisibility) { self = FakeVisibility(rawValue: tabStoreVisibility.rawValue)! }
        var tabStoreVisibility: TabVisibility { TabVisibility(rawValue: rawValue)! }
    }

    struct FakeTab: TabCustomizationMembers, Codable, Equatable {
        var sidebarVisibility: FakeVisibility = .automatic
        fileprivate(set) var tabBarVisibility: FakeVisibility = .automatic
    }

    struct FakeSection: SectionCustomizationMembers, Codable, Equatable {
        fileprivate(set) var tabOrder: [String]?
        mutating func resetTabOrder() { tabOrder = nil }
    }

    private var tabs: [String: FakeTab] = [:]
    private var sections: [String: FakeSection] = [:]

    init() {}

    subscript(tab id: String) -> FakeTab {
        get { tabs[id] ?? FakeTab() }
        set { tabs[id] = newValue }
    }

    subscript(section id: String) -> FakeSection {
        get { sections[id] ?? FakeSection() }
        set { sections[id] = newValue }
    }

    mutating func resetVisibility() { for id in tabs.keys { tabs[id]?.sidebarVisibility = .automatic } }
    mutating func resetSectionOrder() { sections = [:] }

    /// A person drags a tab in or out of the tab bar.
    mutating func personSetsTabBar(_ id: String, _ visibility: FakeVisibility) { tabs[id, default: FakeTab()].tabBarVisibility = visibility }
    /// A person reorders a section in the sidebar.
    mutating func personReorders(_ section: String, _ order: [String]) { sections[section, default: FakeSection()].tabOrder = order }
}

@Suite("TabStoreSwiftUI bridge engine")
struct BridgeTests {
    let bridge = TabCustomizationBridge(tabIDs: [bell.string, climate.string, lights.string], sectionIDs: [categories.string])

    @Test("a sidebar hide, a section reorder and a tab-bar visibility change become their operations; no change, none")
    func localEdits() {
        let before = FakeTabViewCustomization()
        var after = before
        #expect(bridge.operations(from: before, to: after).isEmpty)
        after[tab: bell.string].sidebarVisibility = .hidden
        #expect(bridge.operations(from: before, to: after) == [.setSidebarVisibility(tab: bell, visibility: .hidden)])
        var reordered = after
        reordered.personReorders(categories.string, [lights.string, climate.string])
        #expect(bridge.operations(from: after, to: reordered) == [.setTabOrder(section: categories, tabOrder: [lights, climate])])
        var barred = reordered
        barred.personSetsTabBar(climate.string, .hidden)
        #expect(bridge.operations(from: reordered, to: barred) == [.setTabBarVisibility(tab: climate, visibility: .hidden)])
        var reset = barred
        reset.resetSectionOrder()
        reset.resetVisibility()
        #expect(bridge.operations(from: barred, to: reset) == [.setSidebarVisibility(tab: bell, visibility: .automatic),
                                                              .resetSectionOrder(section: categories)])
        #expect(bridge.tabBarReordered(to: [lights.string, bell.string]) == [.setTabBarOrder([lights, bell])])
    }

    @Test("a remote change is applied where SwiftUI has a setter, the order reset to the builder's, and sends nothing back")
    func remoteChange() throws {
        var local = FakeTabViewCustomization()
        local.personReorders(categories.string, [climate.string, lights.string])
        local.personSetsTabBar(lights.string, .visible)
        var served = Customization(appId: "com.myApp", userId: "alice", revision: 4)
        served.tabs[climate] = TabChoice(sidebarVisibility: .hidden, tabBarVisibility: .hidden)
        served.sections[categories] = SectionChoice(tabOrder: [lights, climate])
        let before = local
        let unset = bridge.apply(served, to: &local)
        #expect(local[tab: climate.string].sidebarVisibility == .hidden)
        #expect(local[section: categories.string].tabOrder == nil)  // the builder order, which the app draws in the served order
        #expect(unset == [lights.string])  // SwiftUI has no tab-bar setter: the app drives it with defaultVisibility
        #expect(bridge.operations(from: local, to: local, served: served).isEmpty)
        #expect(before != local)
        let round = try JSONDecoder().decode(FakeTabViewCustomization.self, from: JSONEncoder().encode(local))
        #expect(round == local)
    }

    @Test("TabCustomizationSync: a hide through the binding and a tab-bar reorder are queued and shown locally at once, offline")
    @MainActor
    func syncQueuesEdits() async throws {
        let file = QueueTests.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        // Nothing listens on port 9 of 127.0.0.1: every request finds the server unreachable.
        let client = TabStoreClient(baseURL: URL(string: "http://127.0.0.1:9")!, appId: "com.myApp", userId: "alice") { _ in "token" }
        let queue = try client.offlineQueue(file: file)
        let sync = TabCustomizationSync<FakeTabViewCustomization>(queue: queue, tabIDs: bridge.tabIDs, sectionIDs: bridge.sectionIDs)
        sync.customization[tab: bell.string].sidebarVisibility = .hidden
        sync.tabBarReordered(to: [lights.string, bell.string])
        await sync.flush()
        #expect(await queue.pending.map(\.operations) == [[.setSidebarVisibility(tab: bell, visibility: .hidden)], [.setTabBarOrder([lights, bell])]])
        let local = await queue.cachedCustomization()
        #expect(local.hasPendingWrites && local.isFromCache)
        #expect(local.value[tab: bell].sidebarVisibility == .hidden && local.value.tabBarOrder == [lights, bell])
        sync.start()  // the kept state at once, offline too
        #expect(sync.served.value.tabBarOrder == [lights, bell] && sync.served.hasPendingWrites)
        #expect(sync.orderedTabBar(builderOrder: [bell.string, climate.string, lights.string]) == [lights.string, bell.string, climate.string])
        #expect(sync.customization[tab: bell.string].sidebarVisibility == .hidden)
        sync.stop()
        await queue.close()
        #expect(sync.queueError == nil)
        sync.customization[tab: climate.string].sidebarVisibility = .hidden  // after close: not kept, and said so
        await sync.flush()
        #expect(sync.queueError != nil)
    }

    @Test("TabCustomizationSync against the server: another device's hide arrives through the feed, is applied, and is not sent back")
    @MainActor
    func syncAppliesRemoteChange() async throws {
        let file = QueueTests.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let server = try ServerFixture()
        do {
            let app = try await server.makeApp()
            let queue = try app.client(server).offlineQueue(file: file)
            let sync = TabCustomizationSync<FakeTabViewCustomization>(queue: queue, tabIDs: bridge.tabIDs, sectionIDs: bridge.sectionIDs)
            sync.start()
            try await Self.until { sync.served.lastSynced != nil }
            let phone = app.client(server)
            try await phone.apply([
                .setSidebarVisibility(tab: climate, visibility: .hidden), .setTabOrder(section: categories, tabOrder: [lights, climate]),
            ])
            try await Self.until { sync.customization[tab: climate.string].sidebarVisibility == .hidden }
            #expect(sync.orderedTabs(in: categories.string, builderOrder: [climate.string, lights.string]) == [lights.string, climate.string])
            #expect(await queue.pending.isEmpty)
            #expect(try await phone.history().items.count == 1)  // nothing echoed back
            sync.stop()
            await queue.close()
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Waits (polling the main actor, at most 60 s) until `condition` holds.
    @MainActor
    static func until(_ condition: @MainActor () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            guard Date() < deadline else { throw TestFailure(description: "condition never held") }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}
