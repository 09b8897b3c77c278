import Foundation

/// A stable kebab-case code in a problem's `errors` (openapi.yaml `Problem.errors[].code`). A struct rather than
/// an enum so that a code a newer server adds decodes too; switch on the constants.
public struct RuleCode: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    /// The value as the server spells it.
    public let rawValue: String
    /// The value spelled by this string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The value spelled by this string.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// A line for logs.
    public var description: String { rawValue }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    // Customization rules (422).
    /// `unknown-tab`.
    public static let unknownTab = RuleCode("unknown-tab")
    /// `unknown-section`.
    public static let unknownSection = RuleCode("unknown-section")
    /// `customization-disabled`.
    public static let customizationDisabled = RuleCode("customization-disabled")
    /// `not-hideable`.
    public static let notHideable = RuleCode("not-hideable")
    /// `not-movable`.
    public static let notMovable = RuleCode("not-movable")
    /// `cross-section-move`.
    public static let crossSectionMove = RuleCode("cross-section-move")
    /// `invalid-tab-order`.
    public static let invalidTabOrder = RuleCode("invalid-tab-order")
    /// `sidebar-only`.
    public static let sidebarOnly = RuleCode("sidebar-only")
    /// `pinned-tab`.
    public static let pinnedTab = RuleCode("pinned-tab")
    /// `no-visible-tab`.
    public static let noVisibleTab = RuleCode("no-visible-tab")
    /// `too-many-entries`.
    public static let tooManyEntries = RuleCode("too-many-entries")
    /// `customization-too-large`.
    public static let customizationTooLarge = RuleCode("customization-too-large")
    /// `not-dynamic-section`.
    public static let notDynamicSection = RuleCode("not-dynamic-section")
    /// `prefix-mismatch`.
    public static let prefixMismatch = RuleCode("prefix-mismatch")
    /// An app's `minimumSchemaVersion` that is not one of its schema versions (422, operator).
    public static let unknownSchemaVersion = RuleCode("unknown-schema-version")
    // Data-driven tabs and schemas (422).
    /// `duplicate-id`.
    public static let duplicateId = RuleCode("duplicate-id")
    /// `empty-id`.
    public static let emptyId = RuleCode("empty-id")
    /// `empty-title`.
    public static let emptyTitle = RuleCode("empty-title")
    /// `id-too-long`.
    public static let idTooLong = RuleCode("id-too-long")
    /// `title-too-long`.
    public static let titleTooLong = RuleCode("title-too-long")
    /// `image-too-long`.
    public static let imageTooLong = RuleCode("image-too-long")
    /// `nested-section`.
    public static let nestedSection = RuleCode("nested-section")
    /// `multiple-search-tabs`.
    public static let multipleSearchTabs = RuleCode("multiple-search-tabs")
    /// `search-not-pinned`.
    public static let searchNotPinned = RuleCode("search-not-pinned")
    /// `search-in-section`.
    public static let searchInSection = RuleCode("search-in-section")
    /// `sidebar-only-in-tab-bar`.
    public static let sidebarOnlyInTabBar = RuleCode("sidebar-only-in-tab-bar")
    /// `conflicting-image`.
    public static let conflictingImage = RuleCode("conflicting-image")
    /// `dynamic-prefix-conflict`.
    public static let dynamicPrefixConflict = RuleCode("dynamic-prefix-conflict")
    /// `too-many-items`.
    public static let tooManyItems = RuleCode("too-many-items")
    /// `invalid-stand-in`.
    public static let invalidStandIn = RuleCode("invalid-stand-in")
    /// `invalid-name`.
    public static let invalidName = RuleCode("invalid-name")
    // Malformed documents (400).
    /// `unknown-field`.
    public static let unknownField = RuleCode("unknown-field")
    /// `invalid-type`.
    public static let invalidType = RuleCode("invalid-type")
    /// `missing-field`.
    public static let missingField = RuleCode("missing-field")
    /// `invalid-value`.
    public static let invalidValue = RuleCode("invalid-value")
    /// `invalid-id`.
    public static let invalidId = RuleCode("invalid-id")
    /// `mismatch`.
    public static let mismatch = RuleCode("mismatch")

    /// Every code this client version knows, in openapi.yaml's order.
    public static let known: [RuleCode] = [
        unknownTab, unknownSchemaVersion, unknownSection, customizationDisabled, notHideable, notMovable, crossSectionMove, invalidTabOrder,
        sidebarOnly,
        pinnedTab, noVisibleTab, tooManyEntries, customizationTooLarge, notDynamicSection, prefixMismatch, duplicateId, emptyId,
        emptyTitle, idTooLong, titleTooLong, imageTooLong, nestedSection, multipleSearchTabs, searchNotPinned, searchInSection,
        sidebarOnlyInTabBar, conflictingImage, dynamicPrefixConflict, tooManyItems, invalidStandIn, invalidName, unknownField,
        invalidType, missingField, invalidValue, invalidId, mismatch,
    ]
}

