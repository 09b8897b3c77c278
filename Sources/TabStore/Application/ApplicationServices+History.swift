import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// History and undo as use cases: a page of the kept revisions (newest first, admitted by `HistoryReads`, kept in
/// `historyPages`), one kept revision as the history and the export show it, and the choices a revert stores.
extension ApplicationServices {
    /// A page stops adding revisions past this many bytes of documents and operations (it always lists at
    /// least one): a hundred large revisions would otherwise make one answer of many megabytes.
    package static let maxHistoryPageBytes = 1 << 20

    /// The encoded page `{"items", "nextBefore"}` of up to `limit` kept revisions older than `before` (all: nil).
    /// One read per user at a time and a few in the store at once (`historyReads`); a page read under the user's
    /// current revision is kept and served again until a write makes a new one.
    /// - Parameter schema: the version to show each revision under (as its clients see it); nil: as stored
    ///   (every supported version's choices).
    /// - Throws: `HistoryReads.Refusal` when the user's or the server's reads are past their bounds; storage errors.
    package func historyPage(
        _ key: UserKey, under schema: SchemaIndex?, before: Int?, limit: Int, current: SchemaIndex? = nil
    ) async throws -> [UInt8] {
        let keep = writes.limits.historyRevisions
        return try await historyReads.withUserTurn(key) { () async throws -> [UInt8] in
            try historyReads.checkBudget(key)
            // The user's revision now: a page is a function of it (and of the request, and of the app's current
            // version, which the first page's schema entry depends on), so a page kept under them is this read's page.
            // 0 (nothing stored, or erased) is never kept: an empty history is cheap anyway.
            let stored = try await reads.record(key)
            let revision = stored?.revision ?? 0
            // Relative to the version the page is shown under: a client of an older version still sees its choices.
            let schemaEntry = before == nil ? try await self.schemaEntry(stored, current: schema ?? current, key) : nil
            let cacheKey = Self.historyPageKey(key, schema: schema?.version, before: before, limit: limit, keep: keep, revision: revision,
                                               current: current?.version ?? 0)
            if revision > 0, let kept = historyPages.value(cacheKey) {
                historyReads.charge(key, bytes: kept.count)
                return kept
            }
            let (bytes, after) = try await historyReads.withSlot { () async throws -> ([UInt8], Int) in
                // One more than asked for tells whether an older page exists.
                let rows = try await store.history(appId: key.appId.text, userId: key.userId.text, before: before, limit: limit + 1,
                                                   keep: keep, maxBytes: Self.maxHistoryPageBytes)
                // The same revision after the read: no write or erase of the user committed in between (revisions only
                // rise), so the rows are those of `revision`.
                let after = try await reads.record(key)?.revision ?? 0
                return (await historyReads.render { self.encodedPage(rows, limit: limit, under: schema, key, first: schemaEntry) }, after)
            }
            if revision > 0, after == revision {
                historyPages.put(cacheKey, bytes, cost: bytes.count + cacheKey.bytes.count + 96)
            }
            historyReads.charge(key, bytes: bytes.count)
            return bytes
        }
    }

    /// `historyPages`' key: the user, the version shown (0: as stored), the page asked for, the retention, and
    /// the user's revision when the page was read (the app's id first: deleting the app drops its pages).
    static func historyPageKey(_ key: UserKey, schema: Int?, before: Int?, limit: Int, keep: Int, revision: Int, current: Int = 0) -> ByteKey {
        ByteKey(key.appId.text, key.userId.text, "history", String(schema ?? 0), String(before ?? 0), String(limit), String(keep), String(revision),
                String(current))
    }

    /// The history's `change: "schema"` entry, derived when listed (nothing is stored for it): when the app's
    /// current version is newer than the one the user's newest revision was written under and serving it drops or
    /// resets some of the user's choices, what it dropped (`UserImpact`, as the dry run reports it). It comes first
    /// on the first page; the operator who registered the version is in the audit log, not here (name null).
    func schemaEntry(_ stored: CustomizationRecord?, current: SchemaIndex?, _ key: UserKey) async throws -> JSONValue? {
        guard let stored, let current, stored.writtenUnder < current.version,
              let written = try? Customization.decodeStored(stored.document) else { return nil }
        let impact = UserImpact(served: written, reconciled: Reconciler.reconcile(written, with: current), newIndex: current)
        guard !impact.isEmpty else { return nil }
        let registered = try await store.schemaVersion(appId: key.appId.text, version: current.version)?.createdAt
        func ids(_ list: [Identifier]) -> JSONValue { .array(list.prefix(1_000).map { .string($0.text) }) }
        return .object(JSONObject([
            ("revision", .integer(stored.revision)), ("updatedAt", .string(registered ?? stored.updatedAt)), ("change", "schema"),
            ("actor", .object(JSONObject([("kind", "operator"), ("name", .null)]))),
            ("schemaVersion", .integer(current.version)), ("dropped", ids(impact.droppedIds)), ("reset", ids(impact.visibilityReset)),
            ("ordersChanged", ids(impact.ordersChanged)), ("dynamicTabsDropped", .integer(impact.dynamicTabsDropped)),
        ]))
    }

