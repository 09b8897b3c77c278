import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreSupport

/// One change-feed stream (`GET …/customization/events`): a follower of the user's changes that the event
/// loop holding the connection drives (`HTTPBodyStream`). A commit's publication only stores the newest state
/// and wakes the loop; the loop takes it on its next turn, so a stream never holds a thread, and a client that
/// misses intermediate revisions still gets the latest whole document.
///
/// A slow reader is sent the newest state, not a queue: while the previous event is still being written
/// (`next` is asked `backlogged`), the pending state stays here and a newer commit replaces it, so the reader
/// skips intermediate revisions but never gets one older than one it has. Memory per stream is so bounded:
/// one event being written plus one pending state (each a whole customization, at most
/// `--max-customization-bytes` plus its framing; the pending one is the published state, shared with the
/// user's other followers), plus a last event. A reader that takes no byte for the server's write timeout is
/// disconnected by the loop.
final class FeedStream: HTTPBodyStream, ChangeFollower {
    private struct State {
        var wake: (@Sendable () -> Void)?
        var opened = false
        /// The newest customization not handed to the loop yet (it replaces an older one still waiting, which
        /// counts as coalesced).
        var pending: CustomizationState?
        /// The ETag of the last customization handed over: the same one is never sent twice.
        var lastSent: String?
        var appDeleted = false
        /// The app's signing secret that verified the caller's token was rotated.
        var revoked = false
        /// The named operator token that opened the stream was revoked.
        var operatorRevoked = false
        /// The version the stream follows is below the app's minimum now.
        var retired = false
        var finished = false
        /// When bytes were last handed over (monotonic nanoseconds), for the keep-alive comments.
        var lastWrite: UInt64 = 0
        /// When the caller's token expires (monotonic nanoseconds); 0 for never.
        var expiry: UInt64 = 0
    }

    /// Written by publishing threads (`changed`, `ended`) and read by the loop, each under this lock.
    private let state = Locked(State())
    let key: UserKey
    private let hub: ChangeHub
    private let metrics: Metrics
    private let keepAlive: UInt64
    /// Seconds since 1970 when the caller's credentials expire; nil for never (the configured operator token, a
    /// named one without expiry).
    private let expiresAt: Int?
    private let clock: @Sendable () -> Int
    let pinned: SchemaIndex?

    /// - Parameter pinned: the schema version the client named, nil to follow the current one.
    init(key: UserKey, services: APIServices, expiresAt: Int?, pinned: SchemaIndex? = nil) {
        self.key = key
        self.pinned = pinned
        hub = services.changes
        metrics = services.metrics
        keepAlive = UInt64(services.configuration.feedKeepAliveSeconds * 1e9)
        self.expiresAt = expiresAt
        clock = services.configuration.clock
    }

    /// The first event, unless the client has it already (its `Last-Event-ID`).
    func queue(_ first: CustomizationState) {
        state.withLock { $0.pending = first }
    }

    // MARK: ChangeFollower (any thread)

    func changed(_ customization: CustomizationState) {
        let (wake, coalesced) = state.withLock { state -> ((@Sendable () -> Void)?, Bool) in
            guard !state.finished else { return (nil, false) }
            let replaced = state.pending.map { $0.etag.opaque != customization.etag.opaque } ?? false
            state.pending = customization
            return (state.wake, replaced)
        }
        if coalesced { metrics.recordEventCoalesced() }
        wake?()
    }

    func ended(_ reason: FollowEnd) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            switch reason {
            case .appDeleted: state.appDeleted = true
            case .credentialsRevoked: state.revoked = true
            case .operatorTokenRevoked: state.operatorRevoked = true
            case .schemaVersionRetired: state.retired = true
            case .draining: break
            }
            return state.wake
        }
        wake?()
    }

    // MARK: HTTPBodyStream (the event loop)

    func start(now: UInt64, wake: @escaping @Sendable () -> Void) {
        var expiry: UInt64 = 0
        if let expiresAt {
            // Seconds left, capped at ten years, so nanoseconds never overflow whatever `exp` said.
            let left = UInt64(min(max(expiresAt - clock(), 0), 315_360_000))
            expiry = now + left * 1_000_000_000
        }
        state.withLock { state in
            state.wake = wake
            state.lastWrite = now
            state.expiry = expiry
        }
    }

    func next(now: UInt64, backlogged: Bool) -> HTTPStreamStep {
        let (step, events) = state.withLock { state -> (HTTPStreamStep, Int) in
            var bytes: [UInt8] = []
            var events = 0
            if !state.opened {
                state.opened = true
                bytes += FeedEvent.opening
            }
            var ended = false
            // The caller's authorization ended: the server closes the connection too (docs/devices.md), so nothing
            // pipelined behind the stream is served on the strength of the request before it.
            var closes = false
            if state.expiry != 0, now >= state.expiry {
                // Nothing more for an expired token, not even a change that is waiting.
                bytes += FeedEvent.tokenExpired
                events += 1
                ended = true
                closes = true
            } else if state.revoked {
                bytes += FeedEvent.credentialsRevoked
                events += 1
                ended = true
                closes = true
            } else if state.operatorRevoked {
                bytes += FeedEvent.operatorTokenRevoked
                events += 1
                ended = true
                closes = true
            } else if state.retired {
                bytes += FeedEvent.schemaVersionRetired
                events += 1
                ended = true
            } else if state.appDeleted {
                ended = true
            } else if backlogged {
                // The last event is still being written: the pending state waits (a newer one replaces it),
                // and a keep-alive is not needed behind bytes on their way, so its interval starts again.
                if now &- state.lastWrite >= keepAlive { state.lastWrite = now }
            } else if let pending = state.pending {
                state.pending = nil
                if pending.etag.opaque != state.lastSent {
                    state.lastSent = pending.etag.opaque
                    bytes += pending.event
                    events += 1
                }
            }
            if bytes.isEmpty, !ended, !backlogged, now &- state.lastWrite >= keepAlive { bytes = FeedEvent.keepAlive }
            if !bytes.isEmpty { state.lastWrite = now }
            var deadline: UInt64 = 0
            if !ended {
                deadline = state.lastWrite + keepAlive
                if state.expiry != 0 { deadline = min(deadline, state.expiry) }
            }
            return (HTTPStreamStep(bytes: bytes, ended: ended, deadline: deadline, closesConnection: closes), events)
        }
        if events > 0 { metrics.recordEventsSent(events) }
        return step
    }

    func drainingChunk() -> [UInt8] {
        metrics.recordEventsSent(1)
        return FeedEvent.shutdown
    }

    func finish() {
        state.withLock { state in
            state.finished = true
            state.wake = nil
            state.pending = nil
        }
        hub.unfollow(key, self)
    }
}
