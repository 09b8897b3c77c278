import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// A schema in which every tab can be hidden, so the no-visible-tab rule is what keeps a tab visible.
let hideableSchema = """
    {"items": [
      {"id": "a", "title": "A"}, {"id": "b", "title": "B"},
      {"kind": "section", "id": "s", "title": "S", "tabs": [{"id": "s.x", "title": "X"}]}
    ]}
    """

@Suite("Randomized operation lists")
struct RandomOperationListTests {
    struct Case: Sendable, CustomStringConvertible {
        let name: String
        let schema: String
        let tabs: [Identifier]
        let sections: [Identifier]
        /// Ids a random `setDynamicTabs` lists (some outside every prefix, so refused).
        var dataIds: [Identifier] = []
        var description: String { name }
    }

    static let cases = [
        Case(name: "rule schema", schema: ruleSchema,
             tabs: ["home", "feed", "inbox", "extra", "settings", "search", "places.a", "places.b", "places.c",
                    "locked.a", "locked.b", "list.x", "list.y", "mix.a", "mix.b", "pick.a", "top.a", "top.b", "nope"],
             sections: ["places", "locked", "lists", "mixes", "picks", "tops", "nope"],
             dataIds: ["list.x", "list.y", "list.z", "mix.a", "mix.b", "mix.c", "pick.a", "pick.b", "top.a", "top.b", "top.c"]),
        Case(name: "every tab hideable", schema: hideableSchema, tabs: ["a", "b", "s.x", "nope"], sections: ["s", "nope"]),
    ]

    static func randomOperation(_ rng: inout SeededGenerator, _ setup: Case) -> Operation {
        let (tabs, sections) = (setup.tabs, setup.sections)
        let visibility = Visibility.allCases.randomElement(using: &rng)!
        switch Int.random(in: 0..<(setup.dataIds.isEmpty ? 9 : 11), using: &rng) {
        case 0: return .setVisibility(.sidebar, tab: tabs.randomElement(using: &rng)!, visibility)
        case 1: return .setVisibility(.tabBar, tab: tabs.randomElement(using: &rng)!, visibility)
        case 2:
            return .setTabOrder(
                section: sections.randomElement(using: &rng)!, tabOrder: Array(tabs.shuffled(using: &rng).prefix(Int.random(in: 0...4, using: &rng))))
        case 3:
            return .moveTab(
                section: sections.randomElement(using: &rng)!, tab: tabs.randomElement(using: &rng)!, toIndex: Int.random(in: -1...4, using: &rng))
        case 4: return .setTabBarOrder(Array(tabs.shuffled(using: &rng).prefix(Int.random(in: 0...5, using: &rng))))
        case 5: return .setSectionExpanded(section: sections.randomElement(using: &rng)!, expanded: Bool.random(using: &rng))
        case 6: return .resetVisibility(Operation.ResetScope.allCases.randomElement(using: &rng)!)
        case 7: return .resetSectionOrder(section: Bool.random(using: &rng) ? nil : sections.randomElement(using: &rng)!)
        case 8: return .resetTabBarOrder
        default:
            // A user's data-driven tabs: usually ids of the section's prefix, sometimes another's (refused).
            let section = sections.randomElement(using: &rng)!
            let prefix = ["mixes": "mix.", "picks": "pick.", "tops": "top."][section.text] ?? "list."
            let pool = setup.dataIds.filter { Int.random(in: 0..<8, using: &rng) == 0 || $0.hasBytePrefix(Identifier(prefix)) }
            let ids = pool.shuffled(using: &rng).prefix(Int.random(in: 0...3, using: &rng))
            return .setDynamicTabs(section: section, tabs: ids.map { Customization.DynamicTab(id: $0, title: "T \($0)") })
        }
    }

    /// Codes checked on the whole result (they name the last operation, not the one that caused them).
    static let wholeResultCodes: Set<ViolationCode> = [.noVisibleTab, .tooManyEntries]

