import TabStoreSupport
extension TabSchema {
    /// Every rule of DOMAIN.md section 1, all problems at once, each with a pointer and a stable code.
    package func validate() -> [Violation] {
        var problems: [Violation] = []
        var seen: [Identifier: String] = [:]  // id -> pointer of its first use
        var searchTabs: [String] = []
        var itemCount = 0
        var prefixes: [(prefix: Identifier, pointer: String)] = []

        func checkId(_ id: Identifier, at pointer: String) {
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
            if let first = seen[id] {
                problems.append(Violation(pointer: idPointer, code: .duplicateId, detail: "id \(ClientText.quoted(id.text)) is already used at \(first)"))
            } else {
                seen[id] = pointer
            }
        }

        func checkTitle(_ title: String, at pointer: String) {
            if title.allSatisfy(\.isWhitespace) {
                problems.append(Violation(pointer: pointer + "/title", code: .emptyTitle, detail: "a title must not be empty"))
            } else if title.utf8.count > Self.maxTitleBytes {
                problems.append(Violation(pointer: pointer + "/title", code: .titleTooLong, detail: "a title has at most \(Self.maxTitleBytes) UTF-8 bytes"))
            }
        }

        func checkTab(_ tab: SchemaTab, at pointer: String, inheritedTabBar: Visibility) {
            itemCount += 1
            checkId(tab.id, at: pointer)
            checkTitle(tab.title, at: pointer)
            for (field, name) in [("systemImage", tab.systemImage), ("image", tab.image)] where (name?.utf8.count ?? 0) > Self.maxTitleBytes {
                problems.append(Violation(pointer: pointer + "/" + field, code: .imageTooLong, detail: "an image name has at most \(Self.maxTitleBytes) UTF-8 bytes"))
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
                checkTab(tab, at: pointer, inheritedTabBar: .automatic)
            case .section(let section):
                itemCount += 1
                checkId(section.id, at: pointer)
                checkTitle(section.title, at: pointer)
                for (tabIndex, tab) in section.tabs.enumerated() {
                    checkTab(tab, at: pointer + "/tabs/\(tabIndex)", inheritedTabBar: section.defaultVisibility.tabBar)
                    if tab.role == .search {
                        problems.append(Violation(pointer: pointer + "/tabs/\(tabIndex)/role", code: .searchInSection, detail: "the search tab is a top-level tab"))
                    }
                }
                if let prefix = section.dynamicIdPrefix {
                    if !prefix.isValidId {
                        problems.append(Violation(pointer: pointer + "/dynamicTabs/idPrefix", code: .invalidId, detail: "idPrefix must be 1-\(Identifier.maxBytes) UTF-8 bytes without control characters"))
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
        if itemCount > Self.maxItems {
            problems.append(Violation(pointer: "/items", code: .tooManyItems, detail: "a schema has at most \(Self.maxItems) tabs and sections"))
        }
        // A dynamic prefix must not claim another item's id, and prefixes must not overlap,
        // or one id would belong to two places.
        for (offset, entry) in prefixes.enumerated() {
            for (id, pointer) in seen where id.hasBytePrefix(entry.prefix) {
                problems.append(Violation(pointer: entry.pointer, code: .dynamicPrefixConflict, detail: "idPrefix \"\(entry.prefix)\" also matches the id at \(pointer)"))
            }
            for other in prefixes[(offset + 1)...] where other.prefix.hasBytePrefix(entry.prefix) || entry.prefix.hasBytePrefix(other.prefix) {
                problems.append(Violation(pointer: other.pointer, code: .dynamicPrefixConflict, detail: "idPrefix \"\(other.prefix)\" overlaps \"\(entry.prefix)\""))
            }
        }
        return problems
    }
}
