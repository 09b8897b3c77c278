import Foundation
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

/// Item 5 of `TrustTests`: what is stored stays bounded and readable, whatever the order limits and size cap.
extension TrustTests {
    /// Data-driven tabs that may move in both placements (v1.1: they cannot by default), before any list is stored.
    static let dynamicSchema = """
        {"items": [{"kind": "tab", "id": "home", "title": "Home"}, {"kind": "tab", "id": "more", "title": "More"},
          {"kind": "section", "id": "p", "title": "Places", "dynamicTabs": {"idPrefix": "p.",
           "customizationBehavior": {"sidebar": "reorderable", "tabBar": "reorderable"}},
           "tabs": [{"kind": "tab", "id": "fixed", "title": "Fixed"}]}]}
        """
    /// The same schema with one more tab: a dry run with it reads every stored customization.
    static let dynamicSchemaNext = """
        {"items": [{"kind": "tab", "id": "home", "title": "Home"}, {"kind": "tab", "id": "more", "title": "More"},
          {"kind": "tab", "id": "extra", "title": "Extra"},
          {"kind": "section", "id": "p", "title": "Places", "dynamicTabs": {"idPrefix": "p.",
           "customizationBehavior": {"sidebar": "reorderable", "tabBar": "reorderable"}},
           "tabs": [{"kind": "tab", "id": "fixed", "title": "Fixed"}]}]}
        """

    /// Data-driven tabs as `ForEach` makes them by default: they may be hidden, not moved.
    static let hideableDynamicSchema = """
        {"items": [{"kind": "tab", "id": "home", "title": "Home"}, {"kind": "tab", "id": "more", "title": "More"},
          {"kind": "section", "id": "p", "title": "Places", "dynamicTabs": {"idPrefix": "p."},
           "tabs": [{"kind": "tab", "id": "fixed", "title": "Fixed"}]}]}
        """
    static let hideableDynamicSchemaNext = hideableDynamicSchema.replacingOccurrences(
        of: #"{"kind": "tab", "id": "more", "title": "More"},"#,
        with: #"{"kind": "tab", "id": "more", "title": "More"}, {"kind": "tab", "id": "extra", "title": "Extra"},"#)

    // MARK: 5. Stored size cap and limits after normalizing

    /// The `counter`th long dynamic id, in two spellings of filler (ASCII and three-byte Kelvin signs).
    static func longDynamicId(_ counter: Int) -> String {
        let filler = counter.isMultiple(of: 2) ? String(repeating: "x", count: 240) : String(repeating: "\u{212A}", count: 80)
        return "p." + filler + "\(counter)"
    }

    @Test("PATCHes never grow a customization past 64 KiB: the one that would is refused, and what is stored stays usable")
    func storedSizeCap() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.hideableDynamicSchema)
            let cap = APIConfiguration().maxCustomizationBytes
            #expect(cap == 64 * 1024)
            let token = creds.app.token(for: "big")
            let path = creds.app.userPath("big") + "/customization"
            var counter = 0
            var batch = 10
            var revision = 0
            var refusal: TestResponse?
            var storedBytes = 0
            for _ in 0..<60 where refusal == nil {  // ~21 batches and a few single entries reach the cap
                let hides = (0..<batch).map { _ in
                    counter += 1
                    return Trust.hide(Self.longDynamicId(counter))
                }
                let response = try await live.send(.patch(path).bearer(token).json(Trust.patch(hides)))
                if response.status == 200 {
                    revision += 1
                    storedBytes = response.body.count
                } else if response.status == 422, batch > 1 {
                    batch = 1  // close in on the cap one entry at a time
                } else {
                    refusal = response
                }
            }
            #expect(refusal?.status == 422)
            #expect(refusal?.codes == ["customization-too-large"])
            #expect(storedBytes <= cap && storedBytes > cap - 512, "filled to \(storedBytes) bytes")
            let stored = try await live.send(.get(path).bearer(token))
            #expect(stored.status == 200 && stored.field("revision") == .integer(revision) && stored.body.count == storedBytes)

