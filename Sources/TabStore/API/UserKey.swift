import TabStoreSupport

/// Whose customization a request is about: both ids checked, compared as bytes. Writes of one user take
/// turns on it (`APIServices.userLocks`) and followers of one user are registered under it (`ChangeHub`).
struct UserKey: Hashable, Sendable {
    let appId: Identifier
    let userId: Identifier
}
