import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A whole HTTP response.
public struct TransportResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Header fields with lowercased names.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// A value with these members.
    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// The value of the header field `name` (any case), if present.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A response whose body arrives in pieces as the server sends them (the change feed).
public struct TransportStream: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Header fields with lowercased names.
    public var headers: [String: String]
    /// The body's bytes as they arrive; ends when the server closes, throws when the connection fails. Stop
    /// iterating (or cancel the iterating task) to close the connection.
    public var body: AsyncThrowingStream<Data, any Error>

    /// A value with these members.
    public init(status: Int, headers: [String: String], body: AsyncThrowingStream<Data, any Error>) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// The value of the header field `name` (any case), if present.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// How `TabStoreClient` reaches the server. `URLSessionTransport` is the real one; tests and apps may wrap it
/// (to count requests, or to lose an answer on purpose).
public protocol TabStoreTransport: Sendable {
    /// Sends one request and returns the whole response (any status). Throws only when no response arrived.
    func send(_ request: URLRequest) async throws -> TransportResponse
    /// Sends one request and returns once the response's head arrived, with its body still streaming.
    func stream(_ request: URLRequest) async throws -> TransportStream
}

/// `TabStoreTransport` over `URLSession`: no URL cache (the client does its own conditional requests), no
/// cookies. Streams use a `URLSessionDataDelegate`, which hands over the body in pieces on Apple platforms and on
/// Linux (`FoundationNetworking` has no `URLSession.bytes`).
public final class URLSessionTransport: TabStoreTransport, @unchecked Sendable {
    private let session: URLSession
    private let requestTimeout: TimeInterval
    private let streamIdleTimeout: TimeInterval

    /// - Parameters:
    ///   - requestTimeout: the longest wait for a request's answer.
    ///   - streamIdleTimeout: the longest silence on a stream before it counts as lost (the server sends a
    ///     keep-alive comment at least every 15 s).
    public init(requestTimeout: TimeInterval = 30, streamIdleTimeout: TimeInterval = 45) {
        self.requestTimeout = requestTimeout
        self.streamIdleTimeout = streamIdleTimeout
        session = URLSession(configuration: Self.configuration(timeout: requestTimeout))
    }

    deinit { session.finishTasksAndInvalidate() }

    static func configuration(timeout: TimeInterval) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.timeoutIntervalForRequest = timeout
        return configuration
    }

    /// Sends `request` and returns the whole response.
    public func send(_ request: URLRequest) async throws -> TransportResponse {
        var request = request
        request.timeoutInterval = requestTimeout
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return TransportResponse(status: http.statusCode, headers: Self.headers(http), body: data)
    }

    /// Sends `request` and returns once the response's head arrived.
    public func stream(_ request: URLRequest) async throws -> TransportStream {
        var request = request
        request.timeoutInterval = streamIdleTimeout
        let delegate = StreamDelegate()
        let session = URLSession(configuration: Self.configuration(timeout: streamIdleTimeout), delegate: delegate, delegateQueue: nil)
        let task = session.dataTask(with: request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (head: CheckedContinuation<TransportStream, any Error>) in
                delegate.start(head: head, task: task, session: session)
            }
        } onCancel: {
            task.cancel()
        }
    }

    static func headers(_ response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return headers
    }
}

/// Receives one streamed response: resolves the head when the first bytes (or the end) arrive, then forwards
/// each piece. Reads the head from the task rather than implementing `didReceive response`, whose completion
/// handler's annotations differ between Foundation's implementations.
private final class StreamDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var head: CheckedContinuation<TransportStream, any Error>?
    private var body: AsyncThrowingStream<Data, any Error>.Continuation?

    func start(head: CheckedContinuation<TransportStream, any Error>, task: URLSessionDataTask, session: URLSession) {
        lock.withLock { self.head = head }
        task.resume()
        _ = session  // kept alive by its delegate's task until invalidated in didCompleteWithError
    }

    /// Resolves the head once, from the task's response; nil when it already was.
    private func takeHead(_ task: URLSessionTask) {
        let pending: CheckedContinuation<TransportStream, any Error>? = lock.withLock {
            defer { head = nil }
            return head
        }
        guard let pending else { return }
        guard let http = task.response as? HTTPURLResponse else {
            pending.resume(throwing: URLError(.badServerResponse))
            return
        }
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.onTermination = { _ in task.cancel() }
        lock.withLock { body = continuation }
        pending.resume(returning: TransportStream(status: http.statusCode, headers: URLSessionTransport.headers(http), body: stream))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        takeHead(dataTask)
        _ = lock.withLock { body }?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error, let pending = lock.withLock({ () -> CheckedContinuation<TransportStream, any Error>? in
            defer { head = nil }
            return head
        }) {
            pending.resume(throwing: error)
        } else {
            takeHead(task)
        }
        let continuation = lock.withLock { () -> AsyncThrowingStream<Data, any Error>.Continuation? in
            defer { body = nil }
            return body
        }
        if let error { continuation?.finish(throwing: error) } else { continuation?.finish() }
        session.finishTasksAndInvalidate()
    }
}
