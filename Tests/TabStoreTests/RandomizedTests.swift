import Testing
@testable import TabStore

/// A small seeded generator (SplitMix64), so a failure replays exactly.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Randomized operation lists")
struct RandomizedTests {
    static func randomOperation(_ rng: inout SeededGenerator) -> Operation {
        let tabs: [Identifier] = ["home", "feed", "inbox", "extra", "settings", "search", "places.a", "places.b", "places.c",
                    "locked.a", "locked.b", "list.x", "list.y", "nope"]
        let sections: [Identifier] = ["places", "locked", "lists", "nope"]
        let visibility = Visibility.allCases.randomElement(using: &rng)!
        switch Int.random(in: 0..<9, using: &rng) {
        case 0: return .setVisibility(.sidebar, tab: tabs.randomElement(using: &rng)!, visibility)
        case 1: return .setVisibility(.tabBar, tab: tabs.randomElement(using: &rng)!, visibility)
        case 2: return .setTabOrder(section: sections.randomElement(using: &rng)!, tabOrder: Array(tabs.shuffled(using: &rng).prefix(Int.random(in: 0...4, using: &rng))))
        case 3: return .moveTab(section: sections.randomElement(using: &rng)!, tab: tabs.randomElement(using: &rng)!, toIndex: Int.random(in: -1...4, using: &rng))
        case 4: return .setTabBarOrder(Array(tabs.shuffled(using: &rng).prefix(Int.random(in: 0...5, using: &rng))))
        case 5: return .setSectionExpanded(section: sections.randomElement(using: &rng)!, expanded: Bool.random(using: &rng))
        case 6: return .resetVisibility(Operation.ResetScope.allCases.randomElement(using: &rng)!)
        case 7: return .resetSectionOrder(section: Bool.random(using: &rng) ? nil : sections.randomElement(using: &rng)!)
        default: return .resetTabBarOrder
        }
    }

    @Test("thousands of random lists: accepted results are valid, refused ones change nothing")
    func randomLists() throws {
        let index = try Seeds.index(ruleSchema)
        var rng = SeededGenerator(state: 20261129)
        var current = Customization.empty
        var accepted = 0
        var refused = 0
        for _ in 0..<4_000 {
            let list = (0..<Int.random(in: 1...4, using: &rng)).map { _ in Self.randomOperation(&rng) }
            let before = current
            do {
                let next = try CustomizationEditor.apply(list, to: current, index: index)
                accepted += 1
                // Valid: the whole document replays through the PUT rules to the same value,
                // and reconciling with the same schema changes nothing.
                let replayed = try CustomizationEditor.replace(with: next, index: index)
                #expect(replayed.sameChoices(as: next))
                #expect(Reconciler.reconcile(next, with: index).sameChoices(as: next))
                // Something stays visible in each placement; the layout never shows a hidden tab.
                let layout = Layout(customization: next, index: index, sizeClass: .regular)
                #expect(!layout.sidebar.isEmpty)
                #expect(Set(layout.tabBar.map(\.id)).isDisjoint(with: layout.hidden))
                current = next
            } catch {
                refused += 1
                #expect(error.violations.count == 1)
                #expect(current == before)
            }
        }
        #expect(accepted > 200)
        #expect(refused > 200)
    }
}
