import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One person's tab customization in one app, over TabStore's HTTP API v1.1.
///
/// Reads are conditional (`If-None-Match` with the last representation's ETag; a 304 serves the cached one),
/// writes take `ifMatch:` to apply only to the customization the caller saw (a 412 becomes
/// `TabStoreError.conflict` with the server's current state), a 401 asks the token provider for a fresh token
/// and retries once. `offlineQueue(file:)` keeps writes across offline periods and app restarts, `updates()`
/// follows the change feed. Configured with the schema version the app was built with
/// (`Configuration.schemaVersion`), every call is answered and validated under that version; once the operator
/// retires it, calls throw `TabStoreError.schemaVersionRetired` (ask the person to update).
public final class TabStoreClient: Sendable {
    /// Tuning; the defaults suit an app.
    public struct Configuration: Sendable {
        /// The tab schema version this app binary was built with (its `TabView`'s tabs), sent as `?schemaVersion=`
        /// on every customization, layout, history, revert and change-feed request: the server answers with the
        /// tabs this version has, and a write changes only what this version can see (choices about tabs of other
        /// versions stay as stored). nil: the server's current version, whatever it is (API v1.0-v1.2 behaviour;
        /// an app whose tabs can change between releases should set it). Must be at least 1.
        ///
        /// Once the operator retires it (raises the app's minimum above it) every call throws
        /// `TabStoreError.schemaVersionRetired`: ask the person to update the app. A version the server does not
        /// know (yet) throws `TabStoreError.schemaVersionNotFound`.
        public var schemaVersion: Int?
        /// How requests travel; `URLSessionTransport()` unless replaced (to observe or shape traffic).
        public var transport: any TabStoreTransport
        /// Waits between change-feed reconnects after the stream ended or could not be opened.
        public var feedBackoff: Backoff
        /// Waits between offline-queue replays that found the server unreachable.
        public var queueBackoff: Backoff
        /// Waits between the attempts of a direct write (`apply`, `replace`, `reset`, `revert`) that got no answer
        /// or a passing server state (408, 429, 5xx); every attempt sends the same `Idempotency-Key`.
        public var writeBackoff: Backoff
        /// Attempts of a direct write in all (at least 1); the last failure is thrown.
        public var writeAttempts: Int

        /// A configuration; the defaults suit an app.
        public init(schemaVersion: Int? = nil, transport: any TabStoreTransport = URLSessionTransport(),
                    feedBackoff: Backoff = Backoff(initial: 1, maximum: 30), queueBackoff: Backoff = Backoff(initial: 1, maximum: 60),
                    writeBackoff: Backoff = Backoff(initial: 0.5, maximum: 4), writeAttempts: Int = 3) {
            self.schemaVersion = schemaVersion
            self.transport = transport
            self.feedBackoff = feedBackoff
            self.queueBackoff = queueBackoff
            self.writeBackoff = writeBackoff
            self.writeAttempts = max(1, writeAttempts)
        }
    }

    /// The server's address.
    public let baseURL: URL
    /// The app's id.
    public let appId: TabStoreID
    /// The person's id.
    public let userId: TabStoreID
    let configuration: Configuration
    let statusHub = StatusHub()
    let tokens: TokenStore
    /// Keyed by URL, whose query names the schema version: a representation cached under one version is never
    /// served (nor its ETag sent) for another.
    let cache = RepresentationCache()

    /// The schema version this client reads and writes under (`Configuration.schemaVersion`); nil: the current one.
    public var schemaVersion: Int? { configuration.schemaVersion }

    /// - Parameters:
    ///   - baseURL: the server, e.g. `https://tabs.example.com` (a path prefix is kept).
    ///   - appId: the app's id (`com.myApp`).
    ///   - userId: the person's id, any 1-256 UTF-8 bytes without control characters (percent-encoded here).
    ///   - token: the token provider (see `TokenProvider`).
    public init(baseURL: URL, appId: TabStoreID, userId: TabStoreID, configuration: Configuration = Configuration(), token: @escaping TokenProvider) {
        self.baseURL = baseURL
        self.appId = appId
        self.userId = userId
        self.configuration = configuration
        tokens = TokenStore(provider: token)
    }

