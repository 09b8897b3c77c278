import TabStoreSupport

/// Whose customization a request is about: both ids checked, compared as bytes. Writes of one user take
/// turns on it (`ApplicationServices.userLocks`) and followers of one user are registered under it (`ChangeHub`).
package struct UserKey: Hashable, Sendable {
    package let appId: Identifier
    package let userId: Identifier

    package init(appId: Identifier, userId: Identifier) {
        self.appId = appId
        self.userId = userId
    }
}
