import Foundation
import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// Named operator tokens (docs/api.md "Operator tokens and audit"): created with a scope and an optional expiry,
/// listed without the token, revoked at once on every replica (each request reads the table).
struct OperatorTokenRoutes: RouteGroup {
    let services: APIServices

    init(_ services: APIServices) { self.services = services }

    func register(on builder: inout Router.Builder) {
        builder.add("POST", "/v1/operator-tokens", access: .operatorOnly, body: .json, create)
        builder.add("GET", "/v1/operator-tokens", access: .operatorOnly, body: .empty, list)
        builder.add("DELETE", "/v1/operator-tokens/{name}", access: .operatorOnly, body: .empty, revoke)
        builder.add("GET", "/v1/audit", access: .operatorOnly, body: .empty, audit)
    }

    /// `GET /v1/audit?app=ID&actor=NAME&before=SEQ&limit=N`: newest first, `limit` 1-100 (default 50).
    func audit(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let limit = try CustomizationRoutes.integerParameter(request, "limit", in: 1...100) ?? 50
        let before = try CustomizationRoutes.beforeParameter(request)
        let app = request.queryParameter("app")
        if let app, !Identifier(app).isValidAppId { throw APIError.badRequest(.invalidParameter, "app must be an app id") }
        let actor = request.queryParameter("actor")
        if let actor, !Self.isValidName(actor) && actor != Principal.bootstrapName {
            throw APIError.badRequest(.invalidParameter, "actor must be an operator token's name")
        }
        let rows = try await services.store.audit(app: app, actor: actor, before: before, limit: limit + 1)
        let listed = rows.prefix(limit)
        let items: [JSONValue] = listed.map { entry in
            var members: [(String, JSONValue)] = [("seq", .integer(entry.seq)), ("at", .string(entry.at)), ("actor", .string(entry.actor)),
                                                  ("action", .string(entry.action))]
            if let appId = entry.appId { members.append(("appId", .string(appId))) }
            if let userId = entry.userId { members.append(("userId", .string(userId))) }
            if let target = entry.target { members.append(("target", .string(target))) }
            members += [("requestId", .string(entry.requestId)), ("status", .integer(entry.status))]
            return .object(JSONObject(members))
        }
        let next: JSONValue = rows.count > limit ? .integer(listed.last!.seq) : .null
        return .json(200, .object(JSONObject([("items", .array(items)), ("next", next)])), headers: HTTPHeaders([("Cache-Control", "no-store")]))
    }

    /// A token's name: 1-64 bytes of A-Z a-z 0-9 . _ -, never the configured token's.
    static func isValidName(_ name: String) -> Bool {
        (1...OperatorTokenRecord.maxNameBytes).contains(name.utf8.count) && name != Principal.bootstrapName
            && name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x5F
                    || byte == 0x2D
            }
    }

    func create(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let body = try request.jsonBody()
        let reader = try ObjectReader(body, at: "")
        try reader.rejectUnknown(["name", "scope", "expiresAt"])
        let name = try reader.requiredString("name")
        let scope = try reader.requiredString("scope")
        var problems: [Violation] = []
        if !Self.isValidName(name) {
            problems.append(Violation(pointer: "/name", code: .invalidName,
                                      detail: "a token name is 1-64 bytes of A-Z a-z 0-9 . _ - and not \"bootstrap\""))
        }
        if scope != "admin" && scope != "read" {
            problems.append(Violation(pointer: "/scope", code: .invalidValue, detail: "scope is \"admin\" or \"read\""))
        }
        var expiresAt: Int?
        if case .object(let object) = body, let value = object["expiresAt"], value != .null {
            // Strict RFC 3339 (Foundation's parser takes offsets like +24:00 or +2:00 and rolls 30 February over).
            guard case .string(let text) = value, let seconds = Timestamp.parse(text), seconds > Int(services.configuration.clock()),
                  seconds < 253_402_300_800
            else {
                throw RuleRefusal([Violation(pointer: "/expiresAt", code: .invalidValue,
                                             detail: "expiresAt is a future RFC 3339 time such as 2027-01-31T00:00:00Z")])
            }
            expiresAt = seconds
        }
        if !problems.isEmpty { throw RuleRefusal(problems) }
        let token = Authenticator.newOperatorToken()
        let record = OperatorTokenRecord(name: name, digest: Crypto.sha256(Array(token.utf8)), scope: scope, createdAt: Timestamp.now(),
                                         expiresAt: expiresAt)
        // Bounded: names are bounded, and so is their number (checked where the token is inserted).
        switch try await services.store.createOperatorToken(record) {
        case .created: break
        case .nameTaken:
            throw APIError(status: 409, slug: .alreadyExists, title: "Conflict", detail: "an operator token named \"\(name)\" exists")
        case .full:
            throw APIError(status: 409, slug: .alreadyExists, title: "Conflict",
                           detail: "at most \(OperatorTokenRecord.maxTokens) operator tokens; revoke one first")
        }
        guard case .object(var json) = Self.json(record) else { preconditionFailure("json makes an object") }
        // The token is shown once, here; only its SHA-256 digest is stored.
        json["token"] = .string(token)
        return .json(201, .object(json), headers: HTTPHeaders([("Location", "/v1/operator-tokens/\(name)"), ("Cache-Control", "no-store")]))
    }

    func list(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let tokens = try await services.store.operatorTokens()
        return .json(200, .object(JSONObject([("items", .array(tokens.map(Self.json)))])), headers: HTTPHeaders([("Cache-Control", "no-store")]))
    }

    func revoke(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let name = try context.require("name")
        guard Self.isValidName(name), try await services.store.revokeOperatorToken(name: name) else {
            throw APIError.notFound(.operatorTokenNotFound, "no operator token named \(ClientText.quoted(name))")
        }
        // Its streams and long polls on this replica end now; the others hear of it from the database.
        services.changes.operatorTokenRevoked(name)
        return HTTPResponse(status: 204)
    }

    /// A token as listed: never the token or its digest. Last use is not tracked (it would be a write per request).
    static func json(_ record: OperatorTokenRecord) -> JSONValue {
        .object(JSONObject([
            ("name", .string(record.name)), ("scope", .string(record.scope)), ("createdAt", .string(record.createdAt)),
            ("expiresAt", record.expiresAt.map { .string(Timestamp.format(Date(timeIntervalSince1970: Double($0)))) } ?? .null),
            ("lastUsedAt", .null),
        ]))
    }
}
