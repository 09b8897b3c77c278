import TabStoreDomain
import TabStoreSupport

extension TabSchema {
    /// The schema as served and stored: `version`, `createdAt`, then the items with defaults written out.
    package func storedDocument(version: Int, createdAt: String) -> [UInt8] {
        guard case .object(let items) = json() else { preconditionFailure("a schema encodes as an object") }
        var object = JSONObject([("version", .integer(version)), ("createdAt", .string(createdAt))])
        for (key, value) in items.members { object[key] = value }
        return JSONWriter.bytes(.object(object))
    }
}
