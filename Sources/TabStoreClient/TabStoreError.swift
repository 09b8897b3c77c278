import Foundation

/// Why a `TabStoreClient` call failed.
public enum TabStoreError: LocalizedError, Sendable, CustomStringConvertible {
    /// 412: the write named a customization that is no longer current. `current` is the server's state now:
    /// rebase the person's change on it and try again.
    case conflict(current: Customization)
    /// 422: well-formed but refused by the tab schema's rules; `problem.codes` say which (`not-hideable`, …).
    case refused(Problem)
    /// 401 even with a freshly provided token.
    case unauthorized(Problem?)
    /// 410 `schema-version-retired`: the operator retired the schema version this client was configured with
    /// (`Configuration.schemaVersion` is below the app's `minimumSchemaVersion`, in `problem`). Nothing this
    /// version reads or writes is served any more: ask the person to update the app.
    case schemaVersionRetired(Problem)
    /// 404 `schema-version-not-found`: the server has no such schema version for this app, usually because the
    /// app shipped before its schema was registered (or the app was re-created). The offline queue keeps its
    /// writes and retries; other calls fail until the operator registers the version.
    case schemaVersionNotFound(Problem)
    /// Any other refusal or failure the server answered with (403, 404 other than `schema-version-not-found`, 429,
    /// 503, …).
    case server(status: Int, problem: Problem?)
    /// No answer: the server could not be reached, the connection broke or timed out. A write may or may not
    /// have been applied; the offline queue resolves that with its `Idempotency-Key`.
    case unreachable(any Error)
    /// An answer the client could not read (not the contract's shape).
    case invalidResponse(String)

    /// The problem the server answered with, if any.
    public var problem: Problem? {
        switch self {
        case .refused(let problem), .schemaVersionRetired(let problem), .schemaVersionNotFound(let problem): problem
        case .unauthorized(let problem), .server(_, let problem): problem
        case .conflict, .unreachable, .invalidResponse: nil
        }
    }

    /// A line for logs.
    public var description: String {
        switch self {
        case .conflict(let current): "conflict: the customization is at \(current.etag)"
        case .refused(let problem): "refused: \(problem)"
        case .unauthorized(let problem): "unauthorized\(problem.map { ": \($0.detail)" } ?? "")"
        case .schemaVersionRetired(let problem): "schema version retired: \(problem.detail)"
        case .schemaVersionNotFound(let problem): "schema version not found: \(problem.detail)"
        case .server(let status, let problem): "server answered \(status)\(problem.map { ": \($0.detail)" } ?? "")"
        case .unreachable(let error): "unreachable: \(error)"
        case .invalidResponse(let detail): "invalid response: \(detail)"
        }
    }

    /// A sentence for a person: the server's problem detail when it sent one.
    public var errorDescription: String? {
        switch self {
        case .conflict: "Your tabs were changed on another device."
        case .refused(let problem): problem.detail
        case .unauthorized: "You are not signed in to sync your tabs."
        case .schemaVersionRetired: "This version of the app can no longer sync its tabs. Please update the app."
        case .schemaVersionNotFound: "The tab sync service does not know this version of the app yet."
        case .server(let status, let problem): problem?.detail ?? "The tab sync service answered \(status)."
        case .unreachable: "The tab sync service cannot be reached."
        case .invalidResponse: "The tab sync service sent an answer this app cannot read."
        }
    }

    /// The rule codes of the server's problem (`not-hideable`, …), comma separated; nil without any.
    public var failureReason: String? {
        guard let codes = problem?.codes, !codes.isEmpty else { return nil }
        return codes.map(\.rawValue).joined(separator: ", ")
    }

    /// Whether trying again later may succeed (no answer, or a passing state of the server: 408, 429, 5xx).
    public var isTransient: Bool {
        switch self {
        case .unreachable: true
        case .server(let status, _): status == 408 || status == 429 || status >= 500
        case .conflict, .refused, .unauthorized, .schemaVersionRetired, .schemaVersionNotFound, .invalidResponse: false
        }
    }
}

/// Supplies the bearer token (a JWT the app's backend minted). `refresh` is false for the token to use now
/// (return a cached one) and true when the last one was refused (401) or expired (`token-expired` on the change
/// feed): return a new one then.
public typealias TokenProvider = @Sendable (_ refresh: Bool) async throws -> String

/// Holds the current token; concurrent refreshes share one call to the provider.
actor TokenStore {
    private let provider: TokenProvider
    private var token: String?
    private var pending: Task<String, any Error>?

    init(provider: @escaping TokenProvider) { self.provider = provider }

    /// The token to send now.
    func current() async throws -> String {
        if let token { return token }
        return try await fetch(refresh: false)
    }

    /// A token other than `rejected`: the current one when someone already refreshed, else a new one.
    func refresh(rejected: String?) async throws -> String {
        if let token, token != rejected { return token }
        return try await fetch(refresh: true)
    }

    private func fetch(refresh: Bool) async throws -> String {
        if let pending { return try await pending.value }
        let provider = provider
        let task = Task { try await provider(refresh) }
        pending = task
        defer { pending = nil }
        let fresh = try await task.value
        token = fresh
        return fresh
    }
}

/// The last representation per URL with its entity tag: sent back as `If-None-Match`, served again on 304.
actor RepresentationCache {
    struct Entry: Sendable {
        let etag: String
        let body: Data
    }

    private var entries: [String: Entry] = [:]

    func entry(_ url: URL) -> Entry? { entries[url.absoluteString] }

    func store(_ url: URL, etag: String?, body: Data) {
        guard let etag, !etag.hasPrefix("W/") else { return }
        entries[url.absoluteString] = Entry(etag: etag, body: body)
    }

    func remove(_ url: URL) { entries[url.absoluteString] = nil }

    /// Forgets every cached representation.
    func removeAll() { entries = [:] }
}
