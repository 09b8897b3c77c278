import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreSupport

/// One long poll (`GET …/customization?waitSeconds=N`) waiting for the customization's ETag to differ from the
/// one the client has. It waits as a suspended task: no event-loop thread and no pool thread is held, and its
/// timer is a sleeping task too. The first outcome wins (a change, the timeout, being let go, or the client
/// leaving); later ones are ignored.
final class LongPoll: ChangeFollower {
    enum Outcome: Sendable {
        case changed(CustomizationState)
        case timedOut
        case ended(FollowEnd)
        /// The waiting task was cancelled: the client went away.
        case cancelled
    }

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var outcome: Outcome?
        /// The ETag the client has, in the form the representation has it now (`waitForChange(from:)`).
        var has: EntityTag?
        /// The newest state published before `has` was known, judged once it is.
        var early: CustomizationState?
    }

    /// Touched by the publishing thread, the timer and the waiting task, each under this lock.
    private let state = Locked(State())

    let pinned: SchemaIndex?

    /// - Parameter pinned: the schema version the client named, nil to follow the current one.
    init(pinned: SchemaIndex? = nil) { self.pinned = pinned }

    /// From now on any state whose ETag is not `etag` (the current representation's, which the client has,
    /// whether it named it by ETag, by revision alone or by `*`) ends the wait: a new revision, a new schema
    /// version the customization is reconciled with, an erase.
    func waitForChange(from etag: EntityTag) {
        let early = state.withLock { state -> CustomizationState? in
            state.has = etag
            defer { state.early = nil }
            return state.early
        }
        if let early { changed(early) }
    }

    func changed(_ customization: CustomizationState) {
        let differs = state.withLock { state -> Bool in
            guard let has = state.has else {
                state.early = customization
                return false
            }
            return !customization.etag.weakMatches(has)
        }
        if differs { finish(.changed(customization)) }
    }

    func ended(_ reason: FollowEnd) { finish(.ended(reason)) }

    private func finish(_ outcome: Outcome) {
        let waiting = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        waiting?.resume(returning: outcome)
    }

    /// Waits for the first outcome, at most `seconds`; cancelling the calling task (the client left) ends it.
    func wait(seconds: Int) async -> Outcome {
        let timer = Task { [self] in
            try? await Task.sleep(for: .seconds(seconds))
            finish(.timedOut)  // a no-op once another outcome won (also when cancelled below)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let ready = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    state.continuation = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish(.cancelled)  // also when already cancelled before the wait began
        }
    }
}
