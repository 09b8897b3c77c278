import TabStoreSupport
/// Every customization rule of one schema version (docs/domain.md "Customization: what a person chose" and "Layout: what the TabView shows"), in one
/// place: what a tab shows
/// in each placement, which positions are fixed, which tabs a customization can name, and whether a choice may
/// stand. The editor asks before it accepts a change, the reconciler before it keeps a stored choice under a
/// new schema, and the layout when it resolves what a device shows, so no rule has a second copy that could drift.
///
/// A top-level `ForEach` (`SchemaSection.Kind.forEach`) is a group like a section to every rule here: its list, its
/// order and the choices about its tabs follow the same rules; only its expansion differs (`expansionRefusal`), and
/// where its tabs show is the layout's business.
///
/// Orders and positions are in `CustomizationRules+Orders.swift`, a user's data-driven tabs in
/// `CustomizationRules+DynamicTabs.swift`, where customization applies in `CustomizationRules+Platforms.swift`.
package struct CustomizationRules: Sendable {
    /// A rule that refuses a choice: its code and a sentence naming the tab or section. Where the choice
    /// was made (an operation, a document entry) is the caller's to add.
    package struct Refusal: Sendable, Equatable {
        package let code: ViolationCode
        package let detail: String
    }

    package let index: SchemaIndex

    package init(_ index: SchemaIndex) { self.index = index }

    // MARK: - Behaviors

    /// The behavior that governs a tab in a placement, given the section holding it (nil at the top level). A
    /// section's behavior governs its children (docs/domain.md "Choices TabStore made"): `disabled` on the section fixes them (no hiding, no
    /// moving); `reorderable` lets them move and leaves hiding to each tab's own behavior (docs/devices.md's
    /// Idempotency-Key example hides Climate, a tab of a reorderable section). A data-driven tab's own behavior is its section's
    /// `dynamicTabs.customizationBehavior`.
    package static func behavior(of tab: SchemaTab, in section: SchemaSection?, _ placement: Placement) -> CustomizationBehavior {
        if let section, section.customizationBehavior[placement] == .disabled { return .disabled }
        return tab.customizationBehavior[placement]
    }

    /// Whether a person can change anything about a tab in some placement. A tab that is not needs no customization ID
    /// (docs/domain.md "Tabs without an id").
    package static func isCustomizable(_ tab: SchemaTab, in section: SchemaSection?) -> Bool {
        Placement.allCases.contains { behavior(of: tab, in: section, $0) != .disabled }
    }

    package func behavior(of info: SchemaIndex.TabInfo, in placement: Placement) -> CustomizationBehavior {
        Self.behavior(of: info.tab, in: info.sectionId.flatMap(index.section), placement)
    }

    /// Whether a tab may be hidden (or added) in a placement: its behavior there is `automatic`, for a
    /// data-driven tab too (hiding stays allowed for `ForEach` tabs).
    package func canHide(_ info: SchemaIndex.TabInfo, in placement: Placement) -> Bool { behavior(of: info, in: placement).canHide }

    /// Whether a tab may leave its default position in a placement: `automatic` or `reorderable`; a data-driven
    /// tab only when `reorderable` (in SwiftUI tabs built with ForEach cannot be dragged by default;
    /// the .reorderable modifier turns dragging on).
    package func canMove(_ info: SchemaIndex.TabInfo, in placement: Placement) -> Bool {
        let behavior = behavior(of: info, in: placement)
        return info.isDynamic ? behavior == .reorderable : behavior.canMove
    }

    /// Whether a section's tabs may be reordered in the sidebar: its sidebar behavior is not `disabled`.
    package func canReorder(_ section: SchemaSection) -> Bool { section.customizationBehavior.sidebar.canMove }

    /// Why a tab keeps its position in a placement, for refusals.
    func immovable(_ info: SchemaIndex.TabInfo, in placement: Placement) -> String {
        let behavior = behavior(of: info, in: placement)
        let place = placement == .sidebar ? "sidebar" : "tab bar"
        if info.isDynamic, behavior != .disabled {
            return "tab \"\(info.tab.id)\" comes from data with customization behavior \"\(behavior.rawValue)\" in the \(place), "
                + "which does not let it move (its section's dynamicTabs must be \"reorderable\" for that),"
        }
        return "tab \"\(info.tab.id)\" has customization behavior \"disabled\" in the \(place)"
    }

    // MARK: - Visibility

    /// The schema's default visibility of a tab in a placement, before any customization: the tab's own
    /// default, else its section's; a `sidebarOnly` tab is never in the tab bar.
    package func isVisibleByDefault(_ info: SchemaIndex.TabInfo, in placement: Placement) -> Bool {
        if placement == .tabBar, info.tab.placement == .sidebarOnly { return false }
        var visibility = info.tab.defaultVisibility[placement]
        if visibility == .automatic, let sectionId = info.sectionId, let section = index.section(sectionId) {
            visibility = section.defaultVisibility[placement]
        }
        return visibility != .hidden
    }

    /// Whether a tab shows in a placement for this customization (before size-class rules).
    package func isVisible(_ info: SchemaIndex.TabInfo, in placement: Placement, customization: Customization) -> Bool {
        let entry = customization.tabs[info.tab.id] ?? Customization.TabEntry()
        if placement == .tabBar {
            if info.tab.placement == .sidebarOnly { return false }
            // Apple's coupling: hiding a tab in the sidebar hides it in the tab bar too.
            if entry.sidebarVisibility == .hidden { return false }
        }
        switch entry[placement] {
        case .visible: return true
        case .hidden: return false
        case .automatic: return isVisibleByDefault(info, in: placement)
        }
    }

    /// How many of the schema's static tabs show in each placement. A user's data-driven tabs do not count:
    /// their list changes with the app's data, and storing it must never be refused for leaving no tab.
    package func visibleCounts(_ customization: Customization) -> PerPlacement<Int> {
        var counts = PerPlacement(sidebar: 0, tabBar: 0)
        for info in index.allTabs {
            for placement in Placement.allCases where isVisible(info, in: placement, customization: customization) {
                counts[placement] += 1
            }
        }
        return counts
    }

    // MARK: - May a choice stand

    /// Whether a change may name a tab at all: a tab registered without a customization ID (its id derived,
    /// docs/domain.md "Tabs without an id") may not, as SwiftUI cannot customize it.
    package func namingRefusal(of info: SchemaIndex.TabInfo) -> Refusal? {
        info.tab.hasDerivedId
            ? Refusal(
                code: .customizationDisabled, detail: "tab \"\(info.tab.id)\" has no customization ID (its id is derived) and cannot be customized")
            : nil
    }

    /// Whether a tab may have this visibility in a placement. `automatic` always stands; hiding needs
    /// behavior `automatic`; showing a tab the schema hides by default needs it too; a `sidebarOnly` tab
    /// is never shown in the tab bar.
    package func refusal(of visibility: Visibility, for info: SchemaIndex.TabInfo, in placement: Placement) -> Refusal? {
        let id = info.tab.id
        let behavior = behavior(of: info, in: placement)
        if placement == .tabBar, visibility == .visible, info.tab.placement == .sidebarOnly {
            return Refusal(code: .sidebarOnly, detail: "tab \"\(id)\" is sidebarOnly and can never be shown in the tab bar")
        }
        if visibility == .hidden, !canHide(info, in: placement) {
            return Refusal(
                code: .notHideable,
                detail: "tab \"\(id)\" has customization behavior \"\(behavior.rawValue)\" in the \(placement.rawValue) and cannot be hidden")
        }
        if visibility == .visible, !canHide(info, in: placement), !isVisibleByDefault(info, in: placement) {
            return Refusal(
                code: .customizationDisabled,
                detail: "tab \"\(id)\" has customization behavior \"\(behavior.rawValue)\" in the \(placement.rawValue) and cannot be added")
        }
        return nil
    }

    /// Whether a section may have a `tabOrder` of the user's.
    package func reorderRefusal(of section: SchemaSection) -> Refusal? {
        canReorder(section) ? nil
            : Refusal(
                code: .customizationDisabled,
                detail: "section \"\(section.id)\" has customization behavior \"disabled\" in the sidebar and cannot be reordered")
    }

    /// Whether a section may have an expansion of the user's: a top-level ForEach has no header to open or close.
    package func expansionRefusal(of section: SchemaSection) -> Refusal? {
        section.isForEach
            ? Refusal(
                code: .customizationDisabled,
                detail: "\(section.named) has no header (its tabs are top-level tabs) and cannot be expanded or collapsed")
            : nil
    }

    /// Whether a tab may take part in a section's order: in the sidebar tabs reorder only within their section (a
    /// top-level ForEach's tabs only among themselves).
    package func membershipRefusal(of info: SchemaIndex.TabInfo, in section: SchemaSection) -> Refusal? {
        info.sectionId == section.id ? nil
            : Refusal(
                code: .crossSectionMove,
                detail: "tab \"\(info.tab.id)\" is not in \(section.named); in the sidebar tabs reorder only within their section")
    }

    /// Whether a tab of a section may be moved in the sidebar.
    package func moveRefusal(of info: SchemaIndex.TabInfo) -> Refusal? {
        canMove(info, in: .sidebar) ? nil : Refusal(code: .notMovable, detail: immovable(info, in: .sidebar) + " and cannot be moved")
    }

    /// Whether a tab may be listed in a `tabBarOrder`: pinned tabs are never reordered, `sidebarOnly` tabs
    /// are never in the bar, and a tab that cannot move in the tab bar keeps its default position.
    package func tabBarOrderRefusal(of info: SchemaIndex.TabInfo) -> Refusal? {
        let id = info.tab.id
        if info.tab.isPinned { return Refusal(code: .pinnedTab, detail: "tab \"\(id)\" is pinned and is never reordered") }
        if info.tab.placement == .sidebarOnly {
            return Refusal(code: .sidebarOnly, detail: "tab \"\(id)\" is sidebarOnly and is never in the tab bar")
        }
        if !canMove(info, in: .tabBar) {
            return Refusal(code: .notMovable, detail: immovable(info, in: .tabBar) + " and keeps its default position")
        }
        return nil
    }

    /// Whether a change from `before` to `after` may stand: it may not leave a placement that showed a tab
    /// with none (docs/domain.md "Customization: what a person chose": no change may leave the person without any visible tab).
    package func noVisibleTabRefusal(from before: Customization, to after: Customization) -> Refusal? {
        let was = visibleCounts(before)
        let now = visibleCounts(after)
        for placement in Placement.allCases where now[placement] == 0 && was[placement] > 0 {
            return Refusal(code: .noVisibleTab, detail: "the change would leave no visible tab in the \(placement.rawValue)")
        }
        return nil
    }
}
