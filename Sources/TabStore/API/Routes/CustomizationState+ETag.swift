import TabStoreApplication
import TabStoreHTTP
import TabStoreSupport

extension CustomizationState {
    /// The state's ETag, as a GET of it answers.
    var etag: EntityTag { CustomizationRoutes.customizationTag(revision: revision, schemaVersion: schemaVersion) }
}
