import TabStoreSupport
extension TabSchema {
    /// Every rule of docs/domain.md "Tab schema: what the app declares", all problems at once, each with a pointer and a stable code.
    package func validate() -> [Violation] {
        var problems: [Violation] = []
        var seen: [Identifier: String] = [:]  // id -> pointer of its first use
        var searchTabs: [String] = []
        var itemCount = 0
        var prefixes: [(prefix: Identifier, pointer: String)] = []

        func checkId(_ id: Identifier, at pointer: String, isSection: Bool = false) {
            let idPointer = pointer + "/id"
            if id.text.isEmpty {
                problems.append(Violation(pointer: idPointer, code: .emptyId, detail: "an id must not be empty"))
                return
            }
            if id.byteCount > Identifier.maxBytes {
                problems.append(Violation(pointer: idPointer, code: .idTooLong, detail: "an id has at most \(Identifier.maxBytes) UTF-8 bytes"))
            }
            if !Identifier.isPrintable(id.text) {
                problems.append(Violation(pointer: idPointer, code: .invalidId, detail: "an id must not contain control characters"))
            }
            if isSection, DerivedId.isReserved(id) {
                problems.append(
                    Violation(
                        pointer: idPointer, code: .invalidId, detail: "ids starting with \"\(DerivedId.prefix)\" are reserved for derived tab ids"))
            }
            if let first = seen[id] {
                problems.append(
                    Violation(pointer: idPointer, code: .duplicateId, detail: "id \(ClientText.quoted(id.text)) is already used at \(first)"))
            } else {
                seen[id] = pointer
            }
        }

        func checkTitle(_ title: String, at pointer: String) {
            if title.allSatisfy(\.isWhitespace) {
                problems.append(Violation(pointer: pointer + "/title", code: .emptyTitle, detail: "a title must not be empty"))
            } else if title.utf8.count > Self.maxTitleBytes {
                problems.append(
                    Violation(pointer: pointer + "/title", code: .titleTooLong, detail: "a title has at most \(Self.maxTitleBytes) UTF-8 bytes"))
            }
        }

        func checkTab(_ tab: SchemaTab, in section: SchemaSection?, at pointer: String, inheritedTabBar: Visibility) {
            itemCount += 1
            if tab.hasDerivedId, CustomizationRules.isCustomizable(tab, in: section) {
                problems.append(Violation(
                    pointer: pointer + "/id", code: .emptyId,
                    detail: "a tab customizable in the sidebar or the tab bar needs an id; only a tab disabled in both may omit it"))
            }
            checkId(tab.id, at: pointer)
            checkTitle(tab.title, at: pointer)
            for (field, name) in [("systemImage", tab.systemImage), ("image", tab.image)] where (name?.utf8.count ?? 0) > Self.maxTitleBytes {
                problems.append(
                    Violation(
                        pointer: pointer + "/" + field, code: .imageTooLong, detail: "an image name has at most \(Self.maxTitleBytes) UTF-8 bytes"))
            }
            if tab.systemImage != nil, tab.image != nil {
                problems.append(Violation(pointer: pointer + "/image", code: .conflictingImage, detail: "give either systemImage or image, not both"))
            }
            if tab.role == .search {
                searchTabs.append(pointer)
                if tab.placement != .pinned {
                    problems.append(Violation(pointer: pointer + "/placement", code: .searchNotPinned, detail: "a search tab is always pinned"))
                }
            }
            let tabBarDefault = tab.defaultVisibility.tabBar == .automatic ? inheritedTabBar : tab.defaultVisibility.tabBar
            if tab.placement == .sidebarOnly, tabBarDefault == .visible {
                problems.append(Violation(
                    pointer: pointer + "/defaultVisibility/tabBar", code: .sidebarOnlyInTabBar,
                    detail: "a sidebarOnly tab cannot be visible in the tab bar by default"))
            }
        }

        for (index, item) in items.enumerated() {
            let pointer = JSONPointer.append("/items", index)
            switch item {
            case .tab(let tab):
                checkTab(tab, in: nil, at: pointer, inheritedTabBar: .automatic)
            case .section(let section):
                itemCount += 1
                checkId(section.id, at: pointer, isSection: true)
                // A top-level ForEach has no title: it draws no header.
                if !section.isForEach { checkTitle(section.title, at: pointer) }
                for (tabIndex, tab) in section.tabs.enumerated() {
                    checkTab(tab, in: section, at: pointer + "/tabs/\(tabIndex)", inheritedTabBar: section.defaultVisibility.tabBar)
                    if tab.role == .search {
                        problems.append(
                            Violation(
                                pointer: pointer + "/tabs/\(tabIndex)/role", code: .searchInSection, detail: "the search tab is a top-level tab"))
                    }
                }
                if let prefix = section.dynamicIdPrefix {
                    if !prefix.isValidId {
                        problems.append(
                            Violation(
                                pointer: pointer + "/dynamicTabs/idPrefix", code: .invalidId,
                                detail: "idPrefix must be 1-\(Identifier.maxBytes) UTF-8 bytes without control characters"))
                    } else if DerivedId.isReserved(prefix) {
                        problems.append(
                            Violation(
                                pointer: pointer + "/dynamicTabs/idPrefix", code: .invalidId,
                                detail: "ids starting with \"\(DerivedId.prefix)\" are reserved for derived tab ids"))
                    } else {
                        prefixes.append((prefix, pointer + "/dynamicTabs/idPrefix"))
                    }
                }
            }
        }
        if searchTabs.count > 1 {
            for pointer in searchTabs.dropFirst() {
                problems.append(Violation(pointer: pointer + "/role", code: .multipleSearchTabs, detail: "a schema has at most one search tab"))
            }
        }
        // An empty tab view: every user would be served no tab at all (docs/domain.md: no change may leave a user
        // without a visible tab).
        if items.isEmpty {
            problems.append(Violation(pointer: "/items", code: .noVisibleTab, detail: "a schema has at least one tab, section or forEach item"))
        }
        if itemCount > Self.maxItems {
            problems.append(
                Violation(pointer: "/items", code: .tooManyItems, detail: "a schema has at most \(Self.maxItems) tabs, sections and forEach items"))
        }
        // A dynamic prefix must not claim another item's id, and prefixes must not overlap,
        // or one id would belong to two places.
        for (offset, entry) in prefixes.enumerated() {
            for (id, pointer) in seen where id.hasBytePrefix(entry.prefix) {
                problems.append(
                    Violation(
                        pointer: entry.pointer, code: .dynamicPrefixConflict, detail: "idPrefix \"\(entry.prefix)\" also matches the id at \(pointer)"
                    ))
            }
            for other in prefixes[(offset + 1)...] where other.prefix.hasBytePrefix(entry.prefix) || entry.prefix.hasBytePrefix(other.prefix) {
                problems.append(
                    Violation(
                        pointer: other.pointer, code: .dynamicPrefixConflict, detail: "idPrefix \"\(other.prefix)\" overlaps \"\(entry.prefix)\""))
            }
        }
        problems += standInProblems()
        return problems
    }

