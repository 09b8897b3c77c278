import TabStoreHTTP
import TabStoreSupport

/// One JSON line per answer: method label, route pattern, status, body bytes, duration, request id and, for an
/// operator's request, the operator token's name (never the raw path, a body or a token).
struct AccessLogMiddleware: ResponseMiddleware {
    let logger: Logger

    /// nil when the configuration turns the access log off, so the chain skips it.
    init?(_ configuration: APIConfiguration, logger: Logger) {
        guard configuration.accessLog else { return nil }
        self.logger = logger
    }

    func handle(_ response: inout HTTPResponse, for request: HTTPRequest, context: APIRequestContext) {
        let seconds = context.elapsedSeconds()
        var fields: [(String, JSONValue)] = [
            ("method", .string(Metrics.methodLabel(request.method))), ("route", .string(context.pattern)), ("status", .integer(response.status)),
            ("bytes", .integer(response.body.count)), ("durationMs", .number((seconds * 1e6).rounded() / 1e3)),
            ("requestId", .string(context.requestId)),
        ]
        if let name = context.operatorName { fields.append(("operator", .string(name))) }
        logger.info("request", fields)
    }
}
