/// Every code a violation can carry: stable kebab-case words a client switches on. openapi.yaml lists
/// exactly these (a test compares the two), so a new code cannot ship undocumented.
package enum ViolationCode: String, Sendable, CaseIterable {
    // Customization rules (422).
    case unknownTab = "unknown-tab"
    case unknownSchemaVersion = "unknown-schema-version"
    case unknownSection = "unknown-section"
    case customizationDisabled = "customization-disabled"
    case notHideable = "not-hideable"
    case notMovable = "not-movable"
    case crossSectionMove = "cross-section-move"
    case invalidTabOrder = "invalid-tab-order"
    case sidebarOnly = "sidebar-only"
    case pinnedTab = "pinned-tab"
    case noVisibleTab = "no-visible-tab"
    case tooManyEntries = "too-many-entries"
    case customizationTooLarge = "customization-too-large"
    case notDynamicSection = "not-dynamic-section"
    case prefixMismatch = "prefix-mismatch"
    // Schema rules (422).
    case duplicateId = "duplicate-id"
    case emptyId = "empty-id"
    case emptyTitle = "empty-title"
    case idTooLong = "id-too-long"
    case titleTooLong = "title-too-long"
    case imageTooLong = "image-too-long"
    case nestedSection = "nested-section"
    case multipleSearchTabs = "multiple-search-tabs"
    case searchNotPinned = "search-not-pinned"
    case searchInSection = "search-in-section"
    case sidebarOnlyInTabBar = "sidebar-only-in-tab-bar"
    case conflictingImage = "conflicting-image"
    case dynamicPrefixConflict = "dynamic-prefix-conflict"
    case tooManyItems = "too-many-items"
    case invalidStandIn = "invalid-stand-in"
    // Apps (422).
    case invalidName = "invalid-name"
    // Malformed documents (400), and values refused in either.
    case unknownField = "unknown-field"
    case invalidType = "invalid-type"
    case missingField = "missing-field"
    case invalidValue = "invalid-value"
    case invalidId = "invalid-id"
    case mismatch
}
