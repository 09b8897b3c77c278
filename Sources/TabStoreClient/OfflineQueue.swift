import Foundation

/// A write the offline queue keeps until the server answered it.
public struct PendingWrite: Sendable, Hashable, Identifiable {
    /// Chosen when the write was queued and kept with it, so every attempt sends the same one and the server
    /// applies the write once, also when an answer was lost (it keeps keys at least 24 hours).
    public let idempotencyKey: String
    /// The operations, in order.
    public let operations: [TabOperation]
    /// The schema version of the client that queued it (`Configuration.schemaVersion`), which it is sent under
    /// also after an app update: the operations name that version's tabs. nil: the server's current version
    /// (also for writes queued before the client knew schema versions).
    public let schemaVersion: Int?
    /// When it was queued.
    public let enqueuedAt: Date
    /// The `PATCH` body exactly as first encoded: a repeat must be byte for byte the same request.
    let body: String

    /// Its idempotency key.
    public var id: String { idempotencyKey }
}

/// What became of a queued write.
public enum QueueEvent: Sendable {
    /// The server applied it (or had applied it, and answered again); the customization after it, when readable.
    case applied(PendingWrite, Customization?)
    /// The server refused it for good (422 with its rule codes in `error.problem`, or another 4xx); it left the
    /// queue and is never sent again. `TabStoreError.schemaVersionRetired` means it was queued by an app version
    /// the operator has since retired: re-queue its `operations` under this version if they still make sense.
    case refused(PendingWrite, TabStoreError)
}

/// What one replay did.
public struct ReplayResult: Sendable {
    /// The writes it settled, in order.
    public var events: [QueueEvent]
    /// Writes still queued.
    public var remaining: Int
    /// Why it stopped before the queue was empty (unreachable, a passing server state, 401 with a fresh token,
    /// `schemaVersionNotFound` for this client's own version, or the token provider's error); nil when it
    /// emptied the queue.
    public var stoppedBy: (any Error)?
}

/// Why an offline queue file cannot be used.
public enum OfflineQueueError: Error, Sendable {
    /// The file holds another app's or person's queue (ids compared byte for byte: an id that differs from this
    /// client's only in Unicode normalization is another person's).
    case belongsTo(appId: TabStoreID, userId: TabStoreID)
    /// The file is not a queue this client can read; it is left as it is.
    case unreadable(URL, String)
    /// Another process has the file open (another copy of the app, an extension): one owner per file, so that
    /// neither overwrites the other's writes. Use a file of its own per process.
    case lockedByAnotherProcess(URL)
    /// This process has the file open with a client of another schema version; `close()` that queue first.
    case openWithAnotherSchemaVersion(URL, Int?)
    /// The queue was closed (`close()`); open the file again.
    case closed(URL)
}

extension OfflineQueueError: LocalizedError {
    /// A sentence for the log or a person.
    public var errorDescription: String? {
        switch self {
        case .belongsTo(let appId, let userId): "The sync file belongs to \(userId) in \(appId)."
        case .unreadable(let file, let detail): "The sync file \(file.lastPathComponent) cannot be read: \(detail)."
        case .lockedByAnotherProcess(let file): "The sync file \(file.lastPathComponent) is open in another process."
        case .openWithAnotherSchemaVersion(let file, let version): "The sync file \(file.lastPathComponent) is open for schema version \(version.map(String.init) ?? "current")."
        case .closed(let file): "The sync file \(file.lastPathComponent) was closed."
        }
    }
}

