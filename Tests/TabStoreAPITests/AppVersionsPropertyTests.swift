import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// docs/domain.md "Several app versions at once" as properties, over random writes from random supported versions of three overlapping
/// schemas: no write loses a choice whose id some supported version has; reading under a version never names an id
/// outside it; the writer's order decides the relative order of the ids it knows, for every version that knows them.
@Suite("Several app versions: random writes from random versions")
struct AppVersionsPropertyTests {
    /// Per version: top-level tabs and the tabs of section `s` (reorderable), in builder order.
    static let versions: [(tabs: [String], section: [String])] = [
        (["home", "a", "b", "c"], ["s1", "s2", "s3"]),
        (["home", "b", "c", "d"], ["s2", "s3", "s4"]),
        (["home", "c", "d", "e"], ["s4", "s2", "s5", "s3"]),
    ]

    static func schema(_ version: Int) -> String {
        let (tabs, section) = versions[version - 1]
        func tab(_ id: String) -> String { #"{"kind": "tab", "id": "\#(id)", "title": "\#(id)", "systemImage": "circle"}"# }
        let items = tabs.map(tab) + [#"{"kind": "section", "id": "s", "title": "S", "tabs": [\#(section.map(tab).joined(separator: ", "))]}"#]
        return #"{"items": [\#(items.joined(separator: ", "))]}"#
    }

    /// Every id version `n` has (the section's too).
    static func ids(_ n: Int) -> Set<String> { Set(versions[n - 1].tabs + versions[n - 1].section + ["s"]) }

    /// Every id a customization document names (its tabs, sections and orders).
    static func named(_ document: JSONValue) -> Set<String> {
        guard case .object(let object) = document else { return [] }
        var found = Set<String>()
        if case .object(let tabs)? = object["tabs"] { found.formUnion(tabs.keys) }
        if case .object(let sections)? = object["sections"] {
            found.formUnion(sections.keys)
            for (_, entry) in sections.members {
                if case .object(let section) = entry, case .array(let order)? = section["tabOrder"] {
                    for case .string(let id) in order { found.insert(id) }
                }
            }
        }
        if case .array(let order)? = object["tabBarOrder"] { for case .string(let id) in order { found.insert(id) } }
        return found
    }

    static func visibility(_ document: JSONValue, _ tab: String, _ member: String) -> String {
        guard case .object(let object) = document, case .object(let tabs)? = object["tabs"], case .object(let entry)? = tabs[tab],
              case .string(let value)? = entry[member] else { return "automatic" }
        return value
    }

    static func order(_ document: JSONValue) -> [String]? {
        guard case .object(let object) = document, case .object(let sections)? = object["sections"], case .object(let section)? = sections["s"],
              case .array(let order)? = section["tabOrder"] else { return nil }
        return order.compactMap { if case .string(let id) = $0 { id } else { nil } }
    }

    @Test("random writes from random supported versions keep every supported choice and name only the reader's ids",
          arguments: [UInt64(7), 33, 2026])
    func randomWrites(seed: UInt64) async throws {
        try await withInProcessAPI { api in
            let admin = api.admin
            let secret = try await api.makeApp("prop.app", schema: Self.schema(1))
            for version in 2...3 {
                #expect(await api.send(.put("/v1/apps/prop.app/schema").bearer(admin).json(Self.schema(version))).status == 201)
            }
            let token = JWT.sign(
                subject: "u", audience: "prop.app", expiresAt: Int(Date().timeIntervalSince1970) + 3600, issuedAt: Int(Date().timeIntervalSince1970),
                secret: secret)
            let path = "/v1/apps/prop.app/users/u/customization"
            var random = SeededGenerator(state: seed)
            // The last visibility a successful write set, per id and member ("sidebarVisibility" / "tabBarVisibility").
            var model: [String: [String: String]] = [:]
            var minimum = 1
            var lastRevision = 0
            var revisionAtRaise = Int.max
            var accepted = 0
            for step in 0..<160 {
                if step == 110 {
                    // The operator retires version 1: its ids go at the next write; the properties hold for versions 2-3.
                    #expect(await api.send(.patch("/v1/apps/prop.app").bearer(admin).json(#"{"minimumSchemaVersion": 2}"#)).status == 200)
                    minimum = 2
                    revisionAtRaise = lastRevision
                }
                let writer = Int.random(in: minimum...3, using: &random)
                let (tabs, section) = Self.versions[writer - 1]
                let operation: String
                var setVisibility: (String, String, String)?
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6:
                    let tab = (tabs + section).randomElement(using: &random)!
                    let member = Bool.random(using: &random) ? "Sidebar" : "TabBar"
                    let value = ["hidden", "visible", "automatic", "hidden"].randomElement(using: &random)!
                    operation = #"{"op": "set\#(member)Visibility", "tab": "\#(tab)", "visibility": "\#(value)"}"#
                    setVisibility = (tab, member == "Sidebar" ? "sidebarVisibility" : "tabBarVisibility", value)
                case 6..<8:
                    let order = section.shuffled(using: &random).map { "\"\($0)\"" }.joined(separator: ", ")
                    operation = #"{"op": "setTabOrder", "section": "s", "tabOrder": [\#(order)]}"#
                default:
                    let tab = section.randomElement(using: &random)!
                    operation =
                        #"{"op": "moveTab", "section": "s", "tab": "\#(tab)", "toIndex": \#(Int.random(in: 0..<section.count, using: &random))}"#
                }
                let answer = await api.send(.patch(path + "?schemaVersion=\(writer)").bearer(token).json(#"{"operations": [\#(operation)]}"#))
                guard answer.status == 200 else {
                    #expect(answer.status == 422, "step \(step): \(answer.text)")  // a rule (the last visible tab) may refuse
                    continue
                }
                accepted += 1
                let written = try answer.json()
                #expect(Self.named(written).isSubset(of: Self.ids(writer)), "step \(step): the writer's answer names only its ids")
                if let (tab, member, value) = setVisibility { model[tab, default: [:]][member] = value }
                let writerOrder = Self.order(written)
                // Every supported reader: only its ids; every modeled choice it has, as last set; the writer's order.
                for reader in minimum...3 {
                    let read = await api.send(.get(path + "?schemaVersion=\(reader)").bearer(token))
                    #expect(read.status == 200 && read.etag == "\"\(read.revision ?? -1).\(reader)\"")
                    let document = try read.json()
                    #expect(Self.named(document).isSubset(of: Self.ids(reader)), "step \(step): reader v\(reader) names an id outside it")
                    for (tab, members) in model where Self.ids(reader).contains(tab) {
                        for (member, value) in members {
                            #expect(Self.visibility(document, tab, member) == value, "step \(step): v\(reader) lost \(tab).\(member)")
                        }
                    }
                    if let writerOrder, let readerOrder = Self.order(document) {
                        let shared = Set(readerOrder).intersection(writerOrder)
                        #expect(writerOrder.filter(shared.contains) == readerOrder.filter(shared.contains),
                                "step \(step): v\(reader)'s order \(readerOrder) against the writer's \(writerOrder)")
                    }
                    let layout = await api.send(.get("/v1/apps/prop.app/users/u/layout?sizeClass=regular&schemaVersion=\(reader)").bearer(token))
                    #expect(Set(layout.ids("sidebar") + layout.ids("hidden")).isSubset(of: Self.ids(reader)))
                }
                // What is stored keeps every choice some supported version has, and (once written after the minimum
                // went up) nothing only retired versions had.
                let stored = try await api.send(.get("/v1/apps/prop.app/users/u/export").bearer(admin)).json()
                guard case .object(let export) = stored, let document = export["customization"] else { Issue.record("export"); continue }
                let supported = (minimum...3).reduce(into: Set<String>()) { $0.formUnion(Self.ids($1)) }
                // (A write that changes nothing stores nothing: what the minimum retired goes with the next real change.)
                if (answer.revision ?? 0) > lastRevision, lastRevision >= revisionAtRaise {
                    #expect(Self.named(document).isSubset(of: supported), "step \(step): stored ids no supported version has")
                }
                lastRevision = answer.revision ?? lastRevision
                for (tab, members) in model where supported.contains(tab) {
                    for (member, value) in members {
                        #expect(Self.visibility(document, tab, member) == value, "step \(step): stored lost \(tab).\(member)")
                    }
                }
            }
            #expect(accepted > 100, "most random writes are accepted (\(accepted))")
        }
    }
}
