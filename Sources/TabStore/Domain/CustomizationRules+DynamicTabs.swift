import TabStoreSupport
/// A user's data-driven tabs (docs/domain.md "A person's data-driven tabs"): the app's own data (a person's playlists, collections)
/// decides which tabs a dynamic section holds; a client stores the current list in the customization.
extension CustomizationRules {
    /// A tab a change or a stored choice names, for this customization: a static tab; a tab of the user's stored
    /// list of its dynamic section (with the title and image stored for it); or, while no list is stored for that
    /// section, any id extending its prefix, as in the first version. Nil for anything else, so an id outside a
    /// stored list is an `unknown-tab`.
    package func tab(_ id: Identifier, in customization: Customization) -> SchemaIndex.TabInfo? {
        guard let info = index.tab(id) else { return nil }
        guard info.isDynamic, let sectionId = info.sectionId, let list = customization.dynamicTabs[sectionId] else { return info }
        guard let entry = list.tab(id) else { return nil }
        return Self.info(entry, from: info.tab, in: sectionId)
    }

    /// The user's stored data-driven tabs of a section, in the app's order (none before a list is stored).
    package func storedDynamicTabs(of section: SchemaSection, in customization: Customization) -> [SchemaIndex.TabInfo] {
        guard let dynamic = section.dynamicTabs, let list = customization.dynamicTabs[section.id] else { return [] }
        let declared = SchemaTab(id: dynamic.idPrefix, title: "", customizationBehavior: dynamic.customizationBehavior)
        return list.tabs.map { Self.info($0, from: declared, in: section.id) }
    }

    private static func info(_ entry: Customization.DynamicTab, from declared: SchemaTab, in section: Identifier) -> SchemaIndex.TabInfo {
        var tab = declared
        tab.id = entry.id
        tab.title = entry.title
        tab.systemImage = entry.systemImage
        tab.image = entry.image
        return SchemaIndex.TabInfo(tab: tab, sectionId: section, isDynamic: true)
    }

    /// A refusal of a list of data-driven tabs, naming the tab (by index) and its member when one is at fault.
    package struct ListRefusal: Sendable, Equatable {
        package let item: Int?
        package let member: DynamicTabMember?
        package let refusal: Refusal
    }

    /// Whether a user's list may be stored for a section: the section declares `dynamicTabs`; at most
    /// `DynamicTabs.maxTabs` tabs; each id a valid id that extends the section's `idPrefix` and appears once;
    /// each title non-blank and at most `TabSchema.maxTitleBytes` UTF-8 bytes; at most one image, its name at most
    /// as long. The same limits as a schema's own tabs, so everything stored can be served and counted.
    package func dynamicTabsRefusal(_ tabs: [Customization.DynamicTab], for section: SchemaSection) -> ListRefusal? {
        func refuse(_ item: Int?, _ member: DynamicTabMember?, _ code: ViolationCode, _ detail: String) -> ListRefusal {
            ListRefusal(item: item, member: member, refusal: Refusal(code: code, detail: detail))
        }
        guard let prefix = section.dynamicIdPrefix else {
            return refuse(nil, nil, .notDynamicSection, "section \"\(section.id)\" declares no dynamicTabs; its tabs come from the schema")
        }
        guard tabs.count <= DynamicTabs.maxTabs else {
            return refuse(nil, nil, .tooManyEntries, "a section holds at most \(DynamicTabs.maxTabs) data-driven tabs")
        }
        var seen = Set<Identifier>()
        for (position, tab) in tabs.enumerated() {
            if !tab.id.isValidId {
                return refuse(position, .id, .invalidId, "an id is 1-\(Identifier.maxBytes) UTF-8 bytes without control characters")
            }
            if tab.id.byteCount <= prefix.byteCount || !tab.id.hasBytePrefix(prefix) {
                return refuse(position, .id, .prefixMismatch, "tab \"\(tab.id)\" does not extend \(section.named)'s idPrefix \"\(prefix)\"")
            }
            if !seen.insert(tab.id).inserted { return refuse(position, .id, .duplicateId, "tab \"\(tab.id)\" appears twice") }
            if tab.title.allSatisfy(\.isWhitespace) { return refuse(position, .title, .emptyTitle, "a title must not be empty") }
            if tab.title.utf8.count > TabSchema.maxTitleBytes {
                return refuse(position, .title, .titleTooLong, "a title has at most \(TabSchema.maxTitleBytes) UTF-8 bytes")
            }
            for (member, name) in [(DynamicTabMember.systemImage, tab.systemImage), (.image, tab.image)]
            where (name?.utf8.count ?? 0) > TabSchema.maxTitleBytes {
                return refuse(position, member, .imageTooLong, "an image name has at most \(TabSchema.maxTitleBytes) UTF-8 bytes")
            }
            if tab.systemImage != nil, tab.image != nil {
                return refuse(position, .image, .conflictingImage, "give either systemImage or image, not both")
            }
        }
        return nil
    }

    /// Drops lists the schema no longer has a place for (the section is gone or no longer dynamic), list entries
    /// whose id no longer extends the section's prefix (or repeats), and choices about tabs the customization can
    /// no longer name: an id dropped from the user's list is pruned from their choices (docs/domain.md "A person's data-driven tabs").
    /// Section orders and the tab bar order are repaired by `normalize`.
    package func pruneDynamicTabs(_ customization: inout Customization) {
        for (sectionId, list) in customization.dynamicTabs {
            guard index.section(sectionId)?.dynamicTabs != nil else {
                customization.dynamicTabs[sectionId] = nil
                continue
            }
            var seen = Set<Identifier>()
            let kept = list.tabs.filter { index.dynamicSection(of: $0.id)?.id == sectionId && seen.insert($0.id).inserted }
            // A list whose entries all belong to another prefix (another app version's, docs/domain.md "Several app versions at once") is not one
            // this version stored: it has none, as before a list is stored. An empty list stored as such stays.
            if kept.isEmpty, !list.tabs.isEmpty {
                customization.dynamicTabs[sectionId] = nil
            } else if kept.count != list.count {
                customization.dynamicTabs[sectionId] = Customization.DynamicTabList(kept)
            }
        }
        for id in customization.tabs.keys where tab(id, in: customization) == nil {
            customization.tabs[id] = nil
        }
    }
}
