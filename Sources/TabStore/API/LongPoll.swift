import TabStoreHTTP
import TabStoreSupport

/// One long poll (`GET …/customization?waitSeconds=N`) waiting for a revision other than the one its client
/// has. It waits as a suspended task: no event-loop thread and no pool thread is held, and its timer is a
/// sleeping task too. The first outcome wins (a change, the timeout, or being let go); later ones are ignored.
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
    }

    /// Touched by the publishing thread, the timer and the waiting task, each under this lock.
    private let state = Locked(State())
    /// Whether a state is still the one the client has (its `If-None-Match`).
    private let clientHas: @Sendable (CustomizationState) -> Bool

    init(clientHas: @escaping @Sendable (CustomizationState) -> Bool) {
        self.clientHas = clientHas
    }

    func changed(_ state: CustomizationState) {
        if !clientHas(state) { finish(.changed(state)) }
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
