import Foundation
import Observation
import TabStoreClient

/// Keeps a `TabViewCustomization` (any `TabViewCustomizationMembers`) and TabStore in step, both ways:
/// `TabView { … }.tabViewCustomization($sync.customization)`.
///
/// A person's change in the sidebar or tab bar (SwiftUI writes `customization`) becomes the matching operations,
/// queued at once in the offline queue (kept on disk, sent with their idempotency keys, retried while offline).
/// Another device's change arrives through the change feed and is applied where SwiftUI has a setter (sidebar
/// visibility; an order is reset so that the builder order applies: build sections with `orderedTabs(in:builderOrder:)`).
/// `served` is what the server last served with the queued writes on top, `status` the client's sync status.
@MainActor
public final class TabCustomizationSync<Value: TabViewCustomizationMembers>: Observable {
    private let registrar = ObservationRegistrar()
    private var storage: Value
    /// What `customization` was after the last write of the bridge or of SwiftUI (the base of the next diff).
    private var baseline: Value
    private var servedStorage: LocalSnapshot<Customization>
    private var statusStorage: SyncStatus
    private var queueErrorStorage: String?
    /// Local edits on their way into the queue, in order; while one is, snapshots do not overwrite the edit.
    private var enqueuing: Task<Void, Never>?
    private var inFlight = 0
    private var tasks: [Task<Void, Never>] = []
    /// The offline queue (and local state) the bridge writes through.
    public let queue: OfflineQueue
    /// The engine: which tabs and sections it looks at.
    public let bridge: TabCustomizationBridge

    /// A bridge over `queue`; call `start()` (from a view's `.task`) to load the kept state and begin syncing.
    /// - Parameters:
    ///   - tabIDs: the customization ids of the customizable tabs (SwiftUI's type cannot list them).
    ///   - sectionIDs: the customization ids of the sections.
    public init(queue: OfflineQueue, tabIDs: [String] = [], sectionIDs: [String] = [], initial: Value = Value()) {
        self.queue = queue
        bridge = TabCustomizationBridge(tabIDs: tabIDs, sectionIDs: sectionIDs)
        storage = initial
        baseline = initial
        servedStorage = LocalSnapshot(value: Customization(appId: queue.client.appId, userId: queue.client.userId), isFromCache: true,
                                      hasPendingWrites: false, lastSynced: nil)
        statusStorage = queue.client.status
    }

    /// The customization SwiftUI shows and edits: bind it with `$sync.customization`.
    public var customization: Value {
        get {
            registrar.access(self, keyPath: \.customization)
            return storage
        }
        set {
            registrar.withMutation(of: self, keyPath: \.customization) { storage = newValue }
            let operations = bridge.operations(from: baseline, to: newValue, served: servedStorage.value)
            baseline = newValue
            enqueue(operations)
        }
    }

    /// The server's last customization with the queued writes on top (`isFromCache`, `hasPendingWrites`, `lastSynced`).
    public var served: LocalSnapshot<Customization> {
        registrar.access(self, keyPath: \.served)
        return servedStorage
    }

    /// The client's sync status (online, offline, reconnecting, pending writes, last error).
    public var status: SyncStatus {
        registrar.access(self, keyPath: \.status)
        return statusStorage
    }

    /// Loads the kept state (at once, also offline), then follows the server: replays the queue, follows the change
    /// feed and applies each new state. Returns at once; `stop()` ends it.
    public func start() {
        guard tasks.isEmpty else { return }
        receive(queue.cachedCustomizationNow)
        let queue = queue
        tasks.append(Task { [weak self] in
            for await snapshot in await queue.snapshots() {
                guard let self else { return }
                self.receive(snapshot)
            }
        })
        tasks.append(Task { [weak self] in
            guard let client = self?.queue.client else { return }
            for await status in client.statusUpdates() {
                guard let self else { return }
                self.registrar.withMutation(of: self, keyPath: \.status) { self.statusStorage = status }
            }
        })
        tasks.append(Task {
            _ = try? await queue.customization()
            await queue.start()
            await queue.startFollowing()
        })
    }

    /// Stops following (the queue keeps what it holds).
    public func stop() {
        for task in tasks { task.cancel() }
        tasks = []
        let queue = queue
        Task { await queue.stopFollowing() }
    }

    /// Reports a tab-bar reorder (SwiftUI's type holds no tab-bar order) and queues it.
    public func tabBarReordered(to order: [String]) {
        enqueue(bridge.tabBarReordered(to: order))
    }

    /// The order to build a section's tabs in: the served order (another device's reorder included), else the
    /// builder's. SwiftUI shows its own order over it once the person reorders here.
    public func orderedTabs(in section: String, builderOrder: [String]) -> [String] {
        guard let order = served.value.sections[TabStoreID(section)]?.tabOrder?.map(\.string) else { return builderOrder }
        return order.filter(builderOrder.contains) + builderOrder.filter { !order.contains($0) }
    }

    /// The tab-bar order to build the tab bar in: the served one, else the builder's.
    public func orderedTabBar(builderOrder: [String]) -> [String] {
        guard let order = served.value.tabBarOrder?.map(\.string) else { return builderOrder }
        return order.filter(builderOrder.contains) + builderOrder.filter { !order.contains($0) }
    }

    /// The served tab-bar visibility of a tab, for `defaultVisibility(_:for: .tabBar)` (SwiftUI has no setter).
    public func tabBarVisibility(of tab: String) -> TabVisibility {
        served.value[tab: TabStoreID(tab)].tabBarVisibility
    }

    /// Waits until the local edits made so far are in the queue (kept on disk).
    public func flush() async {
        await enqueuing?.value
    }

    private func enqueue(_ operations: [TabOperation]) {
        guard !operations.isEmpty else { return }
        let previous = enqueuing
        let queue = queue
        inFlight += 1
        enqueuing = Task { [weak self] in
            await previous?.value
            do {
                _ = try await queue.enqueue(operations)
                self?.setQueueError(nil)
            } catch {
                // Not kept (the file could not be written, or the queue was closed): say so, never silently.
                self?.setQueueError(error.localizedDescription)
            }
            self?.inFlight -= 1
        }
    }

    /// Why the last local edit could not be queued (the file could not be written, the queue was closed); nil
    /// once one is. Such an edit shows in SwiftUI but is not kept: show this to the person.
    public var queueError: String? {
        registrar.access(self, keyPath: \.queueError)
        return queueErrorStorage
    }

    private func setQueueError(_ message: String?) {
        guard message != queueErrorStorage else { return }
        registrar.withMutation(of: self, keyPath: \.queueError) { queueErrorStorage = message }
    }

    /// A new local state from the queue: applied to `customization` unless a local edit is still on its way in
    /// (the snapshot after it carries it).
    private func receive(_ snapshot: LocalSnapshot<Customization>) {
        registrar.withMutation(of: self, keyPath: \.served) { servedStorage = snapshot }
        guard inFlight == 0 else { return }
        var next = storage
        bridge.apply(snapshot.value, to: &next)
        registrar.withMutation(of: self, keyPath: \.customization) { storage = next }
        baseline = next
    }
}
