import Foundation

/// A value as the app shows it: the server's last answer with the writes still queued applied on top.
public struct LocalSnapshot<Value: Sendable & Hashable>: Sendable, Hashable {
    /// The value to show.
    public var value: Value
    /// Whether it comes from the file rather than an answer the server just gave (offline, or not asked yet).
    public var isFromCache: Bool
    /// Whether queued writes the server has not answered yet are applied in `value`.
    public var hasPendingWrites: Bool
    /// When the server last answered this queue's client; nil when it never did for this file.
    public var lastSynced: Date?

    /// A snapshot.
    public init(value: Value, isFromCache: Bool, hasPendingWrites: Bool, lastSynced: Date?) {
        self.value = value
        self.isFromCache = isFromCache
        self.hasPendingWrites = hasPendingWrites
        self.lastSynced = lastSynced
    }
}

extension OfflineQueue {
    /// The customization to show now: the server's (read under the client's schema version) with the queued writes
    /// applied on top; offline (no answer, a passing server state) the last one the server served, kept in the file
    /// (`isFromCache`), or an empty revision 0 when it never served one.
    /// - Throws: `TabStoreError` other than a transient one (401 with a fresh token, a retired schema version, …).
    public func customization() async throws -> LocalSnapshot<Customization> {
        do {
            let served = try await client.customization()
            rebase(on: served)
            return snapshot(fromCache: false)
        } catch let error as TabStoreError where error.isTransient {
            return snapshot(fromCache: true)
        }
    }

    /// The customization from the file with the queued writes on top, without asking the server (at launch,
    /// before the first answer). Always `isFromCache`.
    public func cachedCustomization() -> LocalSnapshot<Customization> { snapshot(fromCache: true) }

    /// `cachedCustomization()` without waiting for the queue: as the file held it when opened plus what this
    /// queue stored since (read under the queue's own lock-free copy; for a first frame at launch).
    public nonisolated var cachedCustomizationNow: LocalSnapshot<Customization> { mirror.value }

    /// What the `TabView` shows, as `TabStoreClient.layout(sizeClass:platform:style:)`, kept in the file per size
    /// class, platform and style; offline the kept one (`isFromCache`). Queued visibility and order changes are
    /// applied on top where the client can tell their effect (a tab hidden in the sidebar leaves it; a section's
    /// or the tab bar's new order); the others show once the server has them (`hasPendingWrites`).
    /// - Throws: `TabStoreError.unreachable` offline when no layout for this key was ever kept; other non-transient
    ///   errors as the client's call.
    public func layout(sizeClass: SizeClass, platform: Platform? = nil, style: LayoutStyle? = nil) async throws -> LocalSnapshot<TabLayout> {
        let key = [sizeClass.rawValue, platform?.rawValue ?? "-", style?.rawValue ?? "-"].joined(separator: "/")
        var fromCache = false
        var base: TabLayout
        do {
            base = try await client.layout(sizeClass: sizeClass, platform: platform, style: style)
            state.layouts[key] = base
            state.lastSynced = Date()
            try? save()
        } catch let error as TabStoreError where error.isTransient {
            guard let kept = state.layouts[key] else { throw error }
            base = kept
            fromCache = true
            // The kept customization may be newer than the kept layout (a write or a feed event since): its
            // visibilities and orders go on top as far as the client can tell their effect.
            if let customization = state.customization, customization.revision > kept.revision, customization.schemaVersion == kept.schemaVersion {
                base.applyLocally(customization.layoutOperations)
            }
        }
        for write in entries { base.applyLocally(write.operations) }
        return LocalSnapshot(value: base, isFromCache: fromCache, hasPendingWrites: !entries.isEmpty, lastSynced: state.lastSynced)
    }

    /// The local customization, first as it is, then each time it changes (a write queued, answered or refused, a
    /// read, a change from another device while following the feed). Each call gives its own sequence.
    /// `isFromCache` is true until the server answered since the file was opened, and while it is unreachable.
    public func snapshots() -> AsyncStream<LocalSnapshot<Customization>> {
        let (stream, continuation) = AsyncStream<LocalSnapshot<Customization>>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = UUID()
        observers[id] = continuation
        continuation.yield(snapshot(fromCache: !answeredSinceOpen || client.status.isOffline))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(id) }
        }
        return stream
    }

    /// Follows the change feed until `close()` or `stopFollowing()`: another device's change becomes the local base
    /// (the queued writes stay on top) and reaches `snapshots()`.
    public func startFollowing() {
        guard feed == nil else { return }
        let updates = client.updates()
        feed = Task { [weak self] in
            do {
                for try await customization in updates {
                    guard let self else { return }
                    await self.rebase(on: customization)
                }
            } catch {
                if let error = error as? TabStoreError { self?.client.statusHub.failed(error) }
            }
        }
    }

    /// Stops following the change feed.
    public func stopFollowing() {
        feed?.cancel()
        feed = nil
    }

    private func removeObserver(_ id: UUID) { observers[id] = nil }

    /// The server's `customization` becomes the base the queued writes apply on; kept in the file.
    func rebase(on customization: Customization) {
        answeredSinceOpen = true
        // An older revision than the one kept (a late feed event) does not replace it.
        if let kept = state.customization, kept.revision > customization.revision, kept.schemaVersion == customization.schemaVersion {
            changed()
            return
        }
        state.customization = customization
        state.lastSynced = Date()
        do { try save() } catch { changed() }
    }

    func snapshot(fromCache: Bool) -> LocalSnapshot<Customization> {
        var value =
            state.customization ?? Customization(appId: client.appId, userId: client.userId, revision: 0, schemaVersion: client.schemaVersion ?? 1)
        for write in entries { value.applyLocally(write.operations) }
        return LocalSnapshot(value: value, isFromCache: fromCache, hasPendingWrites: !entries.isEmpty, lastSynced: state.lastSynced)
    }

    /// Tells the status and the snapshot observers.
    func changed() {
        mirror.value = snapshot(fromCache: true)
        let pending = entries.count
        client.statusHub.update { $0.pendingWrites = pending }
        guard !observers.isEmpty else { return }
        // From cache until the server answered this run, and again while the client finds it unreachable.
        let current = snapshot(fromCache: !answeredSinceOpen || client.status.isOffline)
        for observer in observers.values { observer.yield(current) }
    }
}