/// Writes kept on disk until the server has them, in order, each exactly once.
///
/// `enqueue(_:)` stores the operations with a fresh `Idempotency-Key` and the client's schema version in the app's
/// file (written atomically), before anything is sent; `replay()` sends the queued writes in order; `start()` replays now and again after
/// each failure with the waits of `Configuration.queueBackoff`, until the queue is empty (and again after each
/// `enqueue` while started). A write the server refuses (422, another 4xx) is reported on `events` with its rule
/// codes and dropped, never retried. A queue reopened from the same file after the app was killed goes on where
/// it stopped; a write whose answer was lost is sent again with its key, and the server answers it without
/// applying it twice. After an app update the new client's queue sends the writes the old version queued under
/// the old version (their tab ids are that version's); the server keeps what the new version can see.
///
/// It is also the app's local copy (`OfflineQueue+Local.swift`): the same file keeps the last customization and
/// layouts the server served, so `customization()` and `layout(…)` answer offline too (`LocalSnapshot`), with the
/// queued writes applied on top. One owner per file: see `TabStoreClient.offlineQueue(file:)`.
public actor OfflineQueue {
    /// The file the queue and the local state live in.
    public nonisolated let file: URL
    /// Each write the queue settles, as it settles it (the newest 100 are kept for a late reader).
    public nonisolated let events: AsyncStream<QueueEvent>
    private let eventSink: AsyncStream<QueueEvent>.Continuation
    /// The client this queue sends with (the first opener's, when several open the same file).
    public nonisolated let client: TabStoreClient
    var state: QueueFile.State
    var entries: [PendingWrite] {
        get { state.writes }
        set { state.writes = newValue }
    }
    private var running: Task<ReplayResult, Never>?
    private var loop: Task<Void, Never>?
    var feed: Task<Void, Never>?
    private var started = false
    /// The process's lock on the file; nil once closed.
    private var owner: FileOwner?
    var observers: [UUID: AsyncStream<LocalSnapshot<Customization>>.Continuation] = [:]
    /// Whether the server answered since the file was opened (else the base is the file's).
    var answeredSinceOpen = false
    /// The cached snapshot, readable without awaiting the actor (`cachedCustomizationNow`).
    nonisolated let mirror = SnapshotMirror()

    init(client: TabStoreClient, file: URL) throws {
        let owner = try FileOwner(file)
        self.client = client
        self.file = file
        self.owner = owner
        state = try QueueFile.load(file, appId: client.appId, userId: client.userId)
        (events, eventSink) = AsyncStream<QueueEvent>.makeStream(bufferingPolicy: .bufferingNewest(100))
        let pending = state.writes.count
        client.statusHub.update { $0.pendingWrites = pending }
        var initial = state.customization ?? Customization(appId: client.appId, userId: client.userId, schemaVersion: client.schemaVersion ?? 1)
        for write in state.writes { initial.applyLocally(write.operations) }
        mirror.value = LocalSnapshot(value: initial, isFromCache: true, hasPendingWrites: !state.writes.isEmpty, lastSynced: state.lastSynced)
    }

    deinit {
        eventSink.finish()
        for observer in observers.values { observer.finish() }
    }

    /// The writes not yet answered, oldest first.
    public var pending: [PendingWrite] { entries }

    /// Whether `close()` was called.
    public var isClosed: Bool { owner == nil }

    /// Stops replaying and following, releases the file's lock and forgets this queue: the next
    /// `offlineQueue(file:)` opens the file anew. What is queued stays in the file.
    public func close() {
        stop()
        feed?.cancel()
        feed = nil
        owner = nil
        OpenQueues.remove(file)
        for observer in observers.values { observer.finish() }
        observers = [:]
    }

    /// Saves the queue and the local state in one atomic write, and tells the status and the observers.
    func save() throws {
        guard owner != nil else { throw OfflineQueueError.closed(file) }
        try QueueFile.save(state, to: file, appId: client.appId, userId: client.userId)
        changed()
    }

    /// Queues `operations` as one write (applied atomically, in order, to the latest revision when it reaches
    /// the server) and stores the queue before returning; replays at once when started.
    /// - Throws: when the file cannot be written (the write is not queued then).
    @discardableResult
    public func enqueue(_ operations: [TabOperation], idempotencyKey: String? = nil) throws -> PendingWrite {
        guard owner != nil else { throw OfflineQueueError.closed(file) }
        let body = String(decoding: try TabStoreJSON.encode(PatchRequest(operations: operations)), as: UTF8.self)
        let write = PendingWrite(idempotencyKey: idempotencyKey ?? UUID().uuidString, operations: operations, schemaVersion: client.schemaVersion,
                                 enqueuedAt: Date(), body: body)
        var next = state
        next.writes.append(write)
        try QueueFile.save(next, to: file, appId: client.appId, userId: client.userId)
        state = next
        changed()
        if started { kick() }
        return write
    }

    /// Sends the queued writes in order until the queue is empty or one cannot be settled now; one replay at a
    /// time (a call during another waits for it).
    public func replay() async -> ReplayResult {
        if let running { return await running.value }
        let task = Task { await self.pass() }
        running = task
        let result = await task.value
        if running == task { running = nil }
        return result
    }

    /// Replays now, and after each failure again with backoff, until the queue is empty; while started, every
    /// `enqueue` replays too. Call it again when the network is back to retry at once.
    public func start() {
        started = true
        loop?.cancel()
        loop = nil
        kick()
    }

    /// Stops replaying by itself (a replay under way finishes its current write).
    public func stop() {
        started = false
        loop?.cancel()
        loop = nil
    }

    private func kick() {
        guard loop == nil else { return }
        loop = Task { await self.run() }
    }

    private func run() async {
        var attempt = 0
        while !Task.isCancelled {
            let result = await replay()
            guard !entries.isEmpty else { break }
            // A refusal of the credentials (401 with a fresh token) waits for the next start or enqueue; no answer,
            // a passing server state, a schema version not registered yet or a failing token provider (offline
            // too) are retried.
            if let error = result.stoppedBy as? TabStoreError, !error.isTransient, !Self.isSchemaVersionNotFound(error) { break }
            if result.stoppedBy is CancellationError { break }
            do {
                try await client.configuration.queueBackoff.sleep(attempt: attempt)
            } catch {
                return
            }
            attempt += 1
        }
        if !Task.isCancelled { loop = nil }
    }

    private func pass() async -> ReplayResult {
        var events: [QueueEvent] = []
        while let write = entries.first {
            if Task.isCancelled { return ReplayResult(events: events, remaining: entries.count, stoppedBy: CancellationError()) }
            let event: QueueEvent
            // Under the version it was queued with (it names that version's tabs), and its answer is cached under it.
            let url = client.resource("customization", schemaVersion: write.schemaVersion)
            do {
                let response = try await client.write("PATCH", url, body: Data(write.body.utf8), ifMatch: nil, idempotencyKey: write.idempotencyKey)
                let customization = try? TabStoreJSON.decode(Customization.self, from: response.body)
                if let customization { await client.cache.store(url, etag: response.header("ETag") ?? customization.etag, body: response.body) }
                event = .applied(write, customization)
            } catch let error as TabStoreError where !keeps(write, after: error) {
                event = .refused(write, error)
            } catch {
                return ReplayResult(events: events, remaining: entries.count, stoppedBy: error)
            }
            entries.removeAll { $0.idempotencyKey == write.idempotencyKey }
            // The server's answer becomes the local base; the writes still queued apply on top of it.
            if case .applied(_, let customization?) = event, write.schemaVersion == client.schemaVersion { rebase(on: customization) }
            // Should this fail, the write stays in the file: sent again after a restart with its key, the server
            // answers it again without applying it twice.
            try? save()
            events.append(event)
            eventSink.yield(event)
        }
        return ReplayResult(events: events, remaining: 0, stoppedBy: nil)
    }

    /// Whether a write that failed with `error` stays queued for a later replay instead of being dropped.
    private func keeps(_ write: PendingWrite, after error: TabStoreError) -> Bool {
        switch error {
        case .unauthorized: true  // the credentials, not the write: the next start or enqueue tries again
        // A token for another user or app (an account switch, a misconfiguration): the credentials again, never
        // a reason to drop the person's edit.
        case .server(status: 403, _): true
        // This app is ahead of the server (released before its schema version was registered): the version will
        // come. A write of an older app version that the server never had will not: refused like any 404.
        case .schemaVersionNotFound: write.schemaVersion == client.schemaVersion
        default: error.isTransient
        }
    }

    private static func isSchemaVersionNotFound(_ error: TabStoreError) -> Bool {
        if case .schemaVersionNotFound = error { return true }
        return false
    }
}

