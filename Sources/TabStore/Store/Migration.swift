/// One migration model for every backend: a backend's schema is a list of numbered, named steps (`Migration`), and
/// `MigrationRunner` brings a database up to the last of them, each step in one transaction with its bookkeeping
/// row in `tabstore_migrations` (version, name, when), so a crash leaves either all of a step or none of it, and
/// running it again changes nothing. A backend supplies the SQL of its steps and a `MigrationTarget`: its own
/// transactions and bookkeeping table, in its own dialect.
package struct Migration: Sendable {
    package let version: Int
    package let name: String
    package let sql: String

    package init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// A database being migrated, as a backend connects to it.
package protocol MigrationTarget {
    /// Creates the bookkeeping table when it is missing.
    func prepareBookkeeping() throws
    /// The highest version recorded; 0 for a new database.
    func appliedVersion() throws -> Int
    /// In one transaction: unless `migration` is recorded already (another process may have applied it since
    /// `appliedVersion`), runs its SQL and records it as applied at `appliedAt`.
    func apply(_ migration: Migration, appliedAt: String) throws
}

package enum MigrationRunner {
    /// The database is at a version this build does not know: it was migrated by a newer tab-server.
    package struct NewerDatabase: Error, Sendable {
        package let current: Int
        package let latest: Int
    }

    /// Brings `database` up to `target` (the last step; an older one only to build old databases in tests).
    /// - Throws: `NewerDatabase` when the database is past the last step; what a step throws.
    package static func migrate(_ steps: [Migration], on database: some MigrationTarget, now: String, upTo target: Int? = nil) throws {
        precondition(zip(steps, steps.dropFirst()).allSatisfy { $0.version < $1.version }, "migration versions must increase")
        let latest = steps.last?.version ?? 0
        try database.prepareBookkeeping()
        let current = try database.appliedVersion()
        if current > latest { throw NewerDatabase(current: current, latest: latest) }
        for step in steps where step.version > current && step.version <= (target ?? latest) {
            try database.apply(step, appliedAt: now)
        }
    }
}
