import Dispatch
import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreSupport
import TabStoreTestSupport

/// The change feed end to end: a real SSE client over sockets against a live server (docs/devices.md "Follow changes: the change feed").
@Suite("Change feed (server-sent events)", .serialized)
struct FeedTests {
    static func events(_ creds: Credentials) -> String { creds.customization + "/events" }

    /// The next event, read off the pool.
    static func next(_ client: SSEClient, timeout: Double = 30) async throws -> SSEClient.Block? {
        try await offPool { client.nextEvent(timeout: timeout) }
    }

    @Test("the first event is the current customization (revision 0 for none), as a GET serves it")
    func firstEvent() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let stream = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))
            #expect(stream.status == 200 && stream.headers["Content-Type"] == "text/event-stream")
            #expect(stream.headers["Cache-Control"] == "no-store" && stream.headers["Transfer-Encoding"] == "chunked")
            let opening = try await offPool { stream.nextBlock() }
            #expect(opening?.retry == "1000" && opening?.isEvent == false)
            let first = try await Self.next(stream)
            let get = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(first?.event == "customization" && first?.id == "0.1" && first?.data == get.text)
        }
    }

    @Test("one event per committed revision, in order, each readable by a GET when it arrives")
    func ordering() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let stream = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))
            #expect(try await Self.next(stream)?.id == "0.1")
            for (index, tab) in ["climate", "bell", "lights"].enumerated() {
                let write = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide(tab)))
                let event = try await Self.next(stream)
                #expect(event?.id == "\(index + 1).1" && event?.data == write.text)
                // Woken after the commit, never before: what the event names is what a GET reads now.
                #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).etag == "\"\(index + 1).1\"")
            }
            _ = try await live.send(.delete(creds.customization).bearer(creds.userToken))
            let deleted = try await Self.next(stream)
            #expect(deleted?.id == "4.1" && Sync.hidden(try? JSONParser.parse(Array((deleted?.data ?? "").utf8))) == [])
        }
    }

    @Test("Last-Event-ID naming the current revision skips the first event; a stale one gets the current at once")
    func resume() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell")))
            let resumed = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken).header("Last-Event-ID", "1.1"))
            #expect(try await Self.next(resumed, timeout: 0.5) == nil)
            let byQuery = try await live.follow(.get(Self.events(creds) + "?lastEventId=1.1").bearer(creds.userToken))
            #expect(try await Self.next(byQuery, timeout: 0.3) == nil)
            let stale = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken).header("Last-Event-ID", "0.1"))
            #expect(try await Self.next(stale)?.id == "1.1")
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            for stream in [resumed, byQuery, stale] { #expect(try await Self.next(stream)?.id == "2.1") }
        }
    }

    @Test("keep-alive comments come while nothing changes")
    func keepAlive() async throws {
        try await withLiveService(adjust: { $0.feedKeepAliveSeconds = 0.3 }) { live in
            let creds = try await Credentials.register(on: live)
            let stream = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))
            _ = try await Self.next(stream)
            let comments = try await offPool { (0..<3).compactMap { _ in stream.nextBlock(timeout: 10) }.filter { $0.comments == ["keep-alive"] } }
            // Three within 10 s each, so the 0.3 s interval is the one in force (the default, 15 s, would give none):
            // an outcome, not a stopwatch on a machine that may be slow.
            #expect(comments.count == 3)
        }
    }

    @Test("a slow reader is sent the newest state: revisions in order, the last one last, most skipped, never cut")
    func slowReader() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: TrustTests.dynamicSchema)
            // A small receive buffer: the server's output backs up as soon as the reader pauses.
            let stream = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken), receiveBuffer: 4096)
            #expect(try await Self.next(stream)?.id == "0.1")
            let writes = 200
            let written = Locked(0)
            // The reader is slower than the writer whatever the machine's speed: one event per ten writes while they
            // go on (about 57 KB an event, 11 MB in all, past what the server once queued for a stream before
            // cutting it), then as fast as it can. Taking bytes now and then, it is slow, not stalled: never cut.
            let reader = Task {
                try await offPool { () -> [Int] in
                    var revisions: [Int] = []
                    var readAt = 0
                    while true {
                        let done = written.withLock { $0 }
                        if done < writes, done < readAt + 10 {
                            usleep(10_000)
                            continue
                        }
                        readAt = done
                        guard let id = stream.nextEvent(timeout: 30)?.id, let revision = Int(id.prefix { $0 != "." }) else { break }
                        revisions.append(revision)
                        if revision == writes { break }
                    }
                    return revisions
                }
            }
            let title = String(repeating: "t", count: 1_000)
            for index in 1...writes {
                let tabs = (0..<55).map { #"{"id": "p.\#($0)", "title": "\#(index) \#(title)"}"# }.joined(separator: ",")
                let write = try await live.send(.patch(creds.customization).bearer(creds.userToken)
                    .json(#"{"operations": [{"op": "setDynamicTabs", "section": "p", "tabs": [\#(tabs)]}]}"#))
                try #require(write.status == 200 && write.etag == "\"\(index).1\"", "write \(index): \(write.status)")
                written.withLock { $0 = index }
            }
            let revisions = try await reader.value
            // Commit order, never an older revision after a newer one; the final state arrives; most were skipped.
            #expect(revisions.last == writes, "the stream ended after \(revisions.last ?? 0)")
            #expect(revisions == revisions.sorted() && Set(revisions).count == revisions.count)
            #expect(revisions.count < writes / 2, "\(revisions.count) events for \(writes) writes")
            // Still served: open, counted, and the next change arrives.
            #expect(live.service.api.followers.streams == 1)
            let metrics = try await live.send(.get("/metrics"))
            #expect((metrics.metric("tabstore_feed_events_coalesced_total") ?? 0) > 0)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken)
                .json(#"{"operations": [{"op": "setDynamicTabs", "section": "p", "tabs": [{"id": "p.last", "title": "Last"}]}]}"#))
            #expect(try await Self.next(stream)?.id == "\(writes + 1).1")
        }
    }

    @Test("when the token expires: event token-expired, and the stream ends")
    func tokenExpiry() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let shortLived = creds.app.token(for: Credentials.user, expiresIn: 2)
            let stream = try await live.follow(.get(Self.events(creds)).bearer(shortLived))
            #expect(try await Self.next(stream)?.id == "0.1")
            let start = DispatchTime.now().uptimeNanoseconds
            let expired = try await Self.next(stream, timeout: 30)
            let waited = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            #expect(expired?.event == "token-expired" && expired?.data?.contains("expired") == true)
            // Ended by the token's expiry (2 s), not the start: the upper bound leaves a loaded machine room.
            #expect(waited > 0.5, "after \(waited) s")
            #expect(try await offPool { stream.closesWithin(10) })
            #expect(live.service.api.followers.streams == 0)
        }
    }

    @Test("while draining: event shutdown, the stream ends, and the drain does not wait for it")
    func drain() async throws {
        // A grace far longer than the bound below: a drain that waited for the stream would take all of it.
        let live = try LiveService(adjust: { $0.shutdownGrace = 60 })
        let creds = try await Credentials.register(on: live)
        let stream = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))
        #expect(try await Self.next(stream)?.id == "0.1")
        // A client reading as the server drains, leaving once its stream ends (as curl and EventSource do).
        let reader = Task {
            try await offPool { () -> (SSEClient.Block?, Bool) in
                let goodbye = stream.nextEvent(timeout: 30)
                let ended = stream.endsWithin(30)
                stream.disconnect()
                return (goodbye, ended)
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        let start = DispatchTime.now().uptimeNanoseconds
        await live.stop()
        #expect(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 < 30)
        let (goodbye, ended) = try await reader.value
        #expect(goodbye?.event == "shutdown" && goodbye?.data != nil)
        #expect(ended)
    }

    @Test("another user, another app and no credentials are refused before a stream starts")
    func refused() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            for (token, status) in [(creds.otherUserToken, 403), (creds.otherAppToken, 403), (nil, 401)] as [(String?, Int)] {
                let answer = try await live.follow(.get(Self.events(creds)).bearer(token))
                #expect(answer.status == status && answer.headers["Content-Type"] == "application/problem+json")
            }
            #expect(live.service.api.followers.streams == 0)
        }
    }

    @Test("streams count against the connection limit")
    func connectionLimit() async throws {
        try await withLiveService(adjust: { $0.maxConnections = 3 }) { live in
            let creds = try await Credentials.register(on: live)
            var streams: [SSEClient] = []
            for _ in 0..<3 { streams.append(try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))) }
            try await waitUntil { live.service.api.followers.streams == 3 }
            let refused = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))
            #expect(refused.status == 503)
            streams.removeLast().disconnect()
            try await waitUntil { live.service.api.followers.streams == 2 }
            #expect(try await live.send(.get("/healthz")).status == 200)
        }
    }

    @Test("one user's streams are bounded: past the limit 429")
    func perUserLimit() async throws {
        try await withLiveService(adjust: { $0.maxFollowersPerUser = 2 }) { live in
            let creds = try await Credentials.register(on: live)
            let open = [try await live.follow(.get(Self.events(creds)).bearer(creds.userToken)),
                        try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))]
            let refused = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))
            #expect(open.allSatisfy { $0.status == 200 } && refused.status == 429)
            let other = try await live.follow(.get(creds.app.userPath(Credentials.otherUser) + "/customization/events").bearer(creds.otherUserToken))
            #expect(other.status == 200)
        }
    }

    @Test("a new schema version, an erase and a deleted app reach the streams too")
    func otherChanges() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            let stream = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))
            #expect(try await Self.next(stream)?.id == "1.1")
            let withoutClimate = Seeds.behaviorAllAutomatic.replacing(
                #"{"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},"#, with: "")
            _ = try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(withoutClimate))
            let reconciled = try await Self.next(stream)
            #expect(reconciled?.id == "1.2" && reconciled?.data?.contains("com.myApp.climate") == false)
            _ = try await live.send(.delete(creds.app.userPath(Credentials.user)).bearer(live.admin))
            #expect(try await Self.next(stream)?.id == "0.2")
            _ = try await live.send(.delete("/v1/apps/app.one").bearer(live.admin))
            #expect(try await offPool { stream.endsWithin(30) })
        }
    }

    @Test("metrics count open streams and the events sent; HEAD opens no stream")
    func metrics() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let head = try await live.send(.head(Self.events(creds)).bearer(creds.userToken))
            #expect(head.status == 200 && head.header("Content-Type") == "text/event-stream")
            let stream = try await live.follow(.get(Self.events(creds)).bearer(creds.userToken))
            _ = try await Self.next(stream)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell")))
            _ = try await Self.next(stream)
            let metrics = try await live.send(.get("/metrics"))
            #expect(metrics.metric("tabstore_feed_streams") == 1 && metrics.metric("tabstore_feed_events_total") == 2)
            stream.disconnect()
            try await waitUntil { live.service.api.followers.streams == 0 }
        }
    }
}
