import Foundation
import Testing
@testable import TabStoreApplication
@testable import TabStoreDomain
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// The write use case driven without HTTP: the application layer over a real SQLite store in a temporary folder.
@Suite("Application layer: customization writes without HTTP")
struct CustomizationWritesTests {
    /// A follower of one user that keeps what it was told.
    final class Follower: ChangeFollower {
        let pinned: SchemaIndex? = nil
        let states = Locked<[CustomizationState]>([])
        func changed(_ state: CustomizationState) { states.withLock { $0.append(state) } }
        func ended(_ reason: FollowEnd) {}
    }

    struct Fixture {
        let store: SQLiteStore
        let writes: CustomizationWrites
        let entry: AppCache.Entry
        let key = UserKey(appId: Identifier("shop"), userId: Identifier("alice"))

        var schema: SchemaIndex { entry.schema! }

        func request(
            _ preconditions: WritePreconditions = WritePreconditions(), idempotency: IdempotentWrite? = nil
        ) -> CustomizationWrites.WriteRequest {
            CustomizationWrites.WriteRequest(key: key, entry: entry, served: schema, preconditions: preconditions, idempotency: idempotency)
        }

        /// A PATCH-like edit: hides `tab` in the sidebar.
        func hide(_ tab: String, _ request: CustomizationWrites.WriteRequest) async throws -> WriteOutcome {
            try await writes.edit(request, kind: CustomizationWrites.Kind(change: .patch)) { current, schema in
                try CustomizationEditor.apply([.setVisibility(.sidebar, tab: Identifier(tab), .hidden)], to: current, index: schema)
            }
        }
    }

    static func fixture(_ dir: TemporaryDirectory) async throws -> Fixture {
        let store = try SQLiteStore(configuration: SQLiteStore.Configuration(path: dir.file("tabstore.sqlite")))
        _ = try await store.createApp(id: "shop", name: "Shop", signingSecret: "secret", createdAt: "t")
        let schema = TabSchema(items: ["home", "bell", "cart"].map { .tab(SchemaTab(id: Identifier($0), title: $0)) })
        _ = try await store.addSchemaVersion(appId: "shop", expectedCurrent: 0, makeDocument: { schema.storedDocument(version: $0, createdAt: "t") },
                                             createdAt: "t")
        let apps = AppCache(store: store)
        let entry = try #require(try await apps.entry(Identifier("shop")))
        let writes = CustomizationWrites(
            store: store, apps: apps, userLocks: KeyedLock<UserKey>(), changes: ChangeHub(maxPerUser: 4, maxLongPolls: 4),
            documents: DecodedDocuments(budget: 1 << 20),
            limits: CustomizationWrites.Limits(maxCustomizationBytes: 64 * 1024, historyRevisions: 100, idempotencySeconds: 86_400,
                                               maxIdempotentAnswersPerUser: 1_000, clock: { 1_000 }))
        return Fixture(store: store, writes: writes, entry: entry)
    }

    static func written(_ outcome: WriteOutcome) throws -> WrittenCustomization {
        guard case .written(let written) = outcome else { throw TestFailure("expected a write, got \(outcome)") }
        return written
    }

    @Test("an edit commits the next revision, answers it under the writer's version and tells the user's followers")
    func editCommits() async throws {
        let dir = TemporaryDirectory()
        let fixture = try await Self.fixture(dir)
        let follower = Follower()
        #expect(fixture.writes.changes.follow(fixture.key, follower, kind: .stream, verifiedBy: nil) == .followed)

        let written = try Self.written(try await fixture.hide("bell", fixture.request()))
        #expect(written.revision == 1 && written.schemaVersion == 1 && written.tag == "1.1")
        let stored = try #require(try await fixture.store.customization(appId: "shop", userId: "alice"))
        #expect(stored.revision == 1 && written.document == stored.document)
        #expect(follower.states.withLock { $0.map(\.revision) } == [1])
        #expect(fixture.writes.userLocks.heldKeys == 0)

        // The same change again stores nothing: the revision (and every device's tag) stays.
        #expect(try Self.written(try await fixture.hide("bell", fixture.request())).revision == 1)
    }

