import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The person's customization each time it changes, from the change feed (`GET …/customization/events`): first
/// the current one (unless resumed from it), then one per committed revision (several quick ones may arrive as
/// the latest only: each carries the whole document). It reconnects by itself, with `Last-Event-ID` so nothing
/// already delivered comes again, after the waits of `Configuration.feedBackoff`; when the server says
/// `token-expired` (or answers 401) it asks the token provider for a fresh token and reconnects at once.
/// It ends by throwing when the server refuses the feed for good (401 with a fresh token, 403, 404, and
/// `TabStoreError.schemaVersionRetired` once the client's schema version is retired); a token provider that throws
/// is retried like an unreachable server. Each event is the customization under the client's schema version. Stop iterating (or cancel the task) to
/// close it.
///
/// The value can be shared: every `for await` (every `makeAsyncIterator()`) opens its own connection and gets
/// every event from the current customization on, so several tasks or views may iterate one value. While the
/// feed cannot connect, `TabStoreClient.statusUpdates()` says `.offline` (at once when the server refuses the
/// connection, after the transport's `streamIdleTimeout` when it falls silent) and `.reconnecting` while retrying.
public struct CustomizationUpdates: AsyncSequence, Sendable {
    /// Each customization the feed delivers.
    public typealias Element = Customization

    let open: @Sendable () -> AsyncThrowingStream<Customization, any Error>

    /// One iteration's connection: closed when the iterator is dropped or its task cancelled.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Customization, any Error>.AsyncIterator

        /// The next customization; nil when the feed ended; throws when the server refused it for good.
        public mutating func next() async throws -> Customization? { try await base.next() }
    }

    /// A new connection of its own.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: open().makeAsyncIterator()) }
}

extension TabStoreClient {
    /// Follows the change feed (see `CustomizationUpdates`).
    /// - Parameter lastEventId: the `id` of a customization the app already has (its `etag` without quotes), to
    ///   skip it; nil to start with the current customization.
    public func updates(resumingFrom lastEventId: String? = nil) -> CustomizationUpdates {
        CustomizationUpdates { [self] in
            let (stream, continuation) = AsyncThrowingStream<Customization, any Error>.makeStream()
            let task = Task { await self.follow(FeedState(lastEventId: lastEventId), into: continuation) }
            continuation.onTermination = { _ in task.cancel() }
            return stream
        }
    }

    struct FeedState {
        var lastEventId: String?
        /// The token the last connection used.
        var token: String?
        /// Connections refused with 401 in a row (the second, with a fresh token, ends the feed).
        var unauthorized = 0
        /// Reconnects in a row that delivered nothing.
        var attempt = 0
    }

    enum FeedEnd {
        /// The stream ended or could not be opened: reconnect after a wait.
        case lost
        /// The token expired or was refused: reconnect at once with a fresh one.
        case needsToken
        /// The server said the client's schema version was retired: reconnect at once, so that the feed ends with
        /// the 410 the next connection gets (`TabStoreError.schemaVersionRetired`, with the app's minimum).
        case retired
    }

    private func follow(_ start: FeedState, into continuation: AsyncThrowingStream<Customization, any Error>.Continuation) async {
        var state = start
        var refresh = false
        while !Task.isCancelled {
            let end: FeedEnd
            do {
                let token = refresh ? try await tokens.refresh(rejected: state.token) : try await tokens.current()
                refresh = false
                state.token = token
                end = try await connect(&state, continuation)
            } catch where Task.isCancelled || StatusHub.isCancellation(error) {
                break  // the app stopped iterating: nothing about the connection to report
            } catch let error as TabStoreError where !error.isTransient {
                statusHub.failed(error)
                continuation.finish(throwing: error)
                return
            } catch {
                // No answer, a passing server state, or the token provider failed (offline too): retry.
                if let error = error as? TabStoreError { statusHub.failed(error) } else { statusHub.failed(.unreachable(error)) }
                end = .lost
            }
            if Task.isCancelled { break }
            if end == .lost, !status.isOffline { statusHub.update { $0.connectivity = .reconnecting } }
            switch end {
            case .needsToken:
                refresh = true
            case .retired where state.attempt == 0:
                state.attempt = 1  // at once, once: a server that keeps streaming after saying so waits as a lost stream
            case .retired, .lost:
                do {
                    try await configuration.feedBackoff.sleep(attempt: state.attempt)
                } catch {
                    break
                }
                state.attempt += 1
            }
        }
        continuation.finish()
    }

    /// One connection: delivers its events until it ends.
    private func connect(_ state: inout FeedState, _ continuation: AsyncThrowingStream<Customization, any Error>.Continuation) async throws -> FeedEnd
    {
        var headers = ["Authorization": "Bearer " + (state.token ?? "")]
        if let id = state.lastEventId { headers["Last-Event-ID"] = id }
        var request = request("GET", resource("customization/events"), headers: headers)
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        let stream: TransportStream
        do {
            stream = try await configuration.transport.stream(request)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw TabStoreError.unreachable(error)
        }
        if stream.status == 200 { statusHub.answered() }
        guard stream.status == 200 else {
            var body = Data()
            for try await chunk in stream.body where body.count < 65_536 { body.append(chunk) }
            if stream.status == 401 {
                state.unauthorized += 1
                if state.unauthorized == 1 { return .needsToken }
            }
            throw try await failure(TransportResponse(status: stream.status, headers: stream.headers, body: body))
        }
        state.unauthorized = 0
        var parser = EventStreamParser()
        let customizationURL = resource("customization")
        for try await chunk in stream.body {
            for event in parser.feed(chunk) {
                switch event.event {
                case "customization":
                    guard let id = event.id, id != state.lastEventId else { continue }
                    let data = Data(event.data.utf8)
                    guard let customization = try? TabStoreJSON.decode(Customization.self, from: data) else { continue }
                    state.lastEventId = id
                    state.attempt = 0
                    await cache.store(customizationURL, etag: "\"\(id)\"", body: data)
                    await OpenQueues.served(customization, by: self)
                    continuation.yield(customization)
                case "token-expired":
                    return .needsToken
                case "schema-version-retired":
                    return .retired
                default:
                    continue  // `shutdown` is followed by the end of the stream
                }
            }
        }
        return .lost
    }
}
