import Dispatch
import Synchronization
import TabStoreHTTP
import TabStoreSupport

/// What every event loop of one server shares. Immutable apart from atomics.
final class ServerContext: Sendable {
    let configuration: ServerConfiguration
    let responder: any HTTPResponder
    let state: ServerState
    let observer: (any ServerObserver)?
    let logger: Logger
    let openConnections = Atomic<Int>(0)
    /// Bytes reserved for request bodies, over every loop; at most `bodyBudget`. A connection reserves its
    /// request's body bytes as they arrive, so it never holds more than the body limit, and only what it sent.
    let bodyBytesInFlight = Atomic<Int>(0)
    let bodyBudget: Int
    /// When the loops may watch the listener again after accept(2) failed, and the warning's rate limit.
    let acceptBackoff = Locked(AcceptBackoff())
    /// Set when the shutdown deadline passed: loops close everything and exit.
    let forceStop = Atomic<Bool>(false)
    private let requestCounter = Atomic<UInt64>(0)
    private let idPrefix: String

    init(configuration: ServerConfiguration, responder: any HTTPResponder, state: ServerState, observer: (any ServerObserver)?, logger: Logger) {
        self.configuration = configuration
        self.responder = responder
        self.state = state
        self.observer = observer
        self.logger = logger
        self.bodyBudget = max(configuration.maxBodyBytesInFlight, configuration.limits.maxBodyBytes)
        var prefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        while prefix.count < 8 { prefix = "0" + prefix }
        self.idPrefix = prefix
    }

    /// Reserves `bytes` of the shared body budget; false (nothing reserved) when they do not fit.
    func reserveBodyBytes(_ bytes: Int) -> Bool {
        var current = bodyBytesInFlight.load(ordering: .relaxed)
        while true {
            guard bytes <= bodyBudget - current else { return false }
            let (exchanged, original) = bodyBytesInFlight.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    func releaseBodyBytes(_ bytes: Int) {
        let left = bodyBytesInFlight.subtract(bytes, ordering: .relaxed).newValue
        precondition(left >= 0, "released more body bytes than were reserved")
    }

    /// A request id unique within this process run: a random prefix and a counter.
    func makeRequestId() -> String {
        let number = requestCounter.add(1, ordering: .relaxed).newValue
        return idPrefix + "-" + String(number, radix: 16)
    }

    /// A client's `X-Request-ID` is echoed only when it is short and plain, so it cannot inject into logs or headers.
    static func saneRequestId(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= 128 else { return nil }
        let ok = value.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
        }
        return ok ? value : nil
    }

    static func monotonicNow() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