            try await expectUsable(live, creds.app, users: ["big": token], revisions: ["big": revision], next: Self.hideableDynamicSchemaNext)
        }
    }

    @Test("a whole document over 64 KiB in one PUT is refused with customization-too-large, and nothing is stored")
    func putOverSizeCap() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.hideableDynamicSchema)
            let putToken = creds.app.token(for: "bigput")
            let path = creds.app.userPath("bigput") + "/customization"
            let tabs = JSONObject((1...300).map { (Self.longDynamicId($0), ["sidebarVisibility": "hidden"]) })
            let put = try await live.send(.put(path).bearer(putToken).json(["tabs": .object(tabs)]))
            #expect(put.status == 422 && put.codes == ["customization-too-large"])
            #expect(try await live.send(.get(path).bearer(putToken)).field("revision") == .integer(0))
        }
    }

    static let dynamicIds = (0..<Customization.maxOrderLength).map { "p.\($0)" }

    @Test("a dynamic section's order at the 2,000-id limit: moves within it apply, a move or list that adds an id is refused")
    func sectionOrderLimit() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.dynamicSchema)
            let max = Customization.maxOrderLength
            #expect(max == 2_000)
            let dynamic = Self.dynamicIds
            let order = creds.app.token(for: "order")
            let patch = TestRequest.patch(creds.app.userPath("order") + "/customization").bearer(order)
            let full = try await live.send(patch.json(Trust.patch([
                ["op": "setTabOrder", "section": "p", "tabOrder": .array((["fixed"] + dynamic.prefix(max - 1)).map { .string($0) })],
            ])))
            #expect(full.status == 200)
            let tooLong = try await live.send(patch.json(Trust.patch([
                ["op": "setTabOrder", "section": "p", "tabOrder": .array((["fixed"] + dynamic + ["p.more"]).map { .string($0) })],
            ])))
            #expect(tooLong.status == 400 && tooLong.codes == ["too-many-entries"])
            for toIndex in [0, 1_000, max] {
                let move = try await live.send(
                    patch.json(Trust.patch([["op": "moveTab", "section": "p", "tab": "p.new", "toIndex": .integer(toIndex)]])))
                #expect(move.status == 422, "toIndex \(toIndex)")
                #expect(move.codes == ["too-many-entries"], "toIndex \(toIndex)")
            }
            let within = try await live.send(patch.json(Trust.patch([["op": "moveTab", "section": "p", "tab": "p.5", "toIndex": 0]])))
            #expect(within.status == 200)
            let orderNow = try await live.send(.get(creds.app.userPath("order") + "/customization").bearer(order))
            guard case .object(let sections)? = orderNow.field("sections"), case .object(let section)? = sections["p"],
                  case .array(let tabOrder)? = section["tabOrder"] else {
                Issue.record("no tabOrder: \(orderNow.text.prefix(200))")
                return
            }
            #expect(tabOrder.count == max && tabOrder.first == .string("p.5"))
            #expect(!tabOrder.contains(.string("p.new")))

            try await expectUsable(live, creds.app, users: ["order": order], revisions: ["order": 2])
        }
    }

    @Test("a tab bar order that normalizing (appending home, more, fixed) would push past 2,000 ids is refused")
    func tabBarOrderLimitAfterNormalizing() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.dynamicSchema)
            let (max, dynamic) = (Customization.maxOrderLength, Self.dynamicIds)
            let bar = creds.app.token(for: "bar")
            let barPath = creds.app.userPath("bar") + "/customization"
            for (ids, status) in [(dynamic, 422), (["home"] + dynamic.prefix(max - 2), 422), (["home"] + dynamic.prefix(max - 3), 200)] {
                let response = try await live.send(.patch(barPath).bearer(bar).json(Trust.patch([
                    ["op": "setTabBarOrder", "tabBarOrder": .array(ids.map { .string($0) })],
                ])))
                #expect(response.status == status, "\(ids.count) ids")
                if status == 422 { #expect(response.codes == ["too-many-entries"]) }
            }
            let barNow = try await live.send(.get(barPath).bearer(bar))
            guard case .array(let tabBarOrder)? = barNow.field("tabBarOrder") else {
                Issue.record("no tabBarOrder")
                return
            }
            #expect(tabBarOrder.count == max)
            #expect(tabBarOrder.first == .string("home") && Array(tabBarOrder.suffix(2)) == [.string("more"), .string("fixed")])

            try await expectUsable(live, creds.app, users: ["bar": bar], revisions: ["bar": 1])
        }
    }

    /// Every read and write of these users answers, and so do the whole-app operations; then each DELETE is 204.
    private func expectUsable(_ live: LiveService, _ app: Credentials.App, users: [String: String], revisions: [String: Int],
                              next: String = dynamicSchemaNext) async throws {
        for (user, token) in users.sorted(by: { $0.key < $1.key }) {
            let base = app.userPath(user)
            #expect(try await live.send(.get(base + "/customization").bearer(token)).status == 200, "\(user)")
            for sizeClass in ["compact", "regular"] {
                #expect(try await live.send(.get(base + "/layout?sizeClass=\(sizeClass)").bearer(token)).status == 200, "\(user) \(sizeClass)")
            }
        }
        let stats = try await live.send(.get("/v1/apps/\(app.id)/stats").bearer(live.admin))
        #expect(stats.status == 200 && stats.field("unreadableCustomizations") == .integer(0))
        let dryRun = try await live.send(.put("/v1/apps/\(app.id)/schema?dryRun=true").bearer(live.admin).json(next))
        #expect(dryRun.status == 200 && dryRun.field("customizationsUnreadable") == .integer(0))
        #expect(dryRun.field("customizationsChecked") == .integer(users.count))
        for (user, token) in users.sorted(by: { $0.key < $1.key }) {
            let path = app.userPath(user) + "/customization"
            #expect(try await live.send(.delete(path).bearer(token)).status == 204, "\(user)")
            let after = try await live.send(.get(path).bearer(token))
            #expect(after.status == 200 && after.field("tabs") == .object(JSONObject()), "\(user)")
            #expect(after.field("revision") == .integer((revisions[user] ?? 0) + 1), "\(user)")
        }
    }
}
