import Foundation

/// Whether the client reaches the server, as its last exchange found.
public enum Connectivity: Sendable, Hashable {
    /// The last request (or the change feed) was answered.
    case online
    /// The last request got no answer; `reason` says why (for a person: "No connection", …).
    case offline(reason: String)
    /// The change feed lost its connection and is trying again.
    case reconnecting
}

/// What a view shows about syncing: connectivity, work not yet on the server, the last failure.
public struct SyncStatus: Sendable, Hashable {
    /// As the last exchange with the server found; `.online` before the first one.
    public var connectivity: Connectivity
    /// Writes the offline queue holds that the server has not answered yet.
    public var pendingWrites: Int
    /// The last error a request, replay or feed connection met; nil again once one succeeds.
    public var lastError: String?
    /// When the server last answered a request of this client.
    public var lastSynced: Date?

    /// A status; the defaults are the one before any request.
    public init(connectivity: Connectivity = .online, pendingWrites: Int = 0, lastError: String? = nil, lastSynced: Date? = nil) {
        self.connectivity = connectivity
        self.pendingWrites = pendingWrites
        self.lastError = lastError
        self.lastSynced = lastSynced
    }

    /// Whether the status says offline or reconnecting.
    public var isOffline: Bool { connectivity != .online }
}

/// The client's current `SyncStatus` and its observers; each `stream()` is its own (a multicast), starting with
/// the current value and then each change.
final class StatusHub: @unchecked Sendable {
    // @unchecked: every stored property is read and written under `lock` only.
    private let lock = NSLock()
    private var value = SyncStatus()
    private var observers: [UUID: AsyncStream<SyncStatus>.Continuation] = [:]
    /// Until when the server asked to be left alone (`Retry-After` on a 429 or 503); nil when it did not.
    private var notBefore: Date?

    var current: SyncStatus { lock.withLock { value } }

    /// Keeps a `Retry-After` of `seconds` (delta-seconds, RFC 9110 §10.2.3; an HTTP date or garbage is ignored).
    func serverAsksToWait(_ header: String?) {
        guard let header, let seconds = Int(header.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return }
        let until = Date().addingTimeInterval(Double(min(seconds, 86_400)))
        lock.withLock { notBefore = max(notBefore ?? until, until) }
    }

    /// Seconds left of the server's last `Retry-After` (0 when none is pending).
    var secondsToWait: Double { lock.withLock { max(0, notBefore?.timeIntervalSinceNow ?? 0) } }

    func update(_ change: (inout SyncStatus) -> Void) {
        let (changed, targets) = lock.withLock { () -> (SyncStatus?, [AsyncStream<SyncStatus>.Continuation]) in
            var next = value
            change(&next)
            guard next != value else { return (nil, []) }
            value = next
            return (next, Array(observers.values))
        }
        guard let changed else { return }
        for target in targets { target.yield(changed) }
    }

    func answered() {
        update {
            $0.connectivity = .online
            $0.lastError = nil
            $0.lastSynced = Date()
        }
    }

    func failed(_ error: TabStoreError) {
        // The app cancelled (a view went away, a task was cancelled): says nothing about the connection.
        if case .unreachable(let cause) = error, Self.isCancellation(cause) { return }
        update {
            if case .unreachable(let cause) = error { $0.connectivity = .offline(reason: Self.reason(cause)) }
            $0.lastError = error.localizedDescription
        }
    }

    /// Whether `error` is the app's own cancellation, not a failure of the network or the server.
    static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let error = error as? URLError, error.code == .cancelled { return true }
        if case .unreachable(let cause)? = error as? TabStoreError { return isCancellation(cause) }
        return false
    }

    static func reason(_ error: any Error) -> String {
        if let error = error as? URLError {
            switch error.code {
            case .notConnectedToInternet: return "No internet connection"
            case .timedOut: return "The server did not answer in time"
            case .cannotConnectToHost, .cannotFindHost: return "The server cannot be reached"
            case .networkConnectionLost: return "The connection was lost"
            default: break
            }
        }
        return "The server cannot be reached"
    }

    func stream() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream<SyncStatus>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        lock.withLock {
            observers[id] = continuation
            continuation.yield(value)
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.observers.removeValue(forKey: id) }
        }
        return stream
    }
}

extension TabStoreClient {
    /// The sync status now (see `SyncStatus`).
    public var status: SyncStatus { statusHub.current }

    /// The sync status, first as it is, then each time it changes: connectivity (online, offline with a reason,
    /// reconnecting), pending writes, the last error. Each call gives its own sequence; iterate it from a view's
    /// `.task`, it ends when that task is cancelled.
    public func statusUpdates() -> AsyncStream<SyncStatus> { statusHub.stream() }
}