extension TabStoreClient {
    /// The offline queue and local state kept in `file` (created on the first save); reopening the same file
    /// after a restart gives back the writes not yet answered and the last state the server served. One owner per
    /// file: a second open in this process answers the queue already open (every window shares it); a file
    /// another process has open throws.
    /// - Throws: `OfflineQueueError.belongsTo` when the file holds another person's queue (also when the open
    ///   queue is another person's), `.lockedByAnotherProcess`, `.unreadable`.
    public func offlineQueue(file: URL) throws -> OfflineQueue {
        let queue = try OpenQueues.queue(for: file) { try OfflineQueue(client: self, file: file) }
        guard queue.client.appId == appId, queue.client.userId == userId else {
            throw OfflineQueueError.belongsTo(appId: queue.client.appId, userId: queue.client.userId)
        }
        guard queue.client.schemaVersion == schemaVersion else {
            throw OfflineQueueError.openWithAnotherSchemaVersion(file, queue.client.schemaVersion)
        }
        return queue
    }
}


/// The last cached snapshot of a queue, behind a lock so that a view can draw it before awaiting the actor.
final class SnapshotMirror: @unchecked Sendable {
    // @unchecked: `stored` is read and written under `lock` only.
    private let lock = NSLock()
    private var stored: LocalSnapshot<Customization>?

    var value: LocalSnapshot<Customization> {
        get { lock.withLock { stored! } }
        set { lock.withLock { stored = newValue } }
    }
}
