import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("Violation locations become RFC 6901 pointers in the API")
struct ViolationPointerTests {
    @Test("each location and field, with ~ and / escaped in ids", arguments: [
        (ViolationLocation.document, ""),
        (.operation(0, field: nil), "/operations/0"),
        (.operation(12, field: .tab), "/operations/12/tab"),
        (.operation(1, field: .section), "/operations/1/section"),
        (.operation(2, field: .visibility), "/operations/2/visibility"),
        (.operation(3, field: .toIndex), "/operations/3/toIndex"),
        (.operation(4, field: .tabOrder(item: nil)), "/operations/4/tabOrder"),
        (.operation(4, field: .tabOrder(item: 0)), "/operations/4/tabOrder/0"),
        (.operation(5, field: .tabBarOrder(item: nil)), "/operations/5/tabBarOrder"),
        (.operation(5, field: .tabBarOrder(item: 17)), "/operations/5/tabBarOrder/17"),
        (.tabVisibility(tab: "home", .sidebar), "/tabs/home/sidebarVisibility"),
        (.tabVisibility(tab: "home", .tabBar), "/tabs/home/tabBarVisibility"),
        (.tabVisibility(tab: "a/b~c", .sidebar), "/tabs/a~1b~0c/sidebarVisibility"),
        // "~1" is an id of two characters, not an escaped slash: its tilde is escaped first.
        (.tabVisibility(tab: "~1", .tabBar), "/tabs/~01/tabBarVisibility"),
        (.tabVisibility(tab: "é/ü", .sidebar), "/tabs/é~1ü/sidebarVisibility"),
        (.sectionTabOrder(section: "s/~", item: nil), "/sections/s~1~0/tabOrder"),
        (.sectionTabOrder(section: "s/~", item: 2), "/sections/s~1~0/tabOrder/2"),
        (.sectionExpanded(section: "x~"), "/sections/x~0/expanded"),
        (.sectionExpanded(section: "//"), "/sections/~1~1/expanded"),
        (.tabBarOrder(item: nil), "/tabBarOrder"),
        (.tabBarOrder(item: 0), "/tabBarOrder/0"),
        (.pointer("/items/0/tabs/1/id"), "/items/0/tabs/1/id"),
        (.pointer(""), ""),
    ] as [(ViolationLocation, String)])
    func pointer(location: ViolationLocation, expected: String) {
        #expect(location.pointer == expected)
        #expect(Violation(location: location, code: .unknownTab, detail: "d").pointer == expected)
    }

    /// RFC 6901 §4: a reference token is unescaped `~1` → `/` first, then `~0` → `~`.
    static func tokens(_ pointer: String) -> [String] {
        pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { String($0).replacing("~1", with: "/").replacing("~0", with: "~") }
    }

    @Test("a client reading the pointer back finds the id it sent", arguments: ["plain", "a/b", "~", "~0", "~1", "/~/", "~~//", "list./x~y", "🙂/~"])
    func roundTrip(id: String) {
        #expect(Self.tokens(ViolationLocation.tabVisibility(tab: Identifier(id), .sidebar).pointer) == ["tabs", id, "sidebarVisibility"])
        #expect(Self.tokens(ViolationLocation.sectionTabOrder(section: Identifier(id), item: 3).pointer) == ["sections", id, "tabOrder", "3"])
        #expect(Self.tokens(ViolationLocation.sectionExpanded(section: Identifier(id)).pointer) == ["sections", id, "expanded"])
    }

    @Test("the problem document carries the pointer, not the domain's location")
    func problemDocument() throws {
        let refusal = RuleRefusal([Violation(location: .sectionTabOrder(section: "a/b", item: 1), code: .invalidTabOrder, detail: "twice")])
        let body = String(decoding: APIError.refused(refusal).response().body, as: UTF8.self)
        #expect(body.hasSuffix(#""errors":[{"pointer":"/sections/a~1b/tabOrder/1","code":"invalid-tab-order","detail":"twice"}]}"#))
    }
}
