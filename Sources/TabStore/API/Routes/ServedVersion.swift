import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreSupport
/// `?schemaVersion=N` (docs/domain.md "Several app versions at once"): the schema version a client was built with. A request is read,
/// validated and answered under it; without it, under the app's current version.
extension APIServices {
    /// The version `request` names, or the current one.
    /// - Throws: `APIError` 400 (not a number), 404 `schema-version-not-found` (never registered for this app),
    ///   410 `schema-version-retired` (below the app's minimum), 404 `no-schema`; storage errors.
    func servedSchema(_ request: HTTPRequest, _ entry: AppCache.Entry) async throws -> SchemaIndex {
        switch try Self.served(request, entry) {
        case .current(let current): return current
        case .past(let version):
            guard let index = try await apps.index(entry, version: version) else { throw Self.versionNotFound(version, entry) }
            return index
        }
    }

    /// `servedSchema` without waiting: nil when the version must be read from storage first.
    func servedSchemaNow(_ request: HTTPRequest, _ entry: AppCache.Entry) throws -> SchemaIndex? {
        switch try Self.served(request, entry) {
        case .current(let current): return current
        case .past(let version): return apps.cachedIndex(entry, version: version)
        }
    }

    /// The version a request is served under, before any index is read.
    private enum Served {
        case current(SchemaIndex)
        /// A supported version below the current one.
        case past(Int)
    }

    private static func served(_ request: HTTPRequest, _ entry: AppCache.Entry) throws -> Served {
        let requested = try requestedVersion(request)  // a malformed one is 400 whatever the app has
        let current = try entry.requireSchema()
        guard let version = requested, version != current.version else { return .current(current) }
        try checkServed(version, entry, current: current)
        return .past(version)
    }

    /// The versions a write keeps choices for: the app's supported versions (read and indexed once per cached app;
    /// just the current one while the app serves only that).
    func supportedVersions(_ entry: AppCache.Entry) async throws -> SupportedVersions {
        try await apps.supported(entry)
    }

    private static func requestedVersion(_ request: HTTPRequest) throws -> Int? {
        try CustomizationRoutes.integerParameter(request, "schemaVersion", in: 1...Int.max)
    }

    private static func checkServed(_ version: Int, _ entry: AppCache.Entry, current: SchemaIndex) throws {
        guard version < current.version, version > entry.app.schemaVersionFloor else { throw versionNotFound(version, entry) }
        if version < entry.app.minimumSchemaVersion { throw retired(version, minimum: entry.app.minimumSchemaVersion, current: current.version) }
    }

    private static func versionNotFound(_ version: Int, _ entry: AppCache.Entry) -> APIError {
        .notFound(
            .schemaVersionNotFound, "app \"\(entry.app.id)\" has no schema version \(version); its current version is \(entry.app.schemaVersion)")
    }

    /// 410: the app's clients of this version are no longer served (the operator raised the minimum).
    /// It names the minimum and the current version (`minimumSchemaVersion`, `currentSchemaVersion`).
    static func retired(_ version: Int, minimum: Int, current: Int) -> APIError {
        var error = APIError(status: 410, slug: .schemaVersionRetired, title: "Gone",
                             detail: "schema version \(version) is retired (the app's minimum is \(minimum)); update the app")
        error.extensions = [("minimumSchemaVersion", .integer(minimum)), ("currentSchemaVersion", .integer(current))]
        return error
    }
}
