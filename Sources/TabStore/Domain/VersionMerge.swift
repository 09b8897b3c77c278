import TabStoreSupport
/// Several app versions at once (docs/domain.md "Several app versions at once"): one stored document keeps every supported version's
/// choices; each client reads it reconciled under its own version (`Reconciler.reconcile`) and writes through
/// that view. A write changes only what the writer's version can see: `merge` folds the writer's edited view
/// back into the stored document, `prune` drops the choices no supported version can name.
package enum VersionMerge {
    /// The stored document after a write made under one version.
    ///
    /// - Parameters:
    ///   - stored: the document as stored (every supported version's choices).
    ///   - view: `stored` reconciled under the writer's version, as the writer's change started from it.
    ///   - edited: `view` after the writer's change (validated under the writer's version).
    /// - Returns: `stored` with exactly what the writer changed (each visibility, order, expansion and list it
    ///   changed from `view`) taken from `edited`; everything else as stored, including choices the writer's
    ///   rules reset in its view only (a tab it cannot hide that another version lets the person hide).
    ///   Orders merge: the writer's order decides the relative order of the ids in it; every other stored id
    ///   keeps its place after the id that preceded it in the stored order.
    package static func merge(stored: Customization, view: Customization, edited: Customization) -> Customization {
        var result = stored
        result.revision = edited.revision
        result.schemaVersion = edited.schemaVersion
        result.updatedAt = edited.updatedAt

        var tabIds = Set(view.tabs.keys)
        tabIds.formUnion(edited.tabs.keys)
        for id in tabIds {
            let before = view.tabs[id] ?? .init()
            let after = edited.tabs[id] ?? .init()
            guard before != after else { continue }
            var entry = stored.tabs[id] ?? .init()
            for placement in Placement.allCases where before[placement] != after[placement] { entry[placement] = after[placement] }
            result.tabs[id] = entry
        }

        var sectionIds = Set(view.sections.keys)
        sectionIds.formUnion(edited.sections.keys)
        for id in sectionIds {
            let before = view.sections[id] ?? .init()
            let after = edited.sections[id] ?? .init()
            guard before != after else { continue }
            var entry = stored.sections[id] ?? .init()
            if before.tabOrder != after.tabOrder {
                entry.tabOrder = mergedOrder(stored: entry.tabOrder, view: before.tabOrder, edited: after.tabOrder)
            }
            if before.expanded != after.expanded { entry.expanded = after.expanded }
            result.sections[id] = entry
        }

        if view.tabBarOrder != edited.tabBarOrder {
            result.tabBarOrder = mergedOrder(stored: stored.tabBarOrder, view: view.tabBarOrder, edited: edited.tabBarOrder)
        }

        var listIds = Set(view.dynamicTabs.keys)
        listIds.formUnion(edited.dynamicTabs.keys)
        for id in listIds where view.dynamicTabs[id] != edited.dynamicTabs[id] {
            result.dynamicTabs[id] = mergedList(stored: stored.dynamicTabs[id], view: view.dynamicTabs[id], edited: edited.dynamicTabs[id])
        }
        result.compact()
        return result
    }

    /// An order the writer changed: nil when it reset it (a reset forgets the whole order, as Apple's does), the
    /// writer's order when nothing was stored, else the writer's order with the stored ids its view did not hold
    /// (ids of other versions) put back after the id that preceded them in the stored order (first when none did).
    static func mergedOrder(stored: [Identifier]?, view: [Identifier]?, edited: [Identifier]?) -> [Identifier]? {
        guard let edited else { return nil }
        guard let stored else { return edited }
        let seen = Set(view ?? []).union(edited)
        let placed = Set(edited)
        var leading: [Identifier] = []
        var following: [Identifier: [Identifier]] = [:]
        var anchor: Identifier?
        var kept = Set<Identifier>()
        for id in stored {
            if placed.contains(id) {
                anchor = id
            } else if !seen.contains(id), kept.insert(id).inserted {
                if let anchor { following[anchor, default: []].append(id) } else { leading.append(id) }
            }
        }
        guard !kept.isEmpty else { return edited }
        var merged = leading
        merged.reserveCapacity(edited.count + kept.count)
        for id in edited {
            merged.append(id)
            merged.append(contentsOf: following[id] ?? [])
        }
        return merged
    }

    /// A user's list of data-driven tabs the writer changed: the writer's list, with the stored entries its view did
    /// not hold (entries another version's prefix of the section covers) kept in place as orders are
    /// (`mergedOrder`). A list the writer removed (a PUT without it, a DELETE) leaves the entries it could not see.
    static func mergedList(stored: Customization.DynamicTabList?, view: Customization.DynamicTabList?,
                           edited: Customization.DynamicTabList?) -> Customization.DynamicTabList? {
        guard let stored else { return edited }
        guard let edited else {
            let others = stored.tabs.filter { view?.tab($0.id) == nil }
            return others.isEmpty ? nil : Customization.DynamicTabList(others)
        }
        let ids = mergedOrder(stored: stored.tabs.map(\.id), view: view?.tabs.map(\.id) ?? [], edited: edited.tabs.map(\.id)) ?? []
        guard ids.count != edited.count else { return edited }
        return Customization.DynamicTabList(ids.compactMap { edited.tab($0) ?? stored.tab($0) })
    }

    /// The document with the choices dropped that no supported version can name: a tab entry for an id no supported
    /// version has as a tab, a section entry for an id none has as a section, an order entry for an id none has in
    /// that section (or in the tab bar: as a tab).
    /// Lists whose section no supported version has as a dynamic one go too, with entries no prefix of it covers.
    /// - Returns: the pruned document, and whether anything was dropped.
    package static func prune(_ customization: Customization, _ versions: SupportedVersions) -> (Customization, dropped: Bool) {
        var result = customization
        var dropped = false
        for (id, list) in customization.dynamicTabs {
            guard versions.supportsList(id) else {
                result.dynamicTabs[id] = nil
                dropped = true
                continue
            }
            let kept = list.tabs.filter { versions.listCovers(id, $0.id) }
            if kept.count != list.count {
                result.dynamicTabs[id] = Customization.DynamicTabList(kept)
                dropped = true
            }
        }
        for id in customization.tabs.keys where !versions.supportsTab(id, in: result) {
            result.tabs[id] = nil
            dropped = true
        }
        for (id, entry) in customization.sections {
            guard versions.supportsSection(id) else {
                result.sections[id] = nil
                dropped = true
                continue
            }
            if let order = entry.tabOrder {
                let kept = order.filter { versions.supportsTab($0, of: id, in: result) }
                if kept.count != order.count {
                    result.sections[id]?.tabOrder = kept.isEmpty ? nil : kept
                    dropped = true
                }
            }
        }
        if let order = customization.tabBarOrder {
            let kept = order.filter { versions.supportsTab($0, in: result) }
            if kept.count != order.count {
                result.tabBarOrder = kept
                dropped = true
            }
        }
        result.compact()
        return (result, dropped)
    }
}