    // MARK: The API

    /// The person's customization (revision 0 with no choices for someone who never stored one).
    public func customization() async throws -> Customization {
        let customization = try decode(Customization.self, try await read(resource("customization")))
        await OpenQueues.served(customization, by: self)
        return customization
    }

    /// What the `TabView` shows for this person.
    /// - Parameters:
    ///   - platform: the client's platform; the person's choices apply where Apple applies them (iPadOS with
    ///     `sidebarAdaptable`) unless the schema opts more platforms in. nil: as API v1.0 (choices always apply).
    ///   - style: the client's `TabViewStyle` (nil with a platform: `sidebarAdaptable`).
    public func layout(sizeClass: SizeClass, platform: Platform? = nil, style: LayoutStyle? = nil) async throws -> TabLayout {
        var query = [("sizeClass", sizeClass.rawValue)]
        if let platform { query.append(("platform", platform.rawValue)) }
        if let style { query.append(("style", style.rawValue)) }
        return try decode(TabLayout.self, try await read(resource("layout", query: query)))
    }

    /// Applies `operations` atomically, in order. Without `ifMatch` they apply to the latest revision (changes
    /// from several devices merge); with it only while `ifMatch` is still current, else `TabStoreError.conflict`.
    /// - Parameter idempotencyKey: sent with every attempt so that the server applies the write once, also when an
    ///   answer was lost; nil: a fresh one. A write that got no answer is retried (`Configuration.writeAttempts`).
    /// - Returns: the customization as stored after the write.
    /// - Throws: `TabStoreError.refused` with the rule codes when the schema's rules refuse one.
    @discardableResult
    public func apply(_ operations: [TabOperation], ifMatch: Customization? = nil, idempotencyKey: String? = nil) async throws -> Customization {
        let body = try TabStoreJSON.encode(PatchRequest(operations: operations))
        return try await writeCustomization("PATCH", resource("customization"), body: body, ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// Replaces the person's choices whole (`tabs`, `sections`, `tabBarOrder`, `dynamicTabs` of `customization`;
    /// the server-owned members are not sent).
    /// - Parameter idempotencyKey: as in `apply(_:ifMatch:idempotencyKey:)`.
    /// - Returns: the customization as stored.
    /// - Throws: `TabStoreError` (`.conflict`, `.refused`, …).
    @discardableResult
    public func replace(_ customization: Customization, ifMatch: Customization? = nil, idempotencyKey: String? = nil) async throws -> Customization {
        let body = try TabStoreJSON.encode(Customization.Choices(customization))
        return try await writeCustomization("PUT", resource("customization"), body: body, ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// Forgets the person's choices: back to the schema's defaults, as a new revision.
    /// - Parameter idempotencyKey: as in `apply(_:ifMatch:idempotencyKey:)`.
    /// - Returns: the customization as stored after it (read right after the server's 204).
    /// - Throws: `TabStoreError` (`.conflict`, …).
    @discardableResult
    public func reset(ifMatch: Customization? = nil, idempotencyKey: String? = nil) async throws -> Customization {
        let url = resource("customization")
        _ = try await retrying(idempotencyKey) { key in try await self.write("DELETE", url, body: nil, ifMatch: ifMatch, idempotencyKey: key) }
        await cache.remove(url)
        return try await customization()
    }

    /// One page of the kept revisions, newest first; pass `nextBefore` as `before` for the next page.
    public func history(limit: Int? = nil, before: Int? = nil) async throws -> HistoryPage {
        var query: [(String, String)] = []
        if let limit { query.append(("limit", String(limit))) }
        if let before { query.append(("before", String(before))) }
        let response = try await perform(request("GET", resource("customization/history", query: query)))
        guard response.status == 200 else { throw try await failure(response) }
        return try decode(HistoryPage.self, response.body)
    }

    /// Stores revision `revision`'s choices (reconciled with the current schema) as a new revision; 0 is the
    /// empty customization. Undo is itself undoable.
    /// - Parameter idempotencyKey: as in `apply(_:ifMatch:idempotencyKey:)`.
    /// - Returns: the customization as stored after it.
    /// - Throws: `TabStoreError` (`.conflict`, `.server` 404 for a revision not kept, …).
    @discardableResult
    public func revert(to revision: Int, ifMatch: Customization? = nil, idempotencyKey: String? = nil) async throws -> Customization {
        let body = try TabStoreJSON.encode(RevertRequest(toRevision: revision))
        return try await writeCustomization("POST", resource("customization/revert"), body: body, ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// The longest `Retry-After` (seconds) a direct write waits out before retrying by itself.
    static let maximumRetryAfter = 10.0

    /// Runs `attempt` with `key` (or a fresh one) until it succeeds, fails for good, or `writeAttempts` ran out,
    /// waiting `writeBackoff` (or the server's `Retry-After`, when longer) between attempts: the same key each
    /// time, so the server applies it once.
    func retrying<T>(_ key: String?, _ attempt: (String) async throws -> T) async throws -> T {
        let key = key ?? UUID().uuidString
        var tries = 0
        while true {
            do {
                return try await attempt(key)
            } catch let error as TabStoreError where error.isTransient && tries + 1 < configuration.writeAttempts {
                // A `Retry-After` the server sent is honoured; past `maximumRetryAfter` the write is not held
                // that long: the error goes to the caller (the offline queue keeps such a write for later).
                let asked = statusHub.secondsToWait
                if asked > Self.maximumRetryAfter { throw error }
                let backoff = configuration.writeBackoff.delay(attempt: tries)
                try await Task.sleep(nanoseconds: UInt64(max(backoff, asked) * 1_000_000_000))
                tries += 1
            }
        }
    }

    // MARK: Requests

    func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do {
            return try TabStoreJSON.decode(type, from: data)
        } catch {
            throw TabStoreError.invalidResponse("\(T.self): \(error)")
        }
    }

    /// `…/v1/apps/{appId}/users/{userId}/<path>` with the ids percent-encoded as path segments, under the
    /// configured schema version (every path the client uses is one that takes `schemaVersion`).
    func resource(_ path: String, query: [(String, String)] = []) -> URL {
        resource(path, query: query, schemaVersion: configuration.schemaVersion)
    }

    /// `resource(_:query:)` under `schemaVersion` (nil: none sent, the server's current version); the offline
    /// queue sends each write under the version it was queued with.
    func resource(_ path: String, query: [(String, String)] = [], schemaVersion: Int?) -> URL {
        var query = query
        if let schemaVersion { query.append(("schemaVersion", String(schemaVersion))) }
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += "/v1/apps/" + Self.segment(appId.string) + "/users/" + Self.segment(userId.string) + "/" + path
        if !query.isEmpty { text += "?" + query.map { Self.segment($0.0) + "=" + Self.segment($0.1) }.joined(separator: "&") }
        guard let url = URL(string: text) else { preconditionFailure("not a URL: \(text)") }
        return url
    }

    /// One path segment (or query component): every byte but RFC 3986's unreserved ones percent-encoded, and dots
    /// too when the segment is only dots (`.` and `..` would otherwise be removed as dot-segments on the way).
    static func segment(_ value: String) -> String {
        let onlyDots = !value.isEmpty && value.utf8.allSatisfy { $0 == UInt8(ascii: ".") }
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            let unreserved = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~") || (byte == UInt8(ascii: ".") && !onlyDots)
            if unreserved {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return out
    }

    func request(_ method: String, _ url: URL, body: Data? = nil, headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Sends `request` with the current token; on 401 once more with a fresh one.
    /// - Throws: `TabStoreError.unreachable` when no answer arrived.
    func perform(_ request: URLRequest) async throws -> TransportResponse {
        let token = try await tokens.current()
        let first = try await send(request, token: token)
        guard first.status == 401 else { return first }
        let fresh = try await tokens.refresh(rejected: token)
        return try await send(request, token: fresh)
    }

    private func send(_ request: URLRequest, token: String) async throws -> TransportResponse {
        var request = request
        request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        do {
            let response = try await configuration.transport.send(request)
            if response.status < 500 { statusHub.answered() } else { statusHub.failed(.server(status: response.status, problem: nil)) }
            if response.status == 429 || response.status == 503 { statusHub.serverAsksToWait(response.header("Retry-After")) }
            return response
        } catch let error as CancellationError {
            throw error
        } catch where StatusHub.isCancellation(error) || Task.isCancelled {
            // The app's own cancellation (URLSession reports it as `URLError.cancelled`): not a network failure.
            throw CancellationError()
        } catch {
            let failure = TabStoreError.unreachable(error)
            statusHub.failed(failure)
            throw failure
        }
    }

    /// A conditional GET: `If-None-Match` with the cached ETag, the cached body on 304.
    func read(_ url: URL) async throws -> Data {
        let cached = await cache.entry(url)
        var headers: [String: String] = [:]
        if let cached { headers["If-None-Match"] = cached.etag }
        let response = try await perform(request("GET", url, headers: headers))
        switch response.status {
        case 200:
            await cache.store(url, etag: response.header("ETag"), body: response.body)
            return response.body
        case 304 where cached != nil:
            return cached!.body
        default:
            throw try await failure(response)
        }
    }

    /// A write that answers with the whole customization, which becomes the cached representation.
    func writeCustomization(_ method: String, _ url: URL, body: Data, ifMatch: Customization?, idempotencyKey: String?) async throws -> Customization
    {
        let response = try await retrying(idempotencyKey) { key in try await write(method, url, body: body, ifMatch: ifMatch, idempotencyKey: key) }
        let customization = try decode(Customization.self, response.body)
        await cache.store(resource("customization"), etag: response.header("ETag") ?? customization.etag, body: response.body)
        await OpenQueues.served(customization, by: self)
        return customization
    }

    /// A write: 2xx answers; a 412 becomes `.conflict` with the current customization; anything else its error.
    func write(_ method: String, _ url: URL, body: Data?, ifMatch: Customization?, idempotencyKey: String?) async throws -> TransportResponse {
        var headers: [String: String] = [:]
        if let ifMatch { headers["If-Match"] = ifMatch.etag }
        if let idempotencyKey { headers["Idempotency-Key"] = idempotencyKey }
        let response = try await perform(request(method, url, body: body, headers: headers))
        switch response.status {
        case 200..<300: return response
        case 412: throw TabStoreError.conflict(current: try await customization())
        default: throw try await failure(response)
        }
    }

    /// The error for a refusal.
    func failure(_ response: TransportResponse) async throws -> TabStoreError {
        let problem = try? TabStoreJSON.decode(Problem.self, from: response.body)
        switch (response.status, problem) {
        case (401, _): return .unauthorized(problem)
        case (422, let problem?): return .refused(problem)
        // By type, not status alone: a 404 is also `app-not-found`, and a proxy may answer 410 with anything.
        case (410, let problem?) where problem.type == .schemaVersionRetired: return .schemaVersionRetired(problem)
        case (404, let problem?) where problem.type == .schemaVersionNotFound: return .schemaVersionNotFound(problem)
        default: return .server(status: response.status, problem: problem)
        }
    }
}

/// Exponential waits with jitter: `initial`, then doubling up to `maximum`.
public struct Backoff: Sendable, Hashable {
    /// The first wait, in seconds.
    public var initial: Double
    /// The longest wait, in seconds.
    public var maximum: Double
    /// A random share (0...1) taken off each wait, so that many clients do not retry in step.
    public var jitter: Double

    /// A value with these members.
    public init(initial: Double, maximum: Double, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The wait before attempt `attempt` (0: the first retry), in seconds.
    public func delay(attempt: Int) -> Double {
        let raw = min(maximum, initial * pow(2, Double(min(attempt, 30))))
        return raw * (1 - Double.random(in: 0...max(0, min(jitter, 1))))
    }

    func sleep(attempt: Int) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, delay(attempt: attempt)) * 1_000_000_000))
    }
}
