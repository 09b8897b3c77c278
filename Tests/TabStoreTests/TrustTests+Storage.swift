import Foundation
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreSupport

/// Item 5 of `TrustTests`: what is stored stays bounded and readable, whatever the order limits and size cap.
extension TrustTests {
    static let dynamicSchema = """
        {"items": [{"kind": "tab", "id": "home", "title": "Home"}, {"kind": "tab", "id": "more", "title": "More"},
          {"kind": "section", "id": "p", "title": "Places", "dynamicTabs": {"idPrefix": "p."},
           "tabs": [{"kind": "tab", "id": "fixed", "title": "Fixed"}]}]}
        """
    /// The same schema with one more tab: a dry run with it reads every stored customization.
    static let dynamicSchemaNext = """
        {"items": [{"kind": "tab", "id": "home", "title": "Home"}, {"kind": "tab", "id": "more", "title": "More"},
          {"kind": "tab", "id": "extra", "title": "Extra"},
          {"kind": "section", "id": "p", "title": "Places", "dynamicTabs": {"idPrefix": "p."},
           "tabs": [{"kind": "tab", "id": "fixed", "title": "Fixed"}]}]}
        """

    // MARK: 5. Stored size cap and limits after normalizing

    @Test("a customization never grows past 64 KiB: the PATCH or PUT that would is refused, and what is stored stays usable")
    func storedSizeCap() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.dynamicSchema)
            let cap = APIConfiguration().maxCustomizationBytes
            #expect(cap == 64 * 1024)
            let token = live.userToken(app: "app", user: "big", secret: secret)
            let path = "/v1/apps/app/users/big/customization"
            var counter = 0
            func nextId() -> String {
                counter += 1
                // Long dynamic ids, in two spellings of filler (ASCII and three-byte Kelvin signs).
                let filler = counter.isMultiple(of: 2) ? String(repeating: "x", count: 240) : String(repeating: "\u{212A}", count: 80)
                return "p." + filler + "\(counter)"
            }
            var batch = 10
            var revision = 0
            var refusal: RawClient.Response?
            var storedBytes = 0
            for _ in 0..<60 where refusal == nil {  // ~21 batches and a few single entries reach the cap
                let response = try await live.call("PATCH", path, token: token, json: Trust.patch((0..<batch).map { _ in Trust.hide(nextId()) }))
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
            let stored = try await live.call("GET", path, token: token)
            #expect(stored.status == 200 && stored.field("revision") == .integer(revision) && stored.body.count == storedBytes)

            // A whole document over the cap, in one PUT.
            let putToken = live.userToken(app: "app", user: "bigput", secret: secret)
            let tabs = JSONObject((0..<300).map { _ in (nextId(), ["sidebarVisibility": "hidden"]) })
            let put = try await live.call("PUT", "/v1/apps/app/users/bigput/customization", token: putToken, json: Trust.text(["tabs": .object(tabs)]))
            #expect(put.status == 422 && put.codes == ["customization-too-large"])
            #expect(try await live.call("GET", "/v1/apps/app/users/bigput/customization", token: putToken).field("revision") == .integer(0))

            try await expectUsable(live, users: ["big": token], revisions: ["big": revision])
        }
    }

    @Test("order limits hold after moving and after normalizing: a 2001st id is refused, never stored")
    func orderLimitsAfterNormalizing() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.dynamicSchema)
            let max = Customization.maxOrderLength
            #expect(max == 2_000)
            let dynamic = (0..<max).map { "p.\($0)" }

            // A dynamic section's tabOrder at the limit: moves within it are fine, a move that adds an id is not.
            let order = live.userToken(app: "app", user: "order", secret: secret)
            let orderPath = "/v1/apps/app/users/order/customization"
            let full = try await live.call("PATCH", orderPath, token: order, json: Trust.patch([
                ["op": "setTabOrder", "section": "p", "tabOrder": .array((["fixed"] + dynamic.prefix(max - 1)).map { .string($0) })],
            ]))
            #expect(full.status == 200)
            let tooLong = try await live.call("PATCH", orderPath, token: order, json: Trust.patch([
                ["op": "setTabOrder", "section": "p", "tabOrder": .array((["fixed"] + dynamic + ["p.more"]).map { .string($0) })],
            ]))
            #expect(tooLong.status == 400 && tooLong.codes == ["too-many-entries"])
            for toIndex in [0, 1_000, max] {
                let move = try await live.call("PATCH", orderPath, token: order, json: Trust.patch([
                    ["op": "moveTab", "section": "p", "tab": "p.new", "toIndex": .integer(toIndex)],
                ]))
                #expect(move.status == 422, "toIndex \(toIndex)")
                #expect(move.codes == ["too-many-entries"], "toIndex \(toIndex)")
            }
            let within = try await live.call("PATCH", orderPath, token: order, json: Trust.patch([["op": "moveTab", "section": "p", "tab": "p.5", "toIndex": 0]]))
            #expect(within.status == 200)
            let orderNow = try await live.call("GET", orderPath, token: order)
            guard case .object(let sections)? = orderNow.field("sections"), case .object(let section)? = sections["p"],
                  case .array(let tabOrder)? = section["tabOrder"] else {
                Issue.record("no tabOrder: \(orderNow.text.prefix(200))")
                return
            }
            #expect(tabOrder.count == max && tabOrder.first == .string("p.5"))
            #expect(!tabOrder.contains(.string("p.new")))

            // A tab bar order that normalizing (appending home, more, fixed) would push past the limit.
            let bar = live.userToken(app: "app", user: "bar", secret: secret)
            let barPath = "/v1/apps/app/users/bar/customization"
            for (ids, status) in [(dynamic, 422), (["home"] + dynamic.prefix(max - 2), 422), (["home"] + dynamic.prefix(max - 3), 200)] {
                let response = try await live.call("PATCH", barPath, token: bar, json: Trust.patch([
                    ["op": "setTabBarOrder", "tabBarOrder": .array(ids.map { .string($0) })],
                ]))
                #expect(response.status == status, "\(ids.count) ids")
                if status == 422 { #expect(response.codes == ["too-many-entries"]) }
            }
            let barNow = try await live.call("GET", barPath, token: bar)
            guard case .array(let tabBarOrder)? = barNow.field("tabBarOrder") else {
                Issue.record("no tabBarOrder")
                return
            }
            #expect(tabBarOrder.count == max)
            #expect(tabBarOrder.first == .string("home") && Array(tabBarOrder.suffix(2)) == [.string("more"), .string("fixed")])

            try await expectUsable(live, users: ["order": order, "bar": bar], revisions: ["order": 2, "bar": 1])
        }
    }

    /// Every read and write of these users answers, and so do the whole-app operations; then each DELETE is 204.
    private func expectUsable(_ live: LiveService, users: [String: String], revisions: [String: Int]) async throws {
        for (user, token) in users.sorted(by: { $0.key < $1.key }) {
            let base = "/v1/apps/app/users/\(user)"
            #expect(try await live.call("GET", base + "/customization", token: token).status == 200, "\(user)")
            for sizeClass in ["compact", "regular"] {
                #expect(try await live.call("GET", base + "/layout?sizeClass=\(sizeClass)", token: token).status == 200, "\(user) \(sizeClass)")
            }
        }
        let stats = try await live.call("GET", "/v1/apps/app/stats", token: live.admin)
        #expect(stats.status == 200 && stats.field("unreadableCustomizations") == .integer(0))
        let dryRun = try await live.call("PUT", "/v1/apps/app/schema?dryRun=true", token: live.admin, json: Self.dynamicSchemaNext)
        #expect(dryRun.status == 200 && dryRun.field("customizationsUnreadable") == .integer(0))
        #expect(dryRun.field("customizationsChecked") == .integer(users.count))
        for (user, token) in users.sorted(by: { $0.key < $1.key }) {
            let path = "/v1/apps/app/users/\(user)/customization"
            #expect(try await live.call("DELETE", path, token: token).status == 204, "\(user)")
            let after = try await live.call("GET", path, token: token)
            #expect(after.status == 200 && after.field("tabs") == .object(JSONObject()), "\(user)")
            #expect(after.field("revision") == .integer((revisions[user] ?? 0) + 1), "\(user)")
        }
    }
}
