import Foundation
import Testing
import TabStoreClient

/// The client's hand-written models against openapi.yaml: every member the contract names, which ones are
/// required, every enum's values, and the document's own examples decoded and encoded back unchanged.
@Suite("TabStoreClient models match openapi.yaml")
struct ContractTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// openapi.yaml, read once (a reading failure fails each test, not the process).
    nonisolated(unsafe) static let parsed: Result<YAMLMap, any Error> = Result {
        let text = try String(contentsOf: root.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        guard let map = try YAMLSubset.parse(text) as? YAMLMap else { throw YAMLSubset.Failure(line: 1, message: "not a mapping") }
        return map
    }

    static var document: YAMLMap {
        switch parsed {
        case .success(let map): return map
        case .failure(let error):
            Issue.record(error)
            return YAMLMap()
        }
    }

    static func map(_ value: Any?, _ path: String...) -> YAMLMap {
        var current = value
        for key in path { current = (current as? YAMLMap)?[key] }
        guard let map = current as? YAMLMap else { Issue.record("no mapping at \(path)"); return YAMLMap() }
        return map
    }

    static func schema(_ name: String) -> YAMLMap { map(document, "components", "schemas", name) }

    static func properties(_ schema: YAMLMap) -> Set<String> { Set(map(schema, "properties").keys) }

    static func required(_ schema: YAMLMap) -> Set<String> { Set((schema["required"] as? [Any] ?? []).map { "\($0)" }) }

    /// An enum's values without null.
    static func enumeration(_ schema: YAMLMap) -> [String] {
        (schema["enum"] as? [Any] ?? []).compactMap { $0 is NSNull ? nil : "\($0)" }
    }

    static func json<T: Encodable>(_ value: T) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as! [String: Any]
    }

    static func keys<T: Encodable>(_ value: T) throws -> Set<String> { Set(try json(value).keys) }

    /// A model's members with every optional one set (`full`) and none set (`bare`): `full` must name exactly the
    /// schema's properties, `bare` exactly its required ones.
    static func check<T: Encodable>(_ name: String, full: T, bare: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let schema = schema(name)
        #expect(try keys(full) == properties(schema), "\(name): members", sourceLocation: sourceLocation)
        #expect(try keys(bare) == required(schema), "\(name): required members", sourceLocation: sourceLocation)
    }

    static let tab = LayoutTab(id: "t", title: "T", titleKey: "K", systemImage: "s", image: "i", role: .search)
    static let customization = Customization(
        appId: "a", userId: "u", revision: 1, schemaVersion: 1, updatedAt: Date(timeIntervalSince1970: 1_796_248_800),
                                             tabs: ["t": TabChoice()], sections: ["s": SectionChoice(tabOrder: ["t"], expanded: true)],
                                             tabBarOrder: ["t"], dynamicTabs: ["s": [DynamicTab(id: "d", title: "D", systemImage: "x")]])

    @Test("customization, its choices and data-driven tabs")
    func customizationMembers() throws {
        try Self.check("Customization", full: Self.customization,
                       bare: Customization(appId: "a", userId: "u"))
        try Self.check("TabChoice", full: TabChoice(), bare: TabChoice())
        try Self.check("SectionChoice", full: SectionChoice(tabOrder: nil, expanded: false), bare: SectionChoice())
        try Self.check("DynamicTab", full: DynamicTab(id: "d", title: "D", systemImage: "s", image: "i"), bare: DynamicTab(id: "d", title: "D"))
        try Self.check("StoredDynamicTab", full: DynamicTab(id: "d", title: "D", systemImage: "s", image: "i"), bare: DynamicTab(id: "d", title: "D"))
        #expect(TabVisibility.allCases.map(\.rawValue) == Self.enumeration(Self.map(Self.schema("TabChoice"), "properties", "sidebarVisibility")))
        #expect(TabVisibility.allCases.map(\.rawValue) == Self.enumeration(Self.map(Self.schema("TabChoice"), "properties", "tabBarVisibility")))
        // What PUT sends is what CustomizationInput takes, without the server-owned members.
        let input = Self.properties(Self.schema("CustomizationInput"))
        let body = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(Self.customization)) as! [String: Any]
        #expect(Set(body.keys).isSubset(of: input))
        #expect(Self.properties(Self.schema("TabChoiceInput")) == Self.properties(Self.schema("TabChoice")))
        #expect(Self.properties(Self.schema("SectionChoiceInput")) == Self.properties(Self.schema("SectionChoice")))
    }

    @Test("every operation: its op, members and required members, in openapi.yaml's order")
    func operations() throws {
        let branches = (Self.map(Self.document, "components", "schemas", "Operation")["oneOf"] as? [Any] ?? []).compactMap { $0 as? YAMLMap }
        #expect(branches.count == 9)
        func ops(_ branch: YAMLMap) -> [String] {
            let op = Self.map(branch, "properties", "op")
            return op["const"].map { ["\($0)"] } ?? Self.enumeration(op)
        }
        #expect(branches.flatMap(ops) == TabOperation.Kind.allCases.map(\.rawValue))
        let samples: [(full: TabOperation, bare: TabOperation)] = [
            (.setSidebarVisibility(tab: "t", visibility: .hidden), .setSidebarVisibility(tab: "t", visibility: .hidden)),
            (.setTabBarVisibility(tab: "t", visibility: .visible), .setTabBarVisibility(tab: "t", visibility: .visible)),
            (.setTabOrder(section: "s", tabOrder: ["t"]), .setTabOrder(section: "s", tabOrder: ["t"])),
            (.moveTab(section: "s", tab: "t", toIndex: 0), .moveTab(section: "s", tab: "t", toIndex: 0)),
            (.setTabBarOrder(["t"]), .setTabBarOrder([])),
            (.setSectionExpanded(section: "s", expanded: false), .setSectionExpanded(section: "s", expanded: true)),
            (.setDynamicTabs(section: "s", tabs: [DynamicTab(id: "d", title: "D")]), .setDynamicTabs(section: "s", tabs: [])),
            (.resetVisibility(placement: .all), .resetVisibility()),
            (.resetSectionOrder(section: "s"), .resetSectionOrder()),
            (.resetTabBarOrder, .resetTabBarOrder),
        ]
        #expect(samples.map(\.full.kind) == TabOperation.Kind.allCases)
        for sample in samples {
            let branch = try #require(branches.first { ops($0).contains(sample.full.kind.rawValue) })
            #expect(try Self.keys(sample.full) == Self.properties(branch), "\(sample.full.kind)")
            #expect(try Self.keys(sample.bare) == Self.required(branch), "\(sample.full.kind)")
            #expect(try JSONDecoder().decode(TabOperation.self, from: JSONEncoder().encode(sample.full)) == sample.full)
        }
        let reset = try #require(branches.first { ops($0) == ["resetVisibility"] })
        #expect(ResetPlacement.allCases.map(\.rawValue) == Self.enumeration(Self.map(reset, "properties", "placement")))
        #expect(Self.properties(Self.schema("PatchRequest")) == ["operations"])
        #expect(Self.properties(Self.schema("RevertRequest")) == ["toRevision"])
    }

    @Test("layout, its tabs and sections, and the enums of its parameters")
    func layout() throws {
        try Self.check("LayoutTab", full: Self.tab, bare: LayoutTab(id: "t", title: "T"))
        try Self.check("LayoutSection", full: LayoutSection(id: "s", title: "S", tabs: []), bare: LayoutSection(id: "s", title: "S", tabs: []))
        let full = TabLayout(appId: "a", userId: "u", sizeClass: .regular, platform: .iPadOS, style: .sidebarAdaptable, revision: 1, schemaVersion: 1,
                          customizationApplied: true, sidebar: [.tab(Self.tab)], tabBar: [], pinned: [], more: [], hidden: [], selectionFallback: [:])
        var bare = full
        bare.platform = nil
        bare.style = nil
        try Self.check("Layout", full: full, bare: bare)
        let layout = Self.schema("Layout")
        #expect(SizeClass.allCases.map(\.rawValue) == Self.enumeration(Self.map(layout, "properties", "sizeClass")))
        #expect(LayoutStyle.allCases.map(\.rawValue) == Self.enumeration(Self.map(layout, "properties", "style")))
        #expect(Platform.allCases.map(\.rawValue) == Self.enumeration(Self.schema("Platform")))
        #expect(LayoutTabRole.allCases.map(\.rawValue) == Self.enumeration(Self.map(Self.schema("LayoutTab"), "properties", "role")))
        #expect(Self.map(Self.schema("LayoutTab"), "properties", "kind")["const"] as? String == "tab")
        #expect(Self.map(Self.schema("LayoutSection"), "properties", "kind")["const"] as? String == "section")
    }

    @Test("history, problems, rule codes and problem types")
    func historyAndProblems() throws {
        let time = Date(timeIntervalSince1970: 1_796_248_800)
        let bootstrap = HistoryItem.Actor(kind: "operator", name: "bootstrap")
        let full = HistoryItem(revision: 1, updatedAt: time, change: .patch, operations: [], customization: Self.customization, actor: bootstrap,
                               toRevision: 0, schemaVersion: 2, dropped: ["a"], reset: ["b"], ordersChanged: ["s"], dynamicTabsDropped: 1)
        try Self.check("HistoryItem", full: full,
                       bare: HistoryItem(revision: 1, updatedAt: time, change: .put, customization: nil, actor: bootstrap))
        try Self.check("HistoryPage", full: HistoryPage(items: [], nextBefore: 3), bare: HistoryPage(items: [], nextBefore: nil))
        // `.unknown` stands for a kind a newer server may send; the rest are the document's.
        let served = Self.enumeration(Self.map(Self.schema("HistoryItem"), "properties", "change"))
        #expect(HistoryItem.Change.allCases.filter { $0 != .unknown }.map(\.rawValue) == served)
        let newer = #"{"revision":2,"updatedAt":"2026-12-01T10:00:00Z","change":"rename","customization":null}"#
        let unknown = try JSONDecoder().decode(HistoryItem.self, from: Data(newer.utf8))
        #expect(unknown.change == .unknown && unknown.revision == 2)
        let problem = Self.schema("Problem")
        let error = Problem.FieldError(pointer: "/x", code: .unknownTab, detail: "d")
        try Self.check("Problem", full: Problem(type: .ruleViolation, title: "t", status: 422, detail: "d", errors: [error],
                                                minimumSchemaVersion: 1, currentSchemaVersion: 2),
                       bare: Problem(type: .ruleViolation, title: "t", status: 422, detail: "d"))
        // A 410 names the minimum and the current version (the members the app reads to tell the person to update).
        let gone = Self.map(Self.document, "components", "responses", "SchemaVersionRetired", "content", "application/problem+json")
        let branches = (Self.map(gone, "schema")["allOf"] as? [Any] ?? []).compactMap { $0 as? YAMLMap }
        #expect(branches.map { Self.required($0) }.contains(["minimumSchemaVersion", "currentSchemaVersion"]))
        let example = try JSONSerialization.data(withJSONObject: YAMLMap.plain(try #require(gone["example"])))
        let retired = try JSONDecoder().decode(Problem.self, from: example)
        #expect(
            retired.type == .schemaVersionRetired && retired.status == 410 && retired.minimumSchemaVersion == 2 && retired.currentSchemaVersion == 2)
        let items = Self.map(problem, "properties", "errors", "items")
        #expect(try Self.keys(error) == Self.properties(items) && Self.required(items) == Self.properties(items))
        #expect(RuleCode.known.map(\.rawValue) == Self.enumeration(Self.map(items, "properties", "code")))
        #expect(ProblemType.known.map(\.rawValue) == Self.enumeration(Self.map(problem, "properties", "type")))
    }

    /// An example's value as JSON data.
    static func example(_ name: String) throws -> Data {
        let value = try #require(Self.map(Self.document, "components", "examples", name)["value"])
        return try JSONSerialization.data(withJSONObject: YAMLMap.plain(value))
    }

    /// Decodes an example and encodes it back: the same JSON, so no member is lost or invented.
    static func roundTrip<T: Codable>(_ type: T.Type, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let data = try example(name)
        let decoded = try JSONDecoder().decode(type, from: data)
        let original = try JSONSerialization.jsonObject(with: data) as! NSDictionary
        let again = try JSONSerialization.jsonObject(with: JSONEncoder().encode(decoded)) as! NSDictionary
        #expect(original == again, "\(name)", sourceLocation: sourceLocation)
    }

    @Test("openapi.yaml's examples decode and encode back unchanged")
    func examples() throws {
        try Self.roundTrip(Customization.self, "Customization")
        for name in ["LayoutRegular", "LayoutCompact", "LayoutIPadWithPlaylists", "LayoutSeed001Compact", "LayoutSeed002ForEachCompact",
                     "LayoutSeed002ForEachRegular"] {
            try Self.roundTrip(TabLayout.self, name)
        }
        try Self.roundTrip(HistoryPage.self, "HistoryPage")
        try Self.roundTrip(Problem.self, "UnknownField")
        try Self.roundTrip(Problem.self, "IdempotencyKeyReused")
        try Self.roundTrip(Problem.self, "SchemaVersionNotFound")
        let layout = try JSONDecoder().decode(TabLayout.self, from: try Self.example("LayoutRegular"))
        #expect(layout.sidebar.map(\.id) == ["com.myApp.home", "com.myApp.categories", "com.myApp.playlists"])
        #expect(layout.fallback(for: "com.myApp.bell") == "com.myApp.home")
    }
}
