import TabStoreHTTP
import TabStoreSupport

extension HTTPRequest {
    /// Parses a JSON request body after checking its media type.
    /// - Throws: `APIError` 415 for another content type, 400 for invalid JSON.
    func jsonBody() throws -> JSONValue {
        // `admit` refused another media type from the head already; checked again for callers that skip it.
        guard head.hasJSONContentType else { throw APIError.unsupportedMediaType }
        do {
            return try JSONParser.parse(body)
        } catch {
            throw APIError(status: 400, slug: .malformedJson, title: "Malformed JSON",
                           detail: "invalid JSON at byte \(error.offset): \(error.message)")
        }
    }
}

extension HTTPResponse {
    /// A JSON answer of `value`.
    static func json(_ status: Int, _ value: JSONValue, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        json(status, JSONWriter.bytes(value), headers: headers)
    }

    /// A JSON answer of bytes already encoded (a stored document is served as stored).
    static func json(_ status: Int, _ body: [UInt8], headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.add("Content-Type", "application/json")
        return HTTPResponse(status: status, headers: headers, body: body)
    }
}