/// A problem's `type` (`urn:tabstore:problem:<slug>`), open to slugs a newer server adds.
public struct ProblemType: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    /// The value as the server spells it.
    public let rawValue: String
    /// The value spelled by this string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A line for logs.
    public var description: String { rawValue }

    /// The type of a slug (`rule-violation` is `urn:tabstore:problem:rule-violation`).
    public static func slug(_ slug: String) -> ProblemType { ProblemType(rawValue: "urn:tabstore:problem:" + slug) }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The slug after `urn:tabstore:problem:` (nil for `about:blank`).
    public var slug: String? {
        let prefix = "urn:tabstore:problem:"
        return rawValue.hasPrefix(prefix) ? String(rawValue.dropFirst(prefix.count)) : nil
    }

    /// `rule-violation`.
    public static let ruleViolation = slug("rule-violation")
    /// `revision-mismatch`.
    public static let revisionMismatch = slug("revision-mismatch")
    /// `revision-not-found`.
    public static let revisionNotFound = slug("revision-not-found")
    /// `idempotency-key-reused`.
    public static let idempotencyKeyReused = slug("idempotency-key-reused")
    /// `unauthorized`.
    public static let unauthorized = slug("unauthorized")
    /// `forbidden`.
    public static let forbidden = slug("forbidden")
    /// `draining`.
    public static let draining = slug("draining")
    /// 410: the request named a schema version below the app's `minimumSchemaVersion` (`TabStoreError.schemaVersionRetired`).
    public static let schemaVersionRetired = slug("schema-version-retired")
    /// 404: the request named a schema version the app never registered (`TabStoreError.schemaVersionNotFound`).
    public static let schemaVersionNotFound = slug("schema-version-not-found")
    /// `about:blank`.
    public static let aboutBlank = ProblemType(rawValue: "about:blank")

    /// Every type this client version knows, in openapi.yaml's order.
    public static let known: [ProblemType] = [
        "already-exists", "app-exists", "app-not-found", "body-not-allowed", "concurrent-registration", "database-unavailable", "draining",
        "forbidden", "idempotency-key-reused", "internal-error", "invalid-idempotency-key", "invalid-if-match", "invalid-if-none-match",
        "invalid-parameter", "invalid-path", "invalid-user-id", "malformed-json", "malformed-request", "method-not-allowed",
        "minimum-schema-version-applied", "no-route", "no-schema", "not-implemented", "operator-token-not-found", "revision-mismatch",
        "revision-not-found", "rule-violation",
        "schema-version-not-found", "schema-version-retired", "storage-unavailable", "too-many-followers", "too-many-history-reads",
        "too-many-waiting", "unauthorized", "unsupported-media-type", "write-contention",
    ].map(slug) + [aboutBlank]
}

/// An RFC 9457 problem the server answered with (openapi.yaml `Problem`).
public struct Problem: Codable, Sendable, Hashable, CustomStringConvertible {
    /// One refusal: where in the request body, which rule, and a human sentence.
    public struct FieldError: Codable, Sendable, Hashable {
        /// The JSON pointer to the member at fault.
        public var pointer: String
        /// The rule code.
        public var code: RuleCode
        /// A sentence saying what happened.
        public var detail: String

        /// A value with these members.
        public init(pointer: String, code: RuleCode, detail: String) {
            self.pointer = pointer
            self.code = code
            self.detail = detail
        }
    }

    /// The problem type.
    public var type: ProblemType
    /// The title to show.
    public var title: String
    /// The HTTP status.
    public var status: Int
    /// A sentence saying what happened.
    public var detail: String
    /// The fields at fault with their rule codes, if any.
    public var errors: [FieldError]?
    /// With `schema-version-retired` (410): the oldest schema version the server still serves for this app.
    public var minimumSchemaVersion: Int?
    /// With `schema-version-retired` (410): the app's current schema version.
    public var currentSchemaVersion: Int?

    /// A value with these members.
    public init(type: ProblemType, title: String, status: Int, detail: String, errors: [FieldError]? = nil,
                minimumSchemaVersion: Int? = nil, currentSchemaVersion: Int? = nil) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.errors = errors
        self.minimumSchemaVersion = minimumSchemaVersion
        self.currentSchemaVersion = currentSchemaVersion
    }

    /// The rule codes of `errors`, in order.
    public var codes: [RuleCode] { (errors ?? []).map(\.code) }

    /// A line for logs.
    public var description: String { "\(status) \(type.slug ?? type.rawValue): \(detail)" }
}
