import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// Writes: PUT replaces the choices, PATCH applies operations, DELETE forgets them (revert, in
/// `CustomizationRoutes+History`, goes through the same use case). Each parses its request into the application
/// layer's values (`CustomizationWrites.WriteRequest`: the user, the writer's version, `If-Match` /
/// `If-None-Match`, the `Idempotency-Key`) and answers the outcome; the write itself (turns, compare-and-set,
/// idempotent answers, publishing) is `CustomizationWrites`'.
extension CustomizationRoutes {
    /// The application's write of the path's user, as the request asks for it.
    /// - Throws: `APIError` 404 (app), 404/410 (`schemaVersion`), 400 (a malformed `If-Match`, `If-None-Match` or
    ///   `Idempotency-Key`).
    func writeRequest(_ request: HTTPRequest, _ context: RouteContext) async throws -> (CustomizationWrites.WriteRequest, IdempotentRequest?) {
        let entry = try await services.requireApp(context)
        let served = try await services.servedSchema(request, entry)
        let key = try userKey(context)
        let preconditions = try Preconditions(request)
        let idempotent = try IdempotentRequest(request)
        var write = CustomizationWrites.WriteRequest(key: key, entry: entry, served: served, preconditions: preconditions.forWrite,
                                                     idempotency: idempotent?.write)
        write.actor = context.operatorName.map { .operatorToken($0) } ?? .user
        return (write, idempotent)
    }

    /// The answer to a write: the customization under the writer's version with its ETag (200), 204 for a write
    /// answered without one, or a repeat's stored first answer.
    func answer(_ outcome: WriteOutcome, _ idempotent: IdempotentRequest?) -> HTTPResponse {
        switch outcome {
        case .written(let written):
            return written.document.map { customizationResponse(document: $0, etag: EntityTag(written.tag)) } ?? HTTPResponse(status: 204)
        case .replayed(let stored):
            services.metrics.recordReplay()
            return IdempotentRequest.response(replaying: stored)
        }
    }

    /// A write that edits the choices the writer's version sees (`CustomizationWrites.edit`).
    func edit(
        _ request: HTTPRequest, _ context: RouteContext, kind: CustomizationWrites.Kind,
        change: @escaping @Sendable (Customization, SchemaIndex) throws -> Customization
    ) async throws -> HTTPResponse {
        let (write, idempotent) = try await writeRequest(request, context)
        return answer(try await services.writes.edit(write, kind: kind, change: change), idempotent)
    }

    /// The stored first answer of a repeated request (nil for a new key).
    /// - Throws: `WriteError.idempotencyKeyReused` (422) when the key was used for another request.
    func replay(_ idempotent: IdempotentRequest, _ key: UserKey) async throws -> HTTPResponse? {
        guard let stored = try await services.writes.replay(idempotent.write, key) else { return nil }
        return answer(.replayed(stored), idempotent)
    }

    func putCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let (document, echo) = try Customization.decode(try request.jsonBody())
        let key = try userKey(context)
        if let appId = echo.appId, Identifier(appId) != key.appId {
            throw APIError(status: 400, slug: .malformedRequest, title: "Malformed request", detail: "appId does not match the path",
                           violations: [Violation(pointer: "/appId", code: .mismatch, detail: "appId must be \"\(key.appId)\"")])
        }
        if let userId = echo.userId, Identifier(userId) != key.userId {
            throw APIError(status: 400, slug: .malformedRequest, title: "Malformed request", detail: "userId does not match the path",
                           violations: [Violation(pointer: "/userId", code: .mismatch, detail: "userId must be \"\(key.userId)\"")])
        }
        let (bodyRevision, bodySchemaVersion, bodyUpdatedAt) = (echo.revision, echo.schemaVersion, document.updatedAt)
        return try await edit(request, context, kind: CustomizationWrites.Kind(change: .put)) { current, schema in
            // The server-owned fields describe the state the client read: any that differs from what is stored
            // now is refused as a stale If-Match is. `revision`, then `schemaVersion` (the choices were read
            // under another schema), then `updatedAt` (compared as bytes).
            func stale(_ detail: String) -> APIError {
                .preconditionFailed(current: Self.customizationTag(revision: current.revision, schemaVersion: schema.version), detail: detail)
            }
            if let bodyRevision, bodyRevision != current.revision {
                throw stale("the customization is at revision \(current.revision), not \(bodyRevision); read it again and retry")
            }
            if let bodySchemaVersion, bodySchemaVersion != schema.version {
                throw stale("the customization is served under schema version \(schema.version), not \(bodySchemaVersion); read it again and retry")
            }
            if let bodyUpdatedAt, Identifier(bodyUpdatedAt) != current.updatedAt.map({ Identifier($0) }) {
                throw stale("updatedAt is not the stored one; read the customization again and retry")
            }
            return try CustomizationEditor.replace(with: document, index: schema)
        }
    }

    func patchCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let body = try request.jsonBody()
        let operations = try Operation.decodeList(body)
        var kind = CustomizationWrites.Kind(change: .patch)
        // The history keeps the body as sent (an object whose `operations` member is the list: `historyItem` shows
        // that member), unless it is larger than a stored customization may be; with no history kept (retention
        // 0) nothing needs it. Stored as received, not re-encoded: a write pays nothing for it but the bytes. A
        // body over the limit only by its whitespace is kept as the list re-encoded compactly.
        let maxBytes = services.configuration.maxCustomizationBytes
        if services.configuration.historyRevisions > 0 {
            if request.body.count <= maxBytes {
                kind.operations = request.body
            } else if case .object(let object) = body, let list = object["operations"] {
                let encoded = JSONWriter.bytes(list)
                if encoded.count <= maxBytes { kind.operations = encoded }
            }
        }
        return try await edit(request, context, kind: kind) { current, schema in
            try CustomizationEditor.apply(operations, to: current, index: schema)
        }
    }

    /// Forgets the user's choices as the writer's version sees them (`CustomizationWrites.forget`): 204.
    func deleteCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let (write, idempotent) = try await writeRequest(request, context)
        return answer(try await services.writes.forget(write), idempotent)
    }
}
