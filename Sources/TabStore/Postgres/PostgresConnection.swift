import CPostgres
import Dispatch
import Glibc
import TabStoreSupport

/// A value bound to a statement parameter. Text and integers travel in libpq's text format (the server
/// parses them into the column's type); bytes travel in binary format, so documents are never escaped.
package enum PostgresValue: Sendable {
    case text(String)
    case integer(Int)
    case bytes([UInt8])
    case null
}

/// What a statement failed with: the SQLSTATE (https://www.postgresql.org/docs/current/errcodes-appendix.html),
/// the server's or libpq's message, and whether the connection is unusable afterwards.
package struct PostgresFailure: Error, Sendable, CustomStringConvertible {
    package let sqlState: String
    package let message: String
    package let sql: String?
    package let connectionBroken: Bool

    package var description: String { "PostgreSQL \(sqlState): \(message)" + (sql.map { " (in \($0))" } ?? "") }

    /// Foreign-key violation: a write for an app deleted meanwhile.
    package var isForeignKeyViolation: Bool { sqlState == "23503" }
    package var isUniqueViolation: Bool { sqlState == "23505" }
    /// Serialization failure or deadlock: the transaction may simply run again.
    package var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// The database cannot serve now: the connection broke, the server is shutting down or starting
    /// (57P01-57P03), refuses more connections (53300), the connection failed (class 08), or the session's
    /// bound passed inside the server: `statement_timeout` (57014) or `lock_timeout` (55P03), as when another
    /// session holds a table lock. Each is a 503 `database-unavailable`, never a 500.
    package var isUnavailable: Bool {
        connectionBroken || sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") || sqlState == "53300" || sqlState == "53100"
            || sqlState == "57014" || sqlState == "55P03"
    }
}

/// Rows copied out of a `PGresult` (binary result format), so the result is cleared at once.
package struct PostgresRows: Sendable {
    package let columns: Int
    package let count: Int
    /// Rows a command changed (`PQcmdTuples`), 0 for a query.
    package let affected: Int
    private let cells: [[UInt8]?]

    init(_ result: OpaquePointer) {
        let rows = Int(PQntuples(result))
        let columns = Int(PQnfields(result))
        var cells: [[UInt8]?] = []
        cells.reserveCapacity(rows * columns)
        for row in 0..<rows {
            for column in 0..<columns {
                if PQgetisnull(result, Int32(row), Int32(column)) != 0 {
                    cells.append(nil)
                    continue
                }
                let length = Int(PQgetlength(result, Int32(row), Int32(column)))
                guard length > 0, let value = PQgetvalue(result, Int32(row), Int32(column)) else {
                    cells.append([])
                    continue
                }
                cells.append(value.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) })
            }
        }
        self.cells = cells
        self.columns = columns
        self.count = rows
        self.affected = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
    }

    package func isNull(_ row: Int, _ column: Int) -> Bool { cells[row * columns + column] == nil }

    package func bytes(_ row: Int, _ column: Int) -> [UInt8] { cells[row * columns + column] ?? [] }

    package func text(_ row: Int, _ column: Int) -> String { String(decoding: bytes(row, column), as: UTF8.self) }

    /// A binary integer of any width (int2, int4, int8) or a boolean, big-endian as the server sends it.
    package func int(_ row: Int, _ column: Int) -> Int {
        let value = bytes(row, column)
        guard !value.isEmpty else { return 0 }
        var number: UInt64 = value[0] & 0x80 != 0 && value.count > 1 ? UInt64.max : 0  // sign extension
        for byte in value.prefix(8) { number = number << 8 | UInt64(byte) }
        return Int(truncatingIfNeeded: number)
    }

    /// The first column of the first row as an integer, nil when there is no row or it is NULL.
    package var scalarInt: Int? { count > 0 && !isNull(0, 0) ? int(0, 0) : nil }
}

