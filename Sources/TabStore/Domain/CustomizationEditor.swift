import TabStoreSupport
/// Applies changes to a customization under a schema's rules (`CustomizationRules`): all-or-nothing, in
/// order, and every refusal names where (the operation or document entry), the id and the rule code.
package struct CustomizationEditor {
    /// One change with the place in the request it came from.
    struct Step {
        enum Source {
            /// A PATCH operation by index: refusals name its fields.
            case operation(Int)
            /// A PUT document entry replayed as an operation: refusals name the entry (or an id of its list).
            case entry(ViolationLocation)
        }

        let operation: Operation
        let source: Source

        /// Where a refusal about one field of the operation points.
        func at(_ field: OperationField) -> ViolationLocation {
            switch source {
            case .operation(let index): .operation(index, field: field)
            case .entry(let entry): entry.narrowed(to: field)
            }
        }

        /// Where a refusal about the operation as a whole points.
        var whole: ViolationLocation {
            switch source {
            case .operation(let index): .operation(index, field: nil)
            case .entry(let entry): entry
            }
        }
    }

    let rules: CustomizationRules
    var index: SchemaIndex { rules.index }
    private(set) var value: Customization
    /// Whether `value` is normalized as it stands (the last step normalized it, as `setDynamicTabs` does), so
    /// the pass after the last step would change nothing.
    private var normalized = false

    init(index: SchemaIndex, value: Customization) {
        self.rules = CustomizationRules(index)
        self.value = value
    }

    /// Applies a PATCH's operations to `customization` atomically.
    /// - Throws: `RuleRefusal` naming the first refused operation; nothing is changed then.
    package static func apply(_ operations: [Operation], to customization: Customization, index: SchemaIndex) throws(RuleRefusal) -> Customization {
        let steps = operations.enumerated().map { Step(operation: $1, source: .operation($0)) }
        return try run(steps, from: customization, index: index)
    }

    /// Validates a whole document (PUT) by replaying it as operations on the empty customization,
    /// so PUT and PATCH share one set of rules.
    /// - Throws: `RuleRefusal` naming the refused entries.
    package static func replace(with document: Customization, index: SchemaIndex) throws(RuleRefusal) -> Customization {
        var steps: [Step] = []
        // The user's data-driven tabs first: the choices below may name them.
        for id in document.dynamicTabs.keys.sorted() {
            steps.append(Step(operation: .setDynamicTabs(section: id, tabs: document.dynamicTabs[id]!.tabs),
                              source: .entry(.dynamicTabs(section: id, item: nil, member: nil))))
        }
        for id in document.tabs.keys.sorted() {
            let entry = document.tabs[id]!
            for placement in Placement.allCases where entry[placement] != .automatic {
                steps.append(
                    Step(operation: .setVisibility(placement, tab: id, entry[placement]), source: .entry(.tabVisibility(tab: id, placement))))
            }
        }
        for id in document.sections.keys.sorted() {
            let entry = document.sections[id]!
            if let order = entry.tabOrder {
                steps.append(Step(operation: .setTabOrder(section: id, tabOrder: order), source: .entry(.sectionTabOrder(section: id, item: nil))))
            }
            if let expanded = entry.expanded {
                steps.append(Step(operation: .setSectionExpanded(section: id, expanded: expanded), source: .entry(.sectionExpanded(section: id))))
            }
        }
        if let order = document.tabBarOrder {
            steps.append(Step(operation: .setTabBarOrder(order), source: .entry(.tabBarOrder(item: nil))))
        }
        var start = Customization.empty
        start.revision = document.revision
        start.schemaVersion = index.version
        return try run(steps, from: start, index: index)
    }

    private static func run(_ steps: [Step], from customization: Customization, index: SchemaIndex) throws(RuleRefusal) -> Customization {
        var editor = CustomizationEditor(index: index, value: customization)
        for step in steps {
            editor.normalized = false
            try editor.apply(step)
        }
        if editor.normalized {
            assert({ var again = editor.value; editor.rules.normalize(&again); return again == editor.value }(), "normalize is idempotent")
        } else {
            editor.rules.normalize(&editor.value)
        }
        // Limits hold for what is stored, checked after normalizing (which may append to `tabBarOrder`) and
        // after every move (which may grow a dynamic section's order): an accepted write stays readable.
        let last = steps.last?.whole ?? .document
        try editor.checkLimits(at: last)
        try editor.check(editor.rules.noVisibleTabRefusal(from: customization, to: editor.value), at: last)
        editor.value.schemaVersion = index.version
        return editor.value
    }

    /// The document limits of `Customization`, on the whole result.
    /// - Throws: `RuleRefusal` with code `too-many-entries`.
    func checkLimits(at location: ViolationLocation) throws(RuleRefusal) {
        if value.tabs.count > Customization.maxTabEntries {
            throw refuse(location, .tooManyEntries, "a customization holds at most \(Customization.maxTabEntries) tab entries")
        }
        if value.sections.count > TabSchema.maxItems {
            throw refuse(location, .tooManyEntries, "a customization holds at most \(TabSchema.maxItems) section entries")
        }
        if (value.tabBarOrder?.count ?? 0) > Customization.maxOrderLength {
            throw refuse(location, .tooManyEntries, "a tab bar order holds at most \(Customization.maxOrderLength) ids")
        }
        for (id, entry) in value.sections where (entry.tabOrder?.count ?? 0) > Customization.maxOrderLength {
            throw refuse(location, .tooManyEntries, "the tab order of section \"\(id)\" would hold more than \(Customization.maxOrderLength) ids")
        }
        for (id, list) in value.dynamicTabs where list.count > DynamicTabs.maxTabs {
            throw refuse(location, .tooManyEntries, "section \"\(id)\" would hold more than \(DynamicTabs.maxTabs) data-driven tabs")
        }
    }

    // MARK: - Operations

    private func refuse(_ location: ViolationLocation, _ code: ViolationCode, _ detail: String) -> RuleRefusal {
        RuleRefusal([Violation(location: location, code: code, detail: detail)])
    }

    /// Throws the rules' refusal of a choice, if they refuse it, naming where the choice was made.
    private func check(_ refusal: CustomizationRules.Refusal?, at location: ViolationLocation) throws(RuleRefusal) {
        if let refusal { throw refuse(location, refusal.code, refusal.detail) }
    }

    /// The tab an operation names: one this customization can name (`CustomizationRules.tab(_:in:)`), with a
    /// customization ID of its own.
    private func resolveTab(_ id: Identifier, at location: ViolationLocation) throws(RuleRefusal) -> SchemaIndex.TabInfo {
        guard let info = rules.tab(id, in: value) else {
            if let section = index.dynamicSection(of: id) {
                throw refuse(location, .unknownTab, "no tab \"\(id)\" in the stored dynamic tabs of \(section.named)")
            }
            throw refuse(location, .unknownTab, "no tab \"\(id)\" in schema version \(index.version)")
        }
        try check(rules.namingRefusal(of: info), at: location)
        return info
    }

    private func resolveSection(_ id: Identifier, at location: ViolationLocation) throws(RuleRefusal) -> SchemaSection {
        guard let section = index.section(id) else {
            throw refuse(location, .unknownSection, "no section \"\(id)\" in schema version \(index.version)")
        }
        return section
    }

    mutating func apply(_ step: Step) throws(RuleRefusal) {
        switch step.operation {
        case .setVisibility(let placement, let id, let visibility):
            try setVisibility(placement, id, visibility, step)
        case .setTabOrder(let sectionId, let order):
            let section = try resolveSection(sectionId, at: step.at(.section))
            try check(rules.reorderRefusal(of: section), at: step.at(.section))
            try checkPermutation(order, of: section, step)
            value.sections[sectionId, default: .init()].tabOrder = order
        case .moveTab(let sectionId, let id, let toIndex):
            try moveTab(sectionId, id, toIndex, step)
        case .setTabBarOrder(let order):
            try checkTabBarOrder(order, step)
            value.tabBarOrder = order
        case .setDynamicTabs(let sectionId, let tabs):
            let section = try resolveSection(sectionId, at: step.at(.section))
            if let refused = rules.dynamicTabsRefusal(tabs, for: section) {
                throw refuse(step.at(.tabs(item: refused.item, member: refused.member)), refused.refusal.code, refused.refusal.detail)
            }
            value.dynamicTabs[sectionId] = Customization.DynamicTabList(tabs)
            // Ids dropped from the list leave the user's choices now, so later operations see the section as it is.
            rules.normalize(&value)
            normalized = true
        case .setSectionExpanded(let sectionId, let expanded):
            let section = try resolveSection(sectionId, at: step.at(.section))
            try check(rules.expansionRefusal(of: section), at: step.at(.section))
            value.sections[sectionId, default: .init()].expanded = expanded
        case .resetVisibility(let scope):
            for id in value.tabs.keys {
                if scope != .tabBar { value.tabs[id]?.sidebarVisibility = .automatic }
                if scope != .sidebar { value.tabs[id]?.tabBarVisibility = .automatic }
            }
            value.compact()
        case .resetSectionOrder(let sectionId):
            if let sectionId {
                _ = try resolveSection(sectionId, at: step.at(.section))
                value.sections[sectionId]?.tabOrder = nil
                if value.sections[sectionId]?.isDefault == true { value.sections[sectionId] = nil }
            } else {
                for id in value.sections.keys { value.sections[id]?.tabOrder = nil }
                value.compact()
            }
        case .resetTabBarOrder:
            value.tabBarOrder = nil
        }
        // Entries that say nothing are dropped where they arise (not by a pass over every entry after each
        // step, which made a document of n entries cost n² to validate).
    }

    private mutating func setVisibility(_ placement: Placement, _ id: Identifier, _ visibility: Visibility, _ step: Step) throws(RuleRefusal) {
        let info = try resolveTab(id, at: step.at(.tab))
        try check(rules.refusal(of: visibility, for: info, in: placement), at: step.at(.visibility))
        if value.tabs.count >= Customization.maxTabEntries, value.tabs[id] == nil {
            throw refuse(step.at(.tab), .tooManyEntries, "a customization holds at most \(Customization.maxTabEntries) tab entries")
        }
        value.tabs[id, default: .init()][placement] = visibility
        if value.tabs[id]?.isDefault == true { value.tabs[id] = nil }
    }

    /// A `tabOrder` is a permutation of exactly the section's orderable tabs (for a dynamic section, its static
    /// tabs and the user's stored list, or while none is stored, any ids of its data tabs that may move), and
    /// leaves tabs that cannot move at their default index.
    private func checkPermutation(_ order: [Identifier], of section: SchemaSection, _ step: Step) throws(RuleRefusal) {
        let whole = step.at(.tabOrder(item: nil))
        guard order.count <= Customization.maxOrderLength else {
            throw refuse(whole, .tooManyEntries, "a tab order holds at most \(Customization.maxOrderLength) ids")
        }
        var seen = Set<Identifier>()
        for (position, id) in order.enumerated() {
            let item = step.at(.tabOrder(item: position))
            guard seen.insert(id).inserted else { throw refuse(item, .invalidTabOrder, "tab \"\(id)\" appears twice") }
            let info = try resolveTab(id, at: item)
            try check(rules.membershipRefusal(of: info, in: section), at: item)
        }
        if let missing = rules.orderableTabs(of: section, in: value).first(where: { !seen.contains($0.tab.id) }) {
            throw refuse(whole, .invalidTabOrder, "tabOrder must list all of \(section.named)'s tabs; \"\(missing.tab.id)\" is missing")
        }
        try check(rules.fixedPositionRefusal(of: order, in: section, customization: value), at: whole)
    }

    private mutating func moveTab(_ sectionId: Identifier, _ id: Identifier, _ toIndex: Int, _ step: Step) throws(RuleRefusal) {
        let section = try resolveSection(sectionId, at: step.at(.section))
        let info = try resolveTab(id, at: step.at(.tab))
        try check(rules.membershipRefusal(of: info, in: section), at: step.at(.tab))
        try check(rules.reorderRefusal(of: section), at: step.at(.section))
        try check(rules.moveRefusal(of: info), at: step.at(.tab))
        var order = rules.order(of: section, in: value)
        order.removeAll { $0 == id }
        guard toIndex >= 0, toIndex <= order.count else {
            throw refuse(step.at(.toIndex), .invalidTabOrder, "toIndex must be between 0 and \(order.count)")
        }
        order.insert(id, at: toIndex)
        value.sections[sectionId, default: .init()].tabOrder = CustomizationRules.placing(rules.fixedPositions(of: section, in: value), in: order)
    }

    private func checkTabBarOrder(_ order: [Identifier], _ step: Step) throws(RuleRefusal) {
        guard order.count <= Customization.maxOrderLength else {
            throw refuse(step.at(.tabBarOrder(item: nil)), .tooManyEntries, "a tab bar order holds at most \(Customization.maxOrderLength) ids")
        }
        var seen = Set<Identifier>()
        for (position, id) in order.enumerated() {
            let item = step.at(.tabBarOrder(item: position))
            guard seen.insert(id).inserted else { throw refuse(item, .invalidTabOrder, "tab \"\(id)\" appears twice") }
            let info = try resolveTab(id, at: item)
            try check(rules.tabBarOrderRefusal(of: info), at: item)
        }
    }
}

extension ViolationLocation {
    /// The same PUT entry, naming the entry of its list (or the member of that entry) a refusal of `field` names.
    fileprivate func narrowed(to field: OperationField) -> ViolationLocation {
        switch self {
        case .sectionTabOrder(let section, _): .sectionTabOrder(section: section, item: field.item)
        case .tabBarOrder: .tabBarOrder(item: field.item)
        case .dynamicTabs(let section, _, _):
            if case .tabs(let item, let member) = field { .dynamicTabs(section: section, item: item, member: member) } else { self }
        case .document, .operation, .tabVisibility, .sectionExpanded, .pointer: self
        }
    }
}