    /// `standIn` (a Browse tab standing in for the Library and Playlists sections in compact): only on an item
    /// with `hiddenIn`, naming another tab of the schema that is there in every size class the item is not.
    private func standInProblems() -> [Violation] {
        var tabs: [Identifier: (tab: SchemaTab, section: SchemaSection?)] = [:]
        for item in items {
            switch item {
            case .tab(let tab): tabs[tab.id] = (tab, nil)
            case .section(let section): for tab in section.tabs { tabs[tab.id] = (tab, section) }
            }
        }
        var problems: [Violation] = []
        func check(_ standIn: Identifier?, of id: Identifier, hiddenIn: [SizeClass], section: Identifier?, at pointer: String) {
            guard let standIn else { return }
            let here = pointer + "/standIn"
            guard !hiddenIn.isEmpty else {
                problems.append(
                    Violation(
                        pointer: here, code: .invalidStandIn, detail: "standIn needs hiddenIn: it names the tab to select where this item is hidden"))
                return
            }
            guard let target = tabs[standIn] else {
                problems.append(
                    Violation(pointer: here, code: .invalidStandIn, detail: "standIn \(ClientText.quoted(standIn.text)) is not a tab of this schema"))
                return
            }
            if standIn == id || (section != nil && target.section?.id == section) {
                problems.append(Violation(pointer: here, code: .invalidStandIn, detail: "an item cannot stand in for itself"))
                return
            }
            let targetHidden = Set(target.tab.hiddenIn + (target.section?.hiddenIn ?? []))
            if let sizeClass = hiddenIn.first(where: targetHidden.contains) {
                problems.append(Violation(pointer: here, code: .invalidStandIn,
                                          detail: "standIn \(ClientText.quoted(standIn.text)) is hidden in \(sizeClass.rawValue) too"))
            }
        }
        for (index, item) in items.enumerated() {
            let pointer = JSONPointer.append("/items", index)
            switch item {
            case .tab(let tab):
                check(tab.standIn, of: tab.id, hiddenIn: tab.hiddenIn, section: nil, at: pointer)
            case .section(let section):
                check(section.standIn, of: section.id, hiddenIn: section.hiddenIn, section: section.id, at: pointer)
                for (tabIndex, tab) in section.tabs.enumerated() {
                    check(tab.standIn, of: tab.id, hiddenIn: tab.hiddenIn, section: nil, at: pointer + "/tabs/\(tabIndex)")
                }
            }
        }
        return problems
    }
}
