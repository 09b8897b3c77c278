import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// History and undo: the kept revisions, newest first, and a revert that stores an earlier revision's
/// choices, reconciled with the current schema, as a new revision (so a revert can itself be reverted).
extension CustomizationRoutes {
    /// A page stops adding revisions past this many bytes of documents and operations (it always lists at
    /// least one): a hundred large revisions would otherwise make one answer of many megabytes.
    static let maxHistoryPageBytes = 1 << 20

    func history(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let limit = try Self.integerParameter(request, "limit", in: 1...APIConfiguration.maxHistoryPage) ?? APIConfiguration.defaultHistoryPage
        let before = try Self.integerParameter(request, "before", in: 1...Int.max)
        let entry = try await services.requireApp(context)
        // Under a version the client names, each revision shows as that version's clients see it; without one, as
        // stored (every supported version's choices).
        let schema = request.queryParameter("schemaVersion") == nil ? nil : try await services.servedSchema(request, entry)
        let key = try userKey(context)
        let keep = services.configuration.historyRevisions
        let (services, routes) = (self.services, self)
        let page = try await Self.admitted(services) {
            try await services.historyReads.withUserTurn(key) { () async throws -> [UInt8] in
                try services.historyReads.checkBudget(key)
                // The user's revision now: a page is a function of it (and of the request), so a page kept under it is
                // this read's page. 0 (nothing stored, or erased) is never kept: an empty history is cheap anyway.
                let revision = try await services.store.customization(appId: key.appId.text, userId: key.userId.text)?.revision ?? 0
                let cacheKey = Self.historyPageKey(key, schema: schema?.version, before: before, limit: limit, keep: keep, revision: revision)
                if revision > 0, let kept = services.historyPages.value(cacheKey) {
                    services.historyReads.charge(key, bytes: kept.count)
                    return kept
                }
                let (bytes, after) = try await services.historyReads.withSlot { () async throws -> ([UInt8], Int) in
                    // One more than asked for tells whether an older page exists.
                    let rows = try await services.store.history(appId: key.appId.text, userId: key.userId.text, before: before, limit: limit + 1,
                                                                keep: keep, maxBytes: Self.maxHistoryPageBytes)
                    // The same revision after the read: no write or erase of the user committed in between (revisions only
                    // rise), so the rows are those of `revision`.
                    let after = try await services.store.customization(appId: key.appId.text, userId: key.userId.text)?.revision ?? 0
                    return (await services.historyReads.render { routes.historyPage(rows, limit: limit, under: schema, key) }, after)
                }
                if revision > 0, after == revision {
                    services.historyPages.put(cacheKey, bytes, cost: bytes.count + cacheKey.bytes.count + 96)
                }
                services.historyReads.charge(key, bytes: bytes.count)
                return bytes
            }
        }
        return .json(200, page, headers: HTTPHeaders([("Cache-Control", "no-store")]))
    }

    /// `historyPages`' key: the user, the version shown (0: as stored), the page asked for, the retention, and
    /// the user's revision when the page was read (the app's id first: deleting the app drops its pages).
    static func historyPageKey(_ key: UserKey, schema: Int?, before: Int?, limit: Int, keep: Int, revision: Int) -> ByteKey {
        ByteKey(key.appId.text, key.userId.text, "history", String(schema ?? 0), String(before ?? 0), String(limit), String(keep), String(revision))
    }