/// The schema versions an app supports (docs/domain.md "Several app versions at once"): from its minimum to its current one. Answers
/// whether any of them can name an id, from the union of their ids, built once per app and kept read-only.
package struct SupportedVersions: Sendable {
    /// A tab of a section, in some supported version.
    private struct Member: Hashable {
        let section: Identifier
        let tab: Identifier
    }

    package private(set) var minimum = 0
    package private(set) var current = 0
    private var tabIds = Set<Identifier>()
    private var sectionIds = Set<Identifier>()
    private var members = Set<Member>()
    /// Every dynamic section of a supported version with the prefixes it had (a section may change its prefix).
    private var prefixes: [(prefix: Identifier, section: Identifier)] = []
    private var prefixKeys = Set<Member>()
    private var dynamicSections = Set<Identifier>()

    /// - Parameter indexes: every supported version's index (minimum through current).
    package init(_ indexes: [SchemaIndex] = []) {
        for index in indexes { add(index) }
    }

    /// Adds a supported version's ids (versions are added one at a time, so hundreds need not be in memory at once).
    package mutating func add(_ index: SchemaIndex) {
        minimum = minimum == 0 ? index.version : min(minimum, index.version)
        current = max(current, index.version)
        for info in index.allTabs {
            tabIds.insert(info.tab.id)
            if let section = info.sectionId { members.insert(Member(section: section, tab: info.tab.id)) }
        }
        for section in index.sections {
            sectionIds.insert(section.id)
            if let prefix = section.dynamicIdPrefix, prefixKeys.insert(Member(section: section.id, tab: prefix)).inserted {
                prefixes.append((prefix, section.id))
                dynamicSections.insert(section.id)
            }
        }
    }

    /// Adds another set of versions' ids.
    package mutating func formUnion(_ other: SupportedVersions) {
        guard other.current > 0 else { return }
        minimum = minimum == 0 ? other.minimum : min(minimum, other.minimum)
        current = max(current, other.current)
        tabIds.formUnion(other.tabIds)
        sectionIds.formUnion(other.sectionIds)
        members.formUnion(other.members)
        for (prefix, section) in other.prefixes where prefixKeys.insert(Member(section: section, tab: prefix)).inserted {
            prefixes.append((prefix, section))
            dynamicSections.insert(section)
        }
    }

    /// Whether some supported version has a tab `id` in `customization`: a static one, or a data-driven one (its id
    /// extends a dynamic section's prefix) while the user's stored list of that section (if one is stored) holds it.
    package func supportsTab(_ id: Identifier, in customization: Customization) -> Bool {
        tabIds.contains(id) || prefixes.contains { prefix, section in dataTab(id, prefix: prefix, section: section, customization) }
    }

    /// Whether some supported version has `id` as a tab of section `section` (static, or data-driven as above).
    package func supportsTab(_ id: Identifier, of section: Identifier, in customization: Customization) -> Bool {
        members.contains(Member(section: section, tab: id))
            || prefixes.contains { $0.section == section && dataTab(id, prefix: $0.prefix, section: section, customization) }
    }

    /// Whether some supported version has a section `id`.
    package func supportsSection(_ id: Identifier) -> Bool { sectionIds.contains(id) }

    /// A data-driven tab of `section` under `prefix`: while the user's stored list of the section holds entries under
    /// that prefix, one of them; with none under it (only another version's entries, or no list), any id extending
    /// it, as before a list is stored (`CustomizationRules.pruneDynamicTabs` shows such a list to that version as none).
    private func dataTab(_ id: Identifier, prefix: Identifier, section: Identifier, _ customization: Customization) -> Bool {
        guard Self.extends(id, prefix) else { return false }
        guard let list = customization.dynamicTabs[section], list.tabs.contains(where: { Self.extends($0.id, prefix) }) else { return true }
        return list.tab(id) != nil
    }

    private static func extends(_ id: Identifier, _ prefix: Identifier) -> Bool { id.byteCount > prefix.byteCount && id.hasBytePrefix(prefix) }

    /// Whether some supported version has `id` as a dynamic section (one a user's list may be stored for).
    package func supportsList(_ id: Identifier) -> Bool { dynamicSections.contains(id) }

    /// Whether a supported version's prefix of dynamic section `section` covers the listed id `id`.
    func listCovers(_ section: Identifier, _ id: Identifier) -> Bool {
        prefixes.contains { $0.section == section && id.byteCount > $0.prefix.byteCount && id.hasBytePrefix($0.prefix) }
    }

    /// The document with what no supported version can name dropped (`VersionMerge.prune`).
    package func prune(_ customization: Customization) -> (Customization, dropped: Bool) {
        VersionMerge.prune(customization, self)
    }
}
