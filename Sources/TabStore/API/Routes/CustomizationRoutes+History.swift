import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// History and undo: the kept revisions, newest first, and a revert that stores an earlier revision's
/// choices, reconciled with the current schema, as a new revision (so a revert can itself be reverted).
extension CustomizationRoutes {
    func history(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let limit = try Self.integerParameter(request, "limit", in: 1...APIConfiguration.maxHistoryPage) ?? APIConfiguration.defaultHistoryPage
        let before = try Self.beforeParameter(request)
        let entry = try await services.requireApp(context)
        // Under a version the client names, each revision shows as that version's clients see it; without one, as
        // stored (every supported version's choices).
        let schema = request.queryParameter("schemaVersion") == nil ? nil : try await services.servedSchema(request, entry)
        let key = try userKey(context)
        let application = services.application
        let page = try await Self.admitted(services) {
            try await application.historyPage(key, under: schema, before: before, limit: limit, current: entry.schema)
        }
        return .json(200, page, headers: HTTPHeaders([("Cache-Control", "no-store")]))
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

    /// A decimal query parameter within `range`; nil when absent. Never traps (at most 18 digits are read).
    /// - Throws: `APIError` 400 `invalid-parameter`.
    static func integerParameter(_ request: HTTPRequest, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = request.queryParameter(name) else { return nil }
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text), range.contains(value)
        else {
            let upper = range.upperBound == Int.max ? "" : " to \(range.upperBound)"
            throw APIError.badRequest(.invalidParameter, "\(name) must be an integer from \(range.lowerBound)\(upper)")
        }
        return value
    }

    /// A page's `before` bound: a positive integer of any size (one past every stored number means "from the
    /// newest", as no bound does), so a client may pass what it has without knowing the server's integer width.
    static func beforeParameter(_ request: HTTPRequest) throws -> Int? {
        guard let text = request.queryParameter("before") else { return nil }
        let digits = text.utf8.drop { $0 == 0x30 }
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), !digits.isEmpty else {
            throw APIError.badRequest(.invalidParameter, "before must be an integer from 1")
        }
        return digits.count > 18 ? Int.max : Int(String(decoding: digits, as: UTF8.self))
    }

    func revert(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let target = try Self.revertTarget(try request.jsonBody())
        let entry = try await services.requireApp(context)
        _ = try await services.servedSchema(request, entry)  // 404/410 before anything is read
        let key = try userKey(context)
        // Revision 0 is the empty customization every user starts from; any other must be kept. Read before
        // the write takes its turn: a revision pruned meanwhile is still a revision that was kept when asked for.
        guard let choices = try await services.application.revertChoices(key, toRevision: target) else {
            // A retry of a revert that was applied gets its first answer, even once the revision it named is
            // no longer kept (and another request under the key is 422, not 404).
            if let idempotent = try IdempotentRequest(request), let replay = try await replay(idempotent, key) { return replay }
            throw APIError.notFound(.revisionNotFound, "revision \(target) is not kept; GET …/customization/history lists the kept ones")
        }
        // The revision's stored document, every supported version's choices (docs/domain.md "Several app versions at once"), pruned to what
        // the supported versions can name; answered under the writer's version.
        let (write, idempotent) = try await writeRequest(request, context)
        return answer(try await services.writes.replaceStored(write, kind: Self.revertKind(target), with: choices), idempotent)
    }

    /// A revert's write, naming its target for the history.
    static func revertKind(_ target: Int) -> CustomizationWrites.Kind {
        var kind = CustomizationWrites.Kind(change: .revert)
        kind.targetRevision = target
        return kind
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
