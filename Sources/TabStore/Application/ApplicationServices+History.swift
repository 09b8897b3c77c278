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
    package func historyPage(_ key: UserKey, under schema: SchemaIndex?, before: Int?, limit: Int) async throws -> [UInt8] {
        let keep = writes.limits.historyRevisions
        return try await historyReads.withUserTurn(key) { () async throws -> [UInt8] in
            try historyReads.checkBudget(key)
            // The user's revision now: a page is a function of it (and of the request), so a page kept under it is
            // this read's page. 0 (nothing stored, or erased) is never kept: an empty history is cheap anyway.
            let revision = try await reads.record(key)?.revision ?? 0
            let cacheKey = Self.historyPageKey(key, schema: schema?.version, before: before, limit: limit, keep: keep, revision: revision)
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
                return (await historyReads.render { self.encodedPage(rows, limit: limit, under: schema, key) }, after)
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
    static func historyPageKey(_ key: UserKey, schema: Int?, before: Int?, limit: Int, keep: Int, revision: Int) -> ByteKey {
        ByteKey(key.appId.text, key.userId.text, "history", String(schema ?? 0), String(before ?? 0), String(limit), String(keep), String(revision))
    }

    /// The encoded page of up to `limit` of `rows` (newest first; one more than `limit` when an older page exists),
    /// stopping past `maxHistoryPageBytes` of stored bytes (at least one revision).
    func encodedPage(_ rows: [HistoryRecord], limit: Int, under schema: SchemaIndex?, _ key: UserKey) -> [UInt8] {
        var items: [JSONValue] = []
        var bytes = 0
        for row in rows.prefix(limit) {
            if !items.isEmpty, bytes + row.document.count + (row.operations?.count ?? 0) > Self.maxHistoryPageBytes { break }
            bytes += row.document.count + (row.operations?.count ?? 0)
            items.append(historyItem(row, under: schema, key))
        }
        let nextBefore: JSONValue = items.count < rows.count ? .integer(rows[items.count - 1].revision) : .null
        return JSONWriter.bytes(.object(JSONObject([("items", .array(items)), ("nextBefore", nextBefore)])))
    }

    /// One kept revision as the history and the export show it. A stored document or operation list that
    /// does not parse (damaged) shows as null and is logged, so one bad row never fails a page.
    /// - Parameter schema: the version to show the customization under; nil: as stored.
    package func historyItem(_ row: HistoryRecord, under schema: SchemaIndex? = nil, _ key: UserKey? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("revision", .integer(row.revision)), ("updatedAt", .string(row.updatedAt)), ("change", .string(row.change)),
        ]
        if row.change == ChangeKind.patch.rawValue {
            members.append(("operations", row.operations.map { Self.operationList(parsedOrNull($0, revision: row.revision)) } ?? .null))
        }
        members.append(("customization", document(row, under: schema, key)))
        return .object(JSONObject(members))
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
