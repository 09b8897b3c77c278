import TabStoreSupport
/// Several app versions at once (DOMAIN.md section 7): one stored document keeps every supported version's
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
            result.dynamicTabs[id] = edited.dynamicTabs[id]
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

    /// The document with the choices dropped that no supported version can name (`SupportedVersions.supports`).
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
        let supports = { (id: Identifier) in versions.supports(id, in: result) }
        for id in customization.tabs.keys where !supports(id) {
            result.tabs[id] = nil
            dropped = true
        }
        for (id, entry) in customization.sections {
            guard versions.supports(id, in: result) else {
                result.sections[id] = nil
                dropped = true
                continue
            }
            if let order = entry.tabOrder {
                let kept = order.filter(supports)
                if kept.count != order.count {
                    result.sections[id]?.tabOrder = kept.isEmpty ? nil : kept
                    dropped = true
                }
            }
        }
        if let order = customization.tabBarOrder {
            let kept = order.filter(supports)
            if kept.count != order.count {
                result.tabBarOrder = kept
                dropped = true
            }
        }
        result.compact()
        return (result, dropped)
    }
}

/// The schema versions an app supports (DOMAIN.md section 7): from its minimum to its current one. Answers
/// whether any of them can name an id, from the union of their ids, built once per app and kept read-only.
package struct SupportedVersions: Sendable {
    package let minimum: Int
    package let current: Int
    private let staticIds: Set<Identifier>
    /// Every dynamic section of a supported version with the prefixes it had (a section may change its prefix).
    private let prefixes: [(prefix: Identifier, section: Identifier)]
    private let dynamicSections: Set<Identifier>

    /// - Parameter indexes: every supported version's index (minimum through current).
    package init(_ indexes: [SchemaIndex]) {
        minimum = indexes.map(\.version).min() ?? 0
        current = indexes.map(\.version).max() ?? 0
        var ids = Set<Identifier>()
        var pairs: [(Identifier, Identifier)] = []
        var seen = Set<[UInt8]>()
        for index in indexes {
            for info in index.allTabs { ids.insert(info.tab.id) }
            for section in index.sections {
                ids.insert(section.id)
                if let prefix = section.dynamicIdPrefix, seen.insert(Array(prefix.text.utf8) + [0] + Array(section.id.text.utf8)).inserted {
                    pairs.append((prefix, section.id))
                }
            }
        }
        staticIds = ids
        prefixes = pairs
        dynamicSections = Set(pairs.map(\.1))
    }

    /// Whether some supported version can name `id` in `customization`: a tab or section it has, or a tab of a
    /// dynamic section it has whose prefix `id` extends, while the user's stored list of that section (if one is
    /// stored) holds it.
    package func supports(_ id: Identifier, in customization: Customization) -> Bool {
        if staticIds.contains(id) { return true }
        return prefixes.contains { prefix, section in
            guard id.byteCount > prefix.byteCount, id.hasBytePrefix(prefix) else { return false }
            guard let list = customization.dynamicTabs[section] else { return true }
            return list.tab(id) != nil
        }
    }

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
