import Foundation
import Testing
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// Issue 27, "a revision number reused across replicas": a write computed before an erase (on another replica)
/// raised the user's revision floor must not commit a revision at or below the floor. The commit checks the floor
/// inside its own transaction, so the outcome does not depend on how the two interleave.
@Suite("Revision floors are checked where the write commits")
struct RevisionFloorTests {
    @Test("a commit computed from a floor an erase has since raised is refused; one above the new floor commits",
          arguments: PostgresTestCluster.backends)
    func staleFloorRefused(_ backend: TestBackend) async throws {
        let store = try backend.openStore(TemporaryDirectory())
        defer { Task { await store.close() } }
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        func record(_ revision: Int) -> CustomizationRecord {
            CustomizationRecord(appId: "app", userId: "u", revision: revision, schemaVersion: 1, document: Array("{\"r\":\(revision)}".utf8),
                                updatedAt: "2026-12-02T00:00:00Z")
        }
        func commit(_ revision: Int, expected: Int) -> CustomizationCommit {
            CustomizationCommit(appId: "app", userId: "u", expectedRevision: expected, record: record(revision), change: .patch, historyRevisions: 10)
        }
        // Writer A read "no row, floor 0" and computed revision 1. Meanwhile B wrote revisions 1 and 2 and an erase
        // removed them (floor 2).
        try await store.commitCustomization(commit(1, expected: 0))
        try await store.commitCustomization(commit(2, expected: 1))
        #expect(try await store.eraseUser(userId: "u", appId: "app"))
        #expect(try await store.revisionFloor(appId: "app", userId: "u") == 2)
        await #expect(throws: StoreConflict.revisionMismatch(current: 0)) { try await store.commitCustomization(commit(1, expected: 0)) }
        await #expect(throws: StoreConflict.revisionMismatch(current: 0)) { try await store.commitCustomization(commit(2, expected: 0)) }
        #expect(try await store.customization(appId: "app", userId: "u") == nil, "nothing was stored under a used number")
        // Recomputed above the floor, it commits.
        try await store.commitCustomization(commit(3, expected: 0))
        #expect(try await store.customization(appId: "app", userId: "u")?.revision == 3)
    }
}

/// Issue 27 (LOW): a write authorized and validated just before its app was deleted must not land in an app
/// created again with the same id. The new app's schema versions start above the old one's (its floor), so the
/// commit, in its own transaction, refuses a document written under a version at or below the floor.
@Suite("A write validated under a deleted app does not land in its successor")
struct RecreatedAppTests {
    @Test("deleted and created again: a commit written under the old app's version is refused (not found); one under the new version commits",
          arguments: PostgresTestCluster.backends)
    func recreatedAppRefusesOldWrite(_ backend: TestBackend) async throws {
        let store = try backend.openStore(TemporaryDirectory())
        defer { Task { await store.close() } }
        func commit(_ version: Int) -> CustomizationCommit {
            CustomizationCommit(appId: "app", userId: "u", expectedRevision: 0,
                                record: CustomizationRecord(appId: "app", userId: "u", revision: 1, schemaVersion: version,
                                                            document: Array("{}".utf8), updatedAt: "2026-12-02T00:00:00Z"),
                                change: .patch, historyRevisions: 10)
        }
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        _ = try await store.addSchemaVersion(appId: "app", expectedCurrent: 0, makeDocument: { _ in Array("{}".utf8) }, createdAt: "t")
        // The write was validated under version 1 of the first app; then the app was deleted and created again.
        #expect(try await store.deleteApp("app"))
        let again = try await store.createApp(id: "app", name: "App", signingSecret: "s2", createdAt: "t")
        _ = try await store.addSchemaVersion(appId: "app", expectedCurrent: again.schemaVersion,
                                             makeDocument: { _ in Array("{}".utf8) }, createdAt: "t")
        await #expect(throws: StoreConflict.notFound) { try await store.commitCustomization(commit(1)) }
        await #expect(throws: StoreConflict.notFound) { try await store.commitCustomization(commit(-1)) }
        #expect(try await store.customization(appId: "app", userId: "u") == nil)
        // Written under the new app's version (above the floor), it commits.
        let current = try #require(try await store.app("app")).schemaVersion
        #expect(current > 1)
        try await store.commitCustomization(commit(current))
        #expect(try await store.customization(appId: "app", userId: "u")?.revision == 1)
    }
}
