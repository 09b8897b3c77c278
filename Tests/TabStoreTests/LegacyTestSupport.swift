import Foundation
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreHTTP
@testable import TabStoreSupport

// The request helpers the tests used before `TestRequest`, kept while the test files move over; removed after.

extension LiveService {
    func call(_ method: String, _ path: String, token: String? = nil, headers: [(String, String)] = [], json body: String? = nil) async throws -> TestResponse {
        try await send(TestRequest(method, path).bearer(token).headers(headers).json(ifAny: body))
    }

    func userToken(app: String, user: String, secret: String, expiresIn: Int = 3600) -> String {
        Credentials.App(id: app, secret: secret).token(for: user, expiresIn: expiresIn)
    }
}

extension RawClient {
    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil) -> Response? {
        var built = TestRequest(method, path).headers(headers)
        if let body { built.body = Array(body.utf8) }
        return request(built)
    }
}

extension Trust {
    static func now() -> Int { Credentials.now() }
    static func id(_ response: TestResponse, _ key: String) -> Identifier? { response.identifier(key) }
    static func keys(_ response: TestResponse, _ key: String) -> [Identifier] { response.identifierKeys(key) }
}

final class InProcessAPI: @unchecked Sendable {
    let client: InProcessClient
    var api: APIResponder { client.api }
    var admin: String { client.admin }

    init(metricsRequireAuth: Bool = false) throws {
        client = try InProcessClient { $0.metricsRequireAuth = metricsRequireAuth; $0.allowedOrigins = [] }
    }

    func close() async { await client.close() }

    static func head(_ method: String, _ target: String, token: String?, contentLength: Int? = nil, expectsContinue: Bool = false) -> HTTPRequestHead {
        var headers = HTTPHeaders([("Host", "x")])
        if let token { headers.add("Authorization", "Bearer \(token)") }
        if contentLength != nil { headers.add("Content-Type", "application/json") }
        return HTTPRequestHead(method: method, target: target, version: .http11, headers: headers, keepAlive: true,
                               contentLength: contentLength, chunked: false, expectsContinue: expectsContinue)
    }

    static let context = RequestContext(requestId: "trust", receivedAt: 0)

    func call(_ method: String, _ target: String, token: String?, json: String? = nil) async -> TestResponse {
        await client.send(TestRequest(method, target).bearer(token).json(ifAny: json))
    }

    func makeApp(_ id: String, schema: String) async throws -> String { try await client.makeApp(id, schema: schema) }
}
