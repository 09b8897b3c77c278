extension TabStoreAPI {
    func healthz(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        json(200, ["status": "ok"])
    }

    func readyz(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        if serverState.isDraining {
            throw APIError(status: 503, slug: "draining", title: "Service unavailable", detail: "the server is shutting down")
        }
        guard await store.ping() else {
            throw APIError(status: 503, slug: "database-unavailable", title: "Service unavailable", detail: "the database does not answer")
        }
        if let failure = await store.writeFailure() {
            throw APIError.storageUnavailable(failure)
        }
        return json(200, ["status": "ready"])
    }

    func metricsText(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let text = metrics.render(customizations: try await store.customizationCount())
        return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8")]), body: Array(text.utf8))
    }

    func openAPI(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/yaml"), ("Cache-Control", "public, max-age=300")]),
                     body: Array(OpenAPIDocument.yaml.utf8))
    }
}