/// One libpq connection. Not thread-safe: the pool hands it to one caller at a time, which is why it is
/// `@unchecked Sendable`. Statements with parameters are prepared once per connection and reused.
package final class PostgresConnection: @unchecked Sendable {
    /// The libpq connection (`PostgresListener` waits on its socket).
    let connection: OpaquePointer
    private var prepared: [String: String] = [:]
    /// How long one statement may take, from sending it to its last result, measured here (nil: unbounded, for
    /// migrations). A server that does not answer (frozen, partitioned) ends the wait: the connection is then
    /// abandoned (`timedOut`), as its state is unknown.
    package var statementDeadline: Double?
    /// When the current caller's work must end (monotonic nanoseconds; its request's arrival plus the bound),
    /// set by the pool around each call: a statement ends at this or at `statementDeadline`, whichever is first.
    package var callDeadline: UInt64?
    /// A statement outlived `statementDeadline`: the connection is never used again.
    private(set) var timedOut = false
    /// The cluster's `system_identifier`, once asked (reads from a standby check it once per connection).
    var systemIdentifier: String?
    /// The server said goodbye (a FATAL or PANIC notice while idle: terminated, shutting down): never used again.
    fileprivate(set) var saidGoodbye = false
    /// Users whose customization the open transaction changed (`PostgresStore.notify`), for the read routing.
    var changedUsers: [(appId: String, userId: String)] = []

    /// Connects with `conninfo` (a `postgres://` URL or `key=value` string in libpq syntax). A timeout for
    /// connecting, TCP keepalives and `tcp_user_timeout`, and the server-side timeouts of every session
    /// (`statement_timeout`, `lock_timeout`, `idle_in_transaction_session_timeout`: `sessionTimeoutSeconds`) come
    /// first, so the URL may override them.
    /// - Throws: `PostgresFailure` with libpq's message (never the password: libpq does not print it).
    package init(conninfo: String, connectTimeoutSeconds: Int = 5, sessionTimeoutSeconds: Double? = nil) throws(PostgresFailure) {
        var keywords = ["connect_timeout", "application_name", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count"]
        var values = [String(connectTimeoutSeconds), "tab-server", "1", "5", "2", "3"]
        if let sessionTimeoutSeconds {
            let milliseconds = String(max(1, Int(sessionTimeoutSeconds * 1000)))
            keywords += ["tcp_user_timeout", "options"]
            values += [milliseconds, "-c statement_timeout=\(milliseconds) -c lock_timeout=\(milliseconds) -c idle_in_transaction_session_timeout=\(Int(sessionTimeoutSeconds * 1000) * 6)"]
        }
        keywords += ["dbname", "client_encoding"]
        values += [conninfo, "UTF8"]
        let connection = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let connection else {
            throw PostgresFailure(sqlState: "08001", message: "out of memory creating a connection", sql: nil, connectionBroken: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresFailure(sqlState: "08001", message: message, sql: nil, connectionBroken: true)
        }
        self.connection = connection
        // Notices (e.g. "relation already exists, skipping") are not errors; libpq would print them to stderr. A
        // FATAL one is the server's goodbye on an idle connection (libpq passes an error that arrives while idle on
        // as a notice, and may see the end of the stream only at a later read): remembered, so `isAlive` says no.
        PQsetNoticeReceiver(connection, { context, result in
            guard let context, let result, let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))) else { return }
            let level = String(cString: severity)
            if level == "FATAL" || level == "PANIC" {
                Unmanaged<PostgresConnection>.fromOpaque(context).takeUnretainedValue().saidGoodbye = true
            }
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { PQfinish(connection) }

    /// Whether the connection is unusable (the server closed it, the network failed, a statement timed out).
    package var isBroken: Bool { timedOut || saidGoodbye || PQstatus(connection) != CONNECTION_OK }

    /// Usable by the next caller: open, and not left inside a transaction.
    package var isReusable: Bool { !isBroken && PQtransactionStatus(connection) == PQTRANS_IDLE }

    /// Reads what the server sent while the connection was idle (libpq's sockets never block here), so a
    /// connection the server closed (a restart, a terminated backend, a failover) is noticed before a request is
    /// sent on it. A server that closes says goodbye first (a FATAL message) and then ends the stream: one read
    /// may take the goodbye alone and leave libpq's status OK, so the socket is asked until nothing is pending,
    /// and a peer that hung up is seen in the poll itself.
    package func isAlive() -> Bool {
        guard !timedOut, !saidGoodbye, PQstatus(connection) == CONNECTION_OK else { return false }
        let socket = PQsocket(connection)
        guard socket >= 0 else { return false }
        for _ in 0..<8 {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN) | Self.peerHungUp, revents: 0)
            let ready = poll(&descriptor, 1, 0)
            if ready < 0 { return errno == EINTR && PQstatus(connection) == CONNECTION_OK }
            if ready == 0 { return true }  // nothing pending: an idle connection as it should be
            if descriptor.revents & (Self.peerHungUp | Int16(POLLHUP) | Int16(POLLERR) | Int16(POLLNVAL)) != 0 { return false }
            guard PQconsumeInput(connection) == 1, PQstatus(connection) == CONNECTION_OK else { return false }
            _ = PQisBusy(connection)  // parses what came (a notice, a parameter status, a goodbye)
            if saidGoodbye || PQstatus(connection) != CONNECTION_OK { return false }
        }
        return PQstatus(connection) == CONNECTION_OK
    }

    /// `POLLRDHUP` (Linux): the peer closed its end of the stream.
    private static let peerHungUp: Int16 = 0x2000

    /// Runs SQL without parameters, several statements allowed (BEGIN, COMMIT, migrations).
    package func execute(_ sql: String) throws(PostgresFailure) {
        let result = try bounded(sql) { PQsendQuery(connection, sql) }
        defer { PQclear(result) }
        try check(result, sql: sql)
    }

    /// Sends a command with `send` (libpq's asynchronous API) and waits for its results, at most
    /// `statementDeadline`: the socket is polled, never blocked on, so a database that stopped answering ends the
    /// wait with a failure the pool maps to 503 (and the connection is abandoned).
    /// - Returns: the command's last result (the first failing one stops a multi-statement string, as `PQexec`).
    private func bounded(_ sql: String, _ send: () -> Int32) throws(PostgresFailure) -> OpaquePointer? {
        guard !timedOut else { throw timeoutFailure(sql) }
        let start = DispatchTime.now().uptimeNanoseconds
        // The caller's bound passed between two statements: nothing is sent (a transaction left open makes the
        // connection one the pool discards).
        if let callDeadline, callDeadline <= start { throw Self.deadlineFailure(statementDeadline ?? 0) }
        var limit = statementDeadline.map { UInt64(max(0.001, $0) * 1e9) }
        if let callDeadline {
            // What is left of the caller's bound, when that is less than one statement's (at least 1 ms).
            let left = max(1_000_000, callDeadline - start)
            limit = min(limit ?? left, left)
        }
        func remainingMilliseconds() -> Int32? {
            guard let limit else { return -1 }
            let spent = DispatchTime.now().uptimeNanoseconds &- start
            guard spent < limit else { return nil }
            return Int32(min(Int64(Int32.max), Int64((limit - spent) / 1_000_000) + 1))
        }
        func wait(_ events: Int16) throws(PostgresFailure) {
            guard let timeout = remainingMilliseconds() else {
                timedOut = true
                throw timeoutFailure(sql)
            }
            var descriptor = pollfd(fd: PQsocket(connection), events: events, revents: 0)
            if poll(&descriptor, 1, timeout) == 0, remainingMilliseconds() == nil {
                timedOut = true
                throw timeoutFailure(sql)
            }
        }
        func lost() -> PostgresFailure {
            PostgresFailure(sqlState: "08006", message: Self.trimmed(PQerrorMessage(connection)), sql: sql, connectionBroken: true)
        }
        guard send() == 1 else { throw lost() }
        // The command may not fit the socket's buffer at once (a large document): flush while it does not.
        while true {
            let flushed = PQflush(connection)
            if flushed == 0 { break }
            if flushed < 0 { throw lost() }
            try wait(Int16(POLLIN | POLLOUT))
            if PQconsumeInput(connection) == 0 { throw lost() }
        }
        var last: OpaquePointer?
        var failed = false
        while true {
            while PQisBusy(connection) == 1 {
                try wait(Int16(POLLIN))
                if PQconsumeInput(connection) == 0 {
                    if let last { PQclear(last) }
                    throw lost()
                }
            }
            guard let result = PQgetResult(connection) else { break }
            // Every result is read (libpq needs that before the next command); the first failure is the one kept.
            if failed {
                PQclear(result)
                continue
            }
            if let last { PQclear(last) }
            last = result
            let status = PQresultStatus(result)
            if status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK, status != PGRES_EMPTY_QUERY { failed = true }
        }
        return last
    }

    /// Runs `body` on this connection with its statements ending by `deadline` at the latest; the deadline is
    /// gone again before the connection can go back to the pool.
    func bounded<T>(by deadline: UInt64?, _ body: (PostgresConnection) throws -> T) rethrows -> T {
        callDeadline = deadline
        defer { callDeadline = nil }
        return try body(self)
    }

    /// Marks the connection unusable: the pool discards it (and the server releases what its session held).
    package func abandon() { timedOut = true }

    private func timeoutFailure(_ sql: String) -> PostgresFailure {
        PostgresFailure(sqlState: "57014", message: "the database did not answer within \(statementDeadline ?? 0) s", sql: sql, connectionBroken: true)
    }

    /// The caller's bound passed before its work could start (connecting would begin after it).
    static func deadlineFailure(_ bound: Double) -> PostgresFailure {
        PostgresFailure(sqlState: "57014", message: "the database did not answer within the request's bound (\(bound) s)", sql: nil, connectionBroken: true)
    }

    /// Runs one statement with parameters (`$1`, `$2`, …), prepared on first use; results in binary format.
    @discardableResult
    package func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresFailure) -> PostgresRows {
        let name = try statementName(sql)
        // One buffer holds every value: text NUL-terminated (libpq reads text parameters as C strings),
        // bytes as they are with their length. A trailing byte keeps the buffer non-empty.
        var buffer: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for parameter in parameters {
            switch parameter {
            case .null:
                offsets.append(nil); lengths.append(0); formats.append(0)
            case .text(let text):
                offsets.append(buffer.count); buffer.append(contentsOf: text.utf8); buffer.append(0)
                lengths.append(0); formats.append(0)
            case .integer(let number):
                offsets.append(buffer.count); buffer.append(contentsOf: String(number).utf8); buffer.append(0)
                lengths.append(0); formats.append(0)
            case .bytes(let bytes):
                guard bytes.count < Int(Int32.max) else {
                    throw PostgresFailure(sqlState: "54000", message: "a value is too large", sql: sql, connectionBroken: false)
                }
                offsets.append(buffer.count); buffer.append(contentsOf: bytes)
                lengths.append(Int32(bytes.count)); formats.append(1)
            }
        }
        buffer.append(0)
        var failure: PostgresFailure?
        let result = buffer.withUnsafeBufferPointer { raw -> OpaquePointer? in
            raw.baseAddress!.withMemoryRebound(to: CChar.self, capacity: raw.count) { base -> OpaquePointer? in
                let values: [UnsafePointer<CChar>?] = offsets.map { $0.map { base + $0 } }
                do {
                    return try bounded(sql) { PQsendQueryPrepared(connection, name, Int32(parameters.count), values, lengths, formats, 1) }
                } catch {
                    failure = error as? PostgresFailure ?? PostgresFailure(sqlState: "08006", message: "\(error)", sql: sql, connectionBroken: true)
                    return nil
                }
            }
        }
        if let failure { throw failure }
        defer { PQclear(result) }
        try check(result, sql: sql)
        return PostgresRows(result!)
    }

    private func statementName(_ sql: String) throws(PostgresFailure) -> String {
        if let name = prepared[sql] { return name }
        let name = "tabstore_\(prepared.count + 1)"
        let result = try bounded(sql) { PQsendPrepare(connection, name, sql, 0, nil) }
        defer { PQclear(result) }
        try check(result, sql: sql)
        prepared[sql] = name
        return name
    }

    private func check(_ result: OpaquePointer?, sql: String) throws(PostgresFailure) {
        guard let result else {
            throw PostgresFailure(sqlState: "08006", message: Self.trimmed(PQerrorMessage(connection)), sql: sql, connectionBroken: isBroken)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = Self.trimmed(PQresultErrorMessage(result))
            throw PostgresFailure(
                sqlState: state ?? (isBroken ? "08006" : "XX000"), message: message.isEmpty ? Self.trimmed(PQerrorMessage(connection)) : message,
                                  sql: sql, connectionBroken: isBroken)
        }
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "" }
        var text = String(cString: message)
        while text.last == "\n" || text.last == " " { text.removeLast() }
        return text.replacing("\n", with: " ").replacing("\t", with: "")
    }

    /// Calls `body` with a NULL-terminated array of C strings that live for the call.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer<CChar>($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