    @Test("thousands of random lists: accepted results are valid and replay, refused ones name their operation", arguments: cases)
    func randomLists(_ setup: Case) throws {
        let index = try Seeds.index(setup.schema)
        var rng = SeededGenerator(state: 20261129)
        var current = Customization.empty
        var accepted = 0
        var replays = 0
        var refused = 0
        var listsStored = 0
        var forEachDrawn = 0
        for _ in 0..<4_000 {
            let list = (0..<Int.random(in: 1...4, using: &rng)).map { _ in Self.randomOperation(&rng, setup) }
            let next: Customization
            do {
                next = try CustomizationEditor.apply(list, to: current, index: index)
            } catch {
                refused += 1
                // The refusal is the result: one violation naming an operation of this list; every operation
                // before it is accepted on its own (so nothing earlier was silently dropped), and the same
                // list is refused the same way again.
                #expect(error.violations.count == 1)
                let violation = try #require(error.violations.first)
                let position = violation.pointer.split(separator: "/").dropFirst().first.flatMap { Int($0) }
                #expect(violation.pointer.hasPrefix("/operations/"))
                #expect(position.map { list.indices.contains($0) } == true)
                if let position, !Self.wholeResultCodes.contains(violation.code) {
                    // The prefix alone may still fail a whole-result check (its last operation hides the last tab).
                    do { _ = try CustomizationEditor.apply(Array(list[..<position]), to: current, index: index) } catch {
                        #expect(error.violations.allSatisfy { Self.wholeResultCodes.contains($0.code) }, "\(error.violations)")
                    }
                }
                let again = Result { () throws(RuleRefusal) in try CustomizationEditor.apply(list, to: current, index: index) }
                if case .failure(let refusal) = again {
                    #expect(refusal.violations == error.violations)
                } else {
                    Issue.record("refused once, accepted again")
                }
                continue
            }
            accepted += 1
            listsStored += list.filter { if case .setDynamicTabs = $0 { true } else { false } }.count
            // Valid: the whole document replays through the PUT rules to the same value,
            // and reconciling with the same schema changes nothing.
            do {
                let replayed = try CustomizationEditor.replace(with: next, index: index)
                replays += 1
                #expect(replayed == next)
            } catch {
                Issue.record("an accepted result is refused on replay: \(error.violations)")
            }
            #expect(Reconciler.reconcile(next, with: index).sameChoices(as: next))
            // Something stays visible in each placement, counted on the result; the layouts agree.
            for placement in Placement.allCases {
                let visible = index.allTabs.filter { CustomizationRules(index).isVisible($0, in: placement, customization: next) }
                #expect(!visible.isEmpty, "nothing visible in the \(placement.rawValue)")
            }
            let layout = Layout(customization: next, index: index, sizeClass: .regular)
            let sidebarTabs = layout.sidebar.flatMap { item -> [SchemaTab] in
                switch item {
                case .tab(let tab): [tab]
                case .section(let section): section.tabs
                }
            }
            #expect(!sidebarTabs.isEmpty)
            #expect(!(layout.tabBar + layout.pinned).isEmpty)
            let compact = Layout(customization: next, index: index, sizeClass: .compact)
            #expect(!(compact.tabBar + compact.more + compact.pinned).isEmpty)
            // The layout never shows a hidden tab.
            #expect(Set(layout.tabBar.map(\.id)).isDisjoint(with: layout.hidden))
            #expect(Set((compact.tabBar + compact.more).map(\.id)).isDisjoint(with: compact.hidden))
            #expect(compact.tabBar.count + (compact.more.isEmpty ? 0 : 1) <= Layout.compactBarItems || compact.more.isEmpty)
            if Self.expectTopLevelForEach(next, index: index, regular: layout, compact: compact) { forEachDrawn += 1 }
            // Where a list is stored, the choices and the layouts name only its data-driven tabs, and a section's order
            // lists exactly the tabs an order may list.
            Self.expectDataTabsListed(next, index: index, layouts: [layout, compact])
            current = next
        }
        if !setup.dataIds.isEmpty {
            #expect(listsStored > 100, "accepted lists of data-driven tabs")
            #expect(forEachDrawn > 100, "compact layouts drawing a top-level ForEach's tabs")
        }
        // A good share is accepted, every accepted result replays, and the rules do refuse.
        #expect(accepted > 200)
        #expect(replays == accepted)
        #expect(refused > 200)
    }

    /// A top-level ForEach's tabs are top-level tabs: never under a header in the sidebar, and in compact in the bar or,
    /// when the bar overflows, in More before every section's tab (the bar's overflow comes first).
    /// Returns whether the compact layout draws a ForEach's tab at all.
    @discardableResult
    static func expectTopLevelForEach(_ customization: Customization, index: SchemaIndex, regular: Layout, compact: Layout) -> Bool {
        let isTopLevel = { (id: Identifier) in
            guard let info = index.tab(id) else { return false }
            return info.sectionId.flatMap(index.section).map(\.isForEach) ?? true
        }
        for item in regular.sidebar {
            guard case .section(let section) = item else { continue }
            let drawnAsSection = section.section.isForEach
            #expect(!drawnAsSection, "ForEach \(section.section.id) drawn as a section")
            #expect(section.tabs.allSatisfy { !isTopLevel($0.id) }, "a top-level tab under \(section.section.id)")
        }
        #expect(compact.tabBar.allSatisfy { isTopLevel($0.id) })
        let firstSectionTab = compact.more.firstIndex { !isTopLevel($0.id) } ?? compact.more.count
        #expect(compact.more[firstSectionTab...].allSatisfy { !isTopLevel($0.id) }, "\(compact.more.map(\.id))")
        if firstSectionTab > 0 { #expect(compact.tabBar.count == Layout.compactBarSlots) }
        return (compact.tabBar + compact.more).contains { index.dynamicSection(of: $0.id)?.isForEach == true }
    }

    static func expectDataTabsListed(_ customization: Customization, index: SchemaIndex, layouts: [Layout]) {
        let rules = CustomizationRules(index)
        var named = Set(customization.tabs.keys).union(customization.tabBarOrder ?? [])
        for entry in customization.sections.values { named.formUnion(entry.tabOrder ?? []) }
        for id in named {
            #expect(rules.tab(id, in: customization) != nil, "\(id) is named but is no tab")
        }
        for layout in layouts {
            for tab in layout.shownTabs where rules.index.tab(tab.id)?.isDynamic == true {
                guard let section = rules.index.dynamicSection(of: tab.id), let list = customization.dynamicTabs[section.id] else { continue }
                #expect(list.tab(tab.id) != nil, "\(tab.id) is shown but not listed")
            }
        }
        for (id, entry) in customization.sections {
            guard let order = entry.tabOrder, let section = index.section(id) else { continue }
            let orderable = rules.orderableTabs(of: section, in: customization).map(\.tab.id)
            #expect(Set(order).isSuperset(of: orderable) && Set(order).count == order.count, "\(id): \(order)")
            if customization.dynamicTabs[id] != nil { #expect(Set(order) == Set(orderable), "\(id): \(order)") }
        }
    }
}
