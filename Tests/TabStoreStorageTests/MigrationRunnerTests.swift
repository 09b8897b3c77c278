import Testing
@testable import TabStoreStore
import TabStoreTestSupport

/// The one migration model both backends run: what the runner asks of a database, in order.
@Suite("MigrationRunner: numbered steps, each once, in order")
struct MigrationRunnerTests {
    /// A database that records what it was asked; `applied` is what its bookkeeping holds.
    final class Recorder: MigrationTarget {
        var applied: [Int]
        var calls: [String] = []
        init(applied: [Int] = []) { self.applied = applied }

        func prepareBookkeeping() throws { calls.append("prepare") }
        func appliedVersion() throws -> Int { applied.max() ?? 0 }
        func apply(_ migration: Migration, appliedAt: String) throws {
            calls.append("apply \(migration.version) \(migration.name) at \(appliedAt)")
            applied.append(migration.version)
        }
    }

    static let steps = [Migration(version: 1, name: "one", sql: "A"), Migration(version: 2, name: "two", sql: "B"),
                        Migration(version: 3, name: "three", sql: "C")]

    @Test("a new database gets every step in order; run again, nothing")
    func fresh() throws {
        let database = Recorder()
        try MigrationRunner.migrate(Self.steps, on: database, now: "t1")
        #expect(database.calls == ["prepare", "apply 1 one at t1", "apply 2 two at t1", "apply 3 three at t1"])
        try MigrationRunner.migrate(Self.steps, on: database, now: "t2")
        #expect(database.calls.suffix(1) == ["prepare"])
    }

    @Test("a database at step 1 gets the rest; `upTo` stops early (old databases built in tests)")
    func partial() throws {
        let database = Recorder(applied: [1])
        try MigrationRunner.migrate(Self.steps, on: database, now: "t", upTo: 2)
        #expect(database.calls == ["prepare", "apply 2 two at t"])
    }

    @Test("a database past the last step is refused, and nothing is applied")
    func newer() throws {
        let database = Recorder(applied: [1, 2, 3, 4])
        #expect {
            try MigrationRunner.migrate(Self.steps, on: database, now: "t")
        } throws: { error in
            guard let newer = error as? MigrationRunner.NewerDatabase else { return false }
            return newer.current == 4 && newer.latest == 3
        }
        #expect(database.calls == ["prepare"])
    }
}
