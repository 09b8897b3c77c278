import TabStoreDomain
import TabStoreHTTP
import TabStoreStorage
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
        // One more than asked for tells whether an older page exists.
        let rows = try await services.store.history(appId: key.appId.text, userId: key.userId.text, before: before, limit: limit + 1,
                                                        keep: services.configuration.historyRevisions)
        var items: [JSONValue] = []
        var bytes = 0
        for row in rows.prefix(limit) {
            if !items.isEmpty, bytes + row.document.count + (row.operations?.count ?? 0) > Self.maxHistoryPageBytes { break }
            bytes += row.document.count + (row.operations?.count ?? 0)
            items.append(historyItem(row, under: schema, key))
        }
        let nextBefore: JSONValue = items.count < rows.count ? .integer(rows[items.count - 1].revision) : .null
        return .json(200, .object(JSONObject([("items", .array(items)), ("nextBefore", nextBefore)])),
                     headers: HTTPHeaders([("Cache-Control", "no-store")]))
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
        // The revision's stored document, every supported version's choices (DOMAIN.md section 7), pruned to what
        // the supported versions can name; answered under the writer's version.
        return try await replaceStored(request, context, kind: WriteKind(change: .revert), with: choices)
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
