import CPostgres
import TabStoreSupport

/// What `TAB_SERVER_DATABASE_READ_URL` leads to, checked once when the store opens (docs/postgres.md "Reads from
/// standbys").
extension PostgresStore {
    /// The server under `TAB_SERVER_DATABASE_READ_URL` when the store opened.
    package enum ReadURLCheck: Sendable, Equatable {
        /// A hot standby of the primary's cluster.
        case standby
        /// A server of the primary's cluster that is not in recovery (the primary itself, or a promoted standby).
        case notInRecovery
        /// It did not answer (reads go to the primary until it does).
        case unreachable(String)
    }

    /// Connects once to the read URL: a server of another cluster (another `system_identifier`: a mistyped host or
    /// database) stops start-up, since its rows would be served as this cluster's; one that does not answer is
    /// reported and checked again at every read.
    /// - Throws: `ConfigurationError` naming both identifiers (never the password).
    static func checkReadURL(_ url: String, primarySystem: String, connectTimeoutSeconds: Int) throws -> ReadURLCheck {
        try checkSyntax(url, variable: "TAB_SERVER_DATABASE_READ_URL (--database-read-url)")
        let standby: PostgresConnection
        do {
            // Bounded like every call: the connect (per host), then the query, each by the connect timeout.
            let bound = Double(connectTimeoutSeconds)
            standby = try PostgresConnection(conninfo: url, connectTimeoutSeconds: connectTimeoutSeconds, sessionTimeoutSeconds: bound)
            standby.statementDeadline = bound
        } catch {
            return .unreachable(error.message)
        }
        let rows: PostgresRows
        do {
            rows = try standby.query("SELECT system_identifier::text, pg_is_in_recovery() FROM pg_control_system()")
        } catch {
            return .unreachable(error.message)
        }
        guard rows.text(0, 0) == primarySystem else {
            throw ConfigurationError(description: "TAB_SERVER_DATABASE_READ_URL (\(describe(url))) leads to a server of another cluster "
                + "(system identifier \(rows.text(0, 0)); the primary's is \(primarySystem)): a read URL must name hot standbys "
                + "made from the primary (pg_basebackup)")
        }
        return rows.int(0, 1) != 0 ? .standby : .notInRecovery
    }

    /// A connection string libpq cannot parse stops start-up with a message of our own: libpq's would quote the
    /// part it could not decode, which may be the password (`invalid percent-encoded token: "…"`).
    /// - Throws: `ConfigurationError` naming the variable, never the string.
    static func checkSyntax(_ url: String, variable: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &error) else {
            if let error { PQfreemem(error) }
            throw ConfigurationError(description: "\(variable) is not a connection string libpq can parse (postgres://USER:PASSWORD@HOST:PORT/DATABASE, "
                + "with any reserved character of the password percent-encoded)")
        }
        PQconninfoFree(options)
    }
}
