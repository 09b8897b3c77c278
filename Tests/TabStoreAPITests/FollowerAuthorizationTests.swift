import Dispatch
import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// What ends a follower's authorization while it waits: a rotated signing secret, the token's expiry.
@Suite("Change-feed streams and long polls end with their authorization", .serialized)
struct FollowerAuthorizationTests {
    static func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    @Test("rotating the signing secret ends the user's streams (token-expired) and long polls (401) at once; the operator's stream goes on")
    func rotationEndsFollowers() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let events = creds.customization + "/events"
            let userStream = try await live.follow(.get(events).bearer(creds.userToken))
            let operatorStream = try await live.follow(.get(events).bearer(live.admin))
            for stream in [userStream, operatorStream] { #expect(try await FeedTests.next(stream)?.id == "0.1") }
            let poll = Task { try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(creds.userToken).ifNoneMatch("\"0.1\"")) }
            try await waitUntil { live.service.api.followers.longPolls == 1 }
            let start = DispatchTime.now().uptimeNanoseconds
            #expect(try await live.send(.post("/v1/apps/app.one/signing-secret").bearer(live.admin)).status == 200)
            let answer = try await poll.value
            #expect(answer.status == 401 && answer.header("Content-Type") == "application/problem+json")
            #expect(answer.header("WWW-Authenticate")?.contains("invalid_token") == true)
            let ended = try await FeedTests.next(userStream)
            #expect(ended?.event == "token-expired" && ended?.data?.contains("signing secret") == true)
            // docs/devices.md: token-expired, "then the stream ends and the server closes the connection": the connection too, not only the stream.
            #expect(try await offPool { userStream.closesWithin(30) })
            #expect(Self.seconds(since: start) < 40, "ended by the rotation, not by waitSeconds (60): after \(Self.seconds(since: start)) s")
            try await waitUntil { live.service.api.followers.streams == 1 && live.service.api.followers.longPolls == 0 }
            // The operator's token does not depend on the app's secret.
            _ = try await live.send(.patch(creds.customization).bearer(live.admin).json(Sync.hide("bell")))
            #expect(try await FeedTests.next(operatorStream)?.id == "1.1")
        }
    }

    @Test("a follower registered after the rotation, authorized with the old secret before it, is refused 401")
    func registeredAfterRotation() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: directory.file("rotation.sqlite")))
        let services = APIServices(store: store, configuration: APIConfiguration(adminToken: "admin-token-0123456789"), serverState: ServerState(),
                                   metrics: Metrics(), logger: .silent)
        let app = try await store.createApp(id: "app.one", name: "One", signingSecret: "old-secret", createdAt: "t")
        let appId = Identifier(app.id)
        #expect(try await services.apps.entry(appId)?.app.signingSecret == "old-secret")
        var context = RouteContext(parameters: [:], requestId: "r", pattern: "/")
        context.credentialsKey = "old-secret"
        try await services.requireCredentialsCurrent(context, appId)
        // The rotation as `POST …/signing-secret` does it; the caller was authorized before, and registers now.
        try await store.rotateSecret(appId: app.id, signingSecret: "new-secret")
        services.apps.invalidate(appId)
        services.changes.secretRotated(appId)
        await #expect {
            try await services.requireCredentialsCurrent(context, appId)
        } throws: { error in
            (error as? APIError)?.status == 401 && (error as? APIError)?.detail.contains("signing secret was rotated") == true
        }
        context.credentialsKey = "new-secret"
        try await services.requireCredentialsCurrent(context, appId)
        context.credentialsKey = nil  // the operator's token
        try await services.requireCredentialsCurrent(context, appId)
        await store.close()
    }

    @Test("a token already past exp (accepted within the 30 s leeway) opens no stream and no waiting poll: 401, so the client refreshes")
    func expiredWithinLeeway() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let expired = creds.app.token(for: Credentials.user, expiresIn: -10)
            // Still a valid request otherwise: a plain GET, and a poll that is answered at once, get their answer.
            #expect(try await live.send(.get(creds.customization).bearer(expired)).status == 200)
            #expect(try await live.send(.get(creds.customization + "?waitSeconds=5").bearer(expired).ifNoneMatch("\"9.9\"")).status == 200)
            let stream = try await live.follow(.get(creds.customization + "/events").bearer(expired))
            #expect(stream.status == 401 && stream.headers["Content-Type"] == "application/problem+json")
            #expect(stream.headers["WWW-Authenticate"]?.contains("invalid_token") == true)
            let start = DispatchTime.now().uptimeNanoseconds
            let poll = try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(expired).ifNoneMatch("\"0.1\""))
            #expect(poll.status == 401 && poll.header("Content-Type") == "application/problem+json")
            // Refused before waiting, not after waitSeconds (60): the bound leaves a loaded machine room, not speed.
            #expect(Self.seconds(since: start) < 30, "after \(Self.seconds(since: start)) s")
            #expect(live.service.api.followers.streams == 0 && live.service.api.followers.longPolls == 0)
        }
    }

    @Test("a long poll whose token expires while it waits ends then with 401, not after waitSeconds")
    func pollOutlivesToken() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let shortLived = creds.app.token(for: Credentials.user, expiresIn: 2)
            let start = DispatchTime.now().uptimeNanoseconds
            let answer = try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(shortLived).ifNoneMatch("\"0.1\""))
            let waited = Self.seconds(since: start)
            #expect(answer.status == 401 && answer.header("Content-Type") == "application/problem+json")
            #expect(answer.header("WWW-Authenticate")?.contains("invalid_token") == true)
            // Ended by the token (2 s), not by waitSeconds (60): the bound leaves a loaded machine room, not speed.
            #expect(waited > 0.5 && waited < 45, "after \(waited) s")
            #expect(live.service.api.followers.longPolls == 0)
        }
    }
}
