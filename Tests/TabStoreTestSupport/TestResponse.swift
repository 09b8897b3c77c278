@testable import TabStoreHTTP
@testable import TabStoreSupport

/// A response as a test sees it, whether it came over a socket (`RawClient`) or from the responder in-process.
package struct TestResponse: Sendable {
    package let status: Int
    package let headers: HTTPHeaders
    package let body: [UInt8]

    package init(status: Int, headers: HTTPHeaders, body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of a field.
    package func header(_ name: String) -> String? { headers[name] }

    package var etag: String? { headers["ETag"] }

    package var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON.
    /// - Throws: `JSONParser.Failure` when it is not JSON.
    package func json() throws -> JSONValue { try JSONParser.parse(body) }

    /// A member of the JSON object body; nil when absent or when the body is no JSON object.
    package func field(_ key: String) -> JSONValue? {
        guard case .object(let object)? = try? json() else { return nil }
        return object[key]
    }

    /// The `type` of an RFC 9457 problem document; nil unless the body is `application/problem+json`.
    package var problemType: String? {
        guard headers["Content-Type"] == "application/problem+json", case .string(let type)? = field("type") else { return nil }
        return type
    }

    /// The rule codes of a problem document's `errors`.
    package var codes: [String] {
        guard case .array(let errors)? = field("errors") else { return [] }
        return errors.compactMap { if case .object(let error) = $0, case .string(let code)? = error["code"] { code } else { nil } }
    }

    /// The ids of a list member: objects' `id`s or plain strings (a layout's `sidebar`, a dry run's `removedIds`).
    package func ids(_ key: String) -> [String] {
        guard case .array(let items)? = field(key) else { return [] }
        return items.compactMap { item in
            if case .object(let object) = item, case .string(let id)? = object["id"] { return id }
            if case .string(let id) = item { return id }
            return nil
        }
    }

    /// A string member as an `Identifier`, so a comparison is by bytes, never canonical equivalence.
    package func identifier(_ key: String) -> Identifier? {
        guard case .string(let text)? = field(key) else { return nil }
        return Identifier(text)
    }

    /// The member names of an object member, as `Identifier`s in document order.
    package func identifierKeys(_ key: String) -> [Identifier] {
        guard case .object(let object)? = field(key) else { return [] }
        return object.keys.map { Identifier($0) }
    }
}