    /// The encoded page of up to `limit` of `rows` (newest first; one more than `limit` when an older page exists),
    /// stopping past `maxHistoryPageBytes` of stored bytes (at least one revision).
    func historyPage(_ rows: [HistoryRecord], limit: Int, under schema: SchemaIndex?, _ key: UserKey) -> [UInt8] {
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

    /// Runs `body`, turning a refusal of `HistoryReads` into its problem: 429 `too-many-history-reads` (the
    /// user's own reads wait already) or 503 `too-many-waiting` (the server's), both with `Retry-After`.
    static func admitted<T: Sendable>(_ services: APIServices, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let refusal as HistoryReads.Refusal {
            var error: APIError
            var retryAfter = 1
            switch refusal {
            case .userBusy:
                error = APIError(status: 429, slug: .tooManyHistoryReads, title: "Too many requests",
                                 detail: "one history read or export per user at a time, \(services.historyReads.limits.perUserWaiting) more waiting; retry in a second")
            case .userOverBudget(let seconds):
                retryAfter = seconds
                error = APIError(status: 429, slug: .tooManyHistoryReads, title: "Too many requests",
                                 detail: "at most \(services.historyReads.limits.bytesPerSecond) bytes of history pages per user a second; retry in \(seconds) s")
            case .serverBusy:
                error = APIError(status: 503, slug: .tooManyWaiting, title: "Service unavailable",
                                 detail: "too many history reads and exports wait; retry in a second")
            }
            error.headers.add("Retry-After", String(retryAfter))
            throw error
        }
    }

    /// One kept revision as the history and the export show it. A stored document or operation list that
    /// does not parse (damaged) shows as null and is logged, so one bad row never fails a page.
    /// - Parameter schema: the version to show the customization under; nil: as stored.
    func historyItem(_ row: HistoryRecord, under schema: SchemaIndex? = nil, _ key: UserKey? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [("revision", .integer(row.revision)), ("updatedAt", .string(row.updatedAt)), ("change", .string(row.change))]
        if row.change == ChangeKind.patch.rawValue {
            members.append(("operations", row.operations.map { Self.operationList(parsedOrNull($0, revision: row.revision)) } ?? .null))
        }
        members.append(("customization", document(row, under: schema, key)))
        return .object(JSONObject(members))
    }

    /// A PATCH's operations as stored: the request's body (an object whose `operations` member is the list), or,
    /// in rows stored before bodies were kept as received, the list itself.
    static func operationList(_ stored: JSONValue) -> JSONValue {
        if case .object(let body) = stored { return body["operations"] ?? .null }
        return stored
    }

    /// A kept revision's customization, as stored or reconciled under `schema`.
    private func document(_ row: HistoryRecord, under schema: SchemaIndex?, _ key: UserKey?) -> JSONValue {
        guard let schema, let key else { return parsedOrNull(row.document, revision: row.revision) }
        do {
            let value = Reconciler.reconcile(try Customization.decodeStored(row.document), with: schema)
            return value.json(appId: key.appId, userId: key.userId)
        } catch {
            services.logger.warning("stored_history_unreadable", [("revision", .integer(row.revision)), ("bytes", .integer(row.document.count))])
            return .null
        }
    }

    private func parsedOrNull(_ bytes: [UInt8], revision: Int) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            services.logger.warning("stored_history_unreadable", [("revision", .integer(revision)), ("bytes", .integer(bytes.count))])
            return .null
        }
    }

    /// A decimal query parameter within `range`; nil when absent. Never traps (at most 18 digits are read).
    /// - Throws: `APIError` 400 `invalid-parameter`.
    static func integerParameter(_ request: HTTPRequest, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = request.queryParameter(name) else { return nil }
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text), range.contains(value) else {
            let upper = range.upperBound == Int.max ? "" : " to \(range.upperBound)"
            throw APIError.badRequest(.invalidParameter, "\(name) must be an integer from \(range.lowerBound)\(upper)")
        }
        return value
    }

    func revert(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let target = try Self.revertTarget(try request.jsonBody())
        let entry = try await services.requireApp(context)
        _ = try await services.servedSchema(request, entry)  // 404/410 before anything is read
        let key = try userKey(context)
        // Revision 0 is the empty customization every user starts from; any other must be kept. Read before
        // the write takes its turn: a revision pruned meanwhile is still a revision that was kept when asked for.
        let choices: Customization
        if target == 0 {
            choices = .empty
        } else {
            guard let row = try await services.store.historyRecord(appId: key.appId.text, userId: key.userId.text, revision: target,
                                                                        keep: services.configuration.historyRevisions) else {
                // A retry of a revert that was applied gets its first answer, even once the revision it named is
                // no longer kept (and another request under the key is 422, not 404).
                if let idempotent = try IdempotentRequest(request), let replay = try await replay(idempotent, key) { return replay }
                throw APIError.notFound(.revisionNotFound, "revision \(target) is not kept; GET …/customization/history lists the kept ones")
            }
            choices = try Customization.decodeStored(row.document)
        }
        // The revision's stored document, every supported version's choices (docs/domain.md "Several app versions at once"), pruned to what
        // the supported versions can name; answered under the writer's version.
        let (write, idempotent) = try await writeRequest(request, context)
        return answer(try await services.writes.replaceStored(write, kind: CustomizationWrites.Kind(change: .revert), with: choices), idempotent)
    }

    /// `{"toRevision": n}`, n ≥ 0.
    /// - Throws: `MalformedDocument` (400) for another shape, an unknown member or a negative revision.
    static func revertTarget(_ body: JSONValue) throws -> Int {
        let reader = try ObjectReader(body, at: "")
        try reader.rejectUnknown(["toRevision"])
        guard case .object(let object) = body, let value = object["toRevision"] else {
            throw MalformedDocument(pointer: "/toRevision", code: .missingField, detail: "\"toRevision\" is required")
        }
        guard case .integer(let revision) = value else {
            throw MalformedDocument(pointer: "/toRevision", code: .invalidType, detail: "\"toRevision\" must be an integer")
        }
        guard revision >= 0 else {
            throw MalformedDocument(pointer: "/toRevision", code: .invalidValue, detail: "\"toRevision\" is a revision number, 0 or more")
        }
        return revision
    }
}