    @Test("a stale precondition is refused with the current tag; a matching one commits")
    func stalePrecondition() async throws {
        let dir = TemporaryDirectory()
        let fixture = try await Self.fixture(dir)
        _ = try await fixture.hide("bell", fixture.request())
        let stale = WritePreconditions(ifMatch: .tags([EntityTag("0.1")]))
        await #expect(throws: WriteError.preconditionFailed(current: "1.1", detail: "the customization is now \"1.1\"; read it again and retry")) {
            _ = try await fixture.hide("home", fixture.request(stale))
        }
        let fresh = WritePreconditions(ifMatch: .tags([EntityTag("1.1")]))
        #expect(try Self.written(try await fixture.hide("home", fixture.request(fresh))).revision == 2)
        // If-None-Match: * on a customization that exists is refused too.
        await #expect(throws: WriteError.self) { _ = try await fixture.hide("bell", fixture.request(WritePreconditions(ifNoneMatch: .any))) }
    }

    @Test("a repeat with the same idempotency key gets the first answer; another request under the key is refused")
    func idempotentRepeat() async throws {
        let dir = TemporaryDirectory()
        let fixture = try await Self.fixture(dir)
        let answer: @Sendable (WrittenCustomization) -> StoredAnswer = { StoredAnswer(status: 200, etag: $0.tag, body: $0.document ?? []) }
        let first = IdempotentWrite(key: "k1", digest: Array("hide bell".utf8), answer: answer)
        let written = try Self.written(try await fixture.hide("bell", fixture.request(idempotency: first)))
        // Meanwhile another write moves the customization on.
        _ = try await fixture.hide("home", fixture.request())

        guard case .replayed(let replayed) = try await fixture.hide("bell", fixture.request(idempotency: first)) else {
            Issue.record("the repeat was not replayed")
            return
        }
        #expect(replayed.status == 200 && replayed.etag == written.tag && replayed.body == written.document)
        #expect(try await fixture.store.customization(appId: "shop", userId: "alice")?.revision == 2)

        let other = IdempotentWrite(key: "k1", digest: Array("hide home".utf8), answer: answer)
        await #expect(throws: WriteError.idempotencyKeyReused) { _ = try await fixture.hide("home", fixture.request(idempotency: other)) }
    }

    @Test("registering a schema: the current one again stores nothing; a dry run reports what a new one would drop")
    func schemaRegistration() async throws {
        let dir = TemporaryDirectory()
        let fixture = try await Self.fixture(dir)
        _ = try await fixture.hide("bell", fixture.request())
        let services = ApplicationServices(store: fixture.store, configuration: ApplicationServices.Configuration(
            writes: fixture.writes.limits, maxFollowersPerUser: 4, maxLongPolls: 4, representationCacheBytes: 0, documentCacheBytes: 0,
            historyPageCacheBytes: 0, historyReads: HistoryReads.Limits()), logger: Logger(minimum: .error))
        let entry = try #require(try await services.apps.entry(Identifier("shop")))
        guard case .current = try await services.registerSchema(fixture.schema.schema, entry: entry) else {
            Issue.record("the current schema was registered again")
            return
        }
        let smaller = TabSchema(items: ["home", "cart"].map { .tab(SchemaTab(id: Identifier($0), title: $0)) })
        let impact = try await services.schemaImpact(smaller, entry: entry)
        #expect(!impact.identical && impact.currentVersion == 1 && impact.wouldCreateVersion == 2)
        #expect(impact.removedIds == [Identifier("bell")] && impact.customizationsChecked == 1 && impact.customizationsAffected == 1)
        guard case .registered(let record) = try await services.registerSchema(smaller, entry: entry) else {
            Issue.record("the new schema was not registered")
            return
        }
        #expect(record.version == 2)
        // Registered from the entry read before version 2: another schema is a conflict.
        let other = TabSchema(items: ["home", "search"].map { .tab(SchemaTab(id: Identifier($0), title: $0)) })
        await #expect(throws: SchemaRegistrationError.concurrentRegistration) { _ = try await services.registerSchema(other, entry: entry) }
    }
}