    /// The encoded page of up to `limit` of `rows` (newest first; one more than `limit` when an older page exists),
    /// stopping past `maxHistoryPageBytes` of stored bytes (at least one revision).
    func encodedPage(_ rows: [HistoryRecord], limit: Int, under schema: SchemaIndex?, _ key: UserKey, first: JSONValue? = nil) -> [UInt8] {
        var items: [JSONValue] = []
        var bytes = 0
        // The schema entry takes one of the page's `limit` places: a page never holds more than asked for.
        for row in rows.prefix(first == nil ? limit : limit - 1) {
            if !items.isEmpty, bytes + row.document.count + (row.operations?.count ?? 0) > Self.maxHistoryPageBytes { break }
            bytes += row.document.count + (row.operations?.count ?? 0)
            items.append(historyItem(row, under: schema, key))
        }
        // The next page starts below the last revision listed (or, when the schema entry took the only place, at
        // the newest: `before` is exclusive).
        let nextBefore: JSONValue = items.count < rows.count ? .integer(items.isEmpty ? rows[0].revision + 1 : rows[items.count - 1].revision) : .null
        if let first { items.insert(first, at: 0) }
        return JSONWriter.bytes(.object(JSONObject([("items", .array(items)), ("nextBefore", nextBefore)])))
    }

    /// One kept revision as the history and the export show it. A stored document or operation list that
    /// does not parse (damaged) shows as null and is logged, so one bad row never fails a page.
    /// - Parameter schema: the version to show the customization under; nil: as stored.
    package func historyItem(_ row: HistoryRecord, under schema: SchemaIndex? = nil, _ key: UserKey? = nil, userId: Identifier? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("revision", .integer(row.revision)), ("updatedAt", .string(row.updatedAt)), ("change", .string(row.change)),
            ("actor", Self.actorJSON(HistoryActor(stored: row.actor), userId: key?.userId ?? userId)),
        ]
        if row.change == ChangeKind.patch.rawValue {
            members.append(("operations", row.operations.map { Self.operationList(parsedOrNull($0, revision: row.revision)) } ?? .null))
        }
        if row.change == ChangeKind.revert.rawValue { members.append(("toRevision", row.targetRevision.map { .integer($0) } ?? .null)) }
        members.append(("customization", document(row, under: schema, key)))
        return .object(JSONObject(members))
    }

    /// `{"kind": "user" | "operator", "name"}`: the user's id, or the operator token's name. Rows stored before
    /// actors were recorded read as the user's own.
    static func actorJSON(_ actor: HistoryActor, userId: Identifier?) -> JSONValue {
        switch actor {
        case .user: .object(JSONObject([("kind", "user"), ("name", userId.map { .string($0.text) } ?? .null)]))
        case .operatorToken(let name): .object(JSONObject([("kind", "operator"), ("name", .string(name))]))
        }
    }

    /// A PATCH's operations as stored: the request's body (an object whose `operations` member is the list), or,
    /// in rows stored before bodies were kept as received, the list itself.
    package static func operationList(_ stored: JSONValue) -> JSONValue {
        if case .object(let body) = stored { return body["operations"] ?? .null }
        return stored
    }

    /// The choices a revert to `revision` stores: the kept revision's stored document (every supported version's
    /// choices), or the empty customization every user starts from for 0; nil when that revision is not kept.
    /// - Throws: storage errors; `JSONParser.Failure` / `MalformedDocument` for a damaged row.
    package func revertChoices(_ key: UserKey, toRevision revision: Int) async throws -> Customization? {
        if revision == 0 { return .empty }
        guard let row = try await store.historyRecord(appId: key.appId.text, userId: key.userId.text, revision: revision,
                                                      keep: writes.limits.historyRevisions) else { return nil }
        return try Customization.decodeStored(row.document)
    }

    /// A kept revision's customization, as stored or reconciled under `schema`.
    private func document(_ row: HistoryRecord, under schema: SchemaIndex?, _ key: UserKey?) -> JSONValue {
        guard let schema, let key else { return parsedOrNull(row.document, revision: row.revision) }
        do {
            let value = Reconciler.reconcile(try Customization.decodeStored(row.document), with: schema)
            return value.json(appId: key.appId, userId: key.userId)
        } catch {
            logger.warning("stored_history_unreadable", [("revision", .integer(row.revision)), ("bytes", .integer(row.document.count))])
            return .null
        }
    }

    private func parsedOrNull(_ bytes: [UInt8], revision: Int) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            logger.warning("stored_history_unreadable", [("revision", .integer(revision)), ("bytes", .integer(bytes.count))])
            return .null
        }
    }
}
