import TabStoreStore

/// What decides whether an acknowledged write survives a failover, as the server in use reports it: a write is
/// acknowledged after `COMMIT` returned, and `COMMIT` waits for a standby only when `synchronous_standby_names`
/// names one and the session's `synchronous_commit` is `on` (the standby flushed the commit) or `remote_apply`
/// (it also applied it). Checked at start (logged) and on every `/metrics` scrape, because a failover changes it
/// (a promoted standby usually runs alone until another standby joins).
/// https://www.postgresql.org/docs/current/warm-standby.html#SYNCHRONOUS-REPLICATION
package struct PostgresReplication: Sendable, Equatable {
    /// Connected to a server in recovery (a standby): only for the read URL; the write URL should never get one.
    package var inRecovery: Bool
    /// The session's `synchronous_commit` (the URL's `options` or the role's or database's setting may change it).
    package var synchronousCommit: String
    package var synchronousStandbyNames: String
    /// Standbys `pg_stat_replication` lists as `sync` or `quorum`; nil when this role may not see their state
    /// (it needs `pg_monitor` or `pg_read_all_stats`).
    package var synchronousStandbys: Int?
    /// Standbys streaming from this server, nil as above.
    package var streamingStandbys: Int?

    /// The values of `synchronous_commit` that wait for a standby's flush: with a synchronous standby, a write
    /// acknowledged is on two servers' disks. (`remote_write` waits only for the standby's operating system.)
    static let waitsForStandby: Set<String> = ["on", "remote_apply"]
    static let knownCommitSettings: Set<String> = ["off", "local", "remote_write", "on", "remote_apply"]

    /// No acknowledged write is lost when this server dies and its synchronous standby is promoted: a primary
    /// that waits for a standby's flush, and (when it can be seen) a standby that is synchronous now.
    package var lossless: Bool {
        !inRecovery && !synchronousStandbyNames.isEmpty && Self.waitsForStandby.contains(synchronousCommit) && (synchronousStandbys ?? 1) > 0
    }

    /// One round trip; `pg_stat_replication` shows `sync_state` as NULL to roles without the right to see it.
    static let query = """
        SELECT pg_is_in_recovery(), current_setting('synchronous_commit'), current_setting('synchronous_standby_names'),
               (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')),
               (SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'),
               (SELECT count(*) FROM pg_stat_replication WHERE sync_state IS NULL)
        """

    /// - Throws: `PostgresFailure`.
    static func read(_ db: PostgresConnection) throws(PostgresFailure) -> PostgresReplication {
        let rows = try db.query(query)
        let hidden = rows.int(0, 5) > 0
        return PostgresReplication(inRecovery: rows.int(0, 0) != 0, synchronousCommit: rows.text(0, 1), synchronousStandbyNames: rows.text(0, 2),
                                   synchronousStandbys: hidden ? nil : rows.int(0, 3), streamingStandbys: hidden ? nil : rows.int(0, 4))
    }

    /// The `/metrics` gauges (docs/postgres.md "Failover"); labels take only `synchronous_commit`'s known values.
    package var gauges: [BackendGauge] {
        let setting = Self.knownCommitSettings.contains(synchronousCommit) ? synchronousCommit : "other"
        var gauges = [
            BackendGauge(name: "tabstore_postgres_primary", help: "1 when the write URL's connection is to a primary (not in recovery).", value: inRecovery ? 0 : 1),
            BackendGauge(name: "tabstore_postgres_synchronous_commit", help: "The sessions' synchronous_commit setting (1 for the one in force).",
                         labels: [("setting", setting)], value: 1),
            BackendGauge(name: "tabstore_postgres_synchronous_standby_names_set", help: "1 when the primary's synchronous_standby_names names a standby.",
                         value: synchronousStandbyNames.isEmpty ? 0 : 1),
            BackendGauge(name: "tabstore_postgres_lossless_failover", help: "1 when an acknowledged write waits for a synchronous standby's flush (docs/postgres.md).",
                         value: lossless ? 1 : 0),
        ]
        if let synchronousStandbys, let streamingStandbys {
            gauges.append(BackendGauge(name: "tabstore_postgres_synchronous_standbys", help: "Standbys pg_stat_replication lists as sync or quorum.",
                                       value: Double(synchronousStandbys)))
            gauges.append(
                BackendGauge(
                    name: "tabstore_postgres_streaming_standbys", help: "Standbys streaming from the primary.", value: Double(streamingStandbys)))
        }
        return gauges
    }

    /// The start-up log's fields (event `postgres_replication`).
    package var logFields: [(String, String)] {
        var fields = [("primary", inRecovery ? "false" : "true"), ("synchronousCommit", synchronousCommit),
                      ("synchronousStandbyNames", synchronousStandbyNames), ("losslessFailover", lossless ? "true" : "false")]
        fields.append(("synchronousStandbys", synchronousStandbys.map(String.init) ?? "not visible to this role (grant pg_monitor)"))
        return fields
    }
}
