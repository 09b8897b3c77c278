import TabStoreHTTP

/// Counts every answer of the API and its duration by route pattern, method label and status
/// (`tabstore_http_requests_total`, `tabstore_http_request_duration_seconds`), refusals included.
struct MetricsMiddleware: ResponseMiddleware {
    let metrics: Metrics

    func handle(_ response: inout HTTPResponse, for request: HTTPRequest, context: APIRequestContext) {
        metrics.recordRequest(route: context.pattern, method: request.method, status: response.status, seconds: context.elapsedSeconds())
    }
}
