import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreSupport
import TabStoreTestSupport

/// Ids with `/` and `~`, so document pointers must escape them (RFC 6901 §3).
let escapingSchema = """
    {"items": [
      {"id": "a/b", "title": "AB", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
      {"id": "c~d", "title": "CD"},
      {"kind": "section", "id": "s/~", "title": "S", "tabs": [{"id": "s/~.1", "title": "1"}, {"id": "s/~.2", "title": "2"}]}
    ]}
    """

@Suite("Rule refusals on the wire: the exact problem document of each kind of location")
struct RefusalWireTests {
    struct Row: Sendable, CustomStringConvertible {
        let name: String
        let schema: String
        /// A PATCH body (`{"operations": …}`) or, with `put`, a PUT document.
        let body: String
        var put = false
        let expected: String
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "PATCH unknown tab", schema: ruleSchema,
            body: #"{"operations": [{"op":"setSidebarVisibility","tab":"nope","visibility":"hidden"}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"no tab \"nope\" in schema version 1","errors":[{"pointer":"/operations/0/tab","code":"unknown-tab","detail":"no tab \"nope\" in schema version 1"}]}"#
        ),
        Row(
            name: "PATCH not hideable", schema: ruleSchema,
            body:
                #"{"operations": [{"op":"setSidebarVisibility","tab":"inbox","visibility":"hidden"},{"op":"setSidebarVisibility","tab":"home","visibility":"hidden"}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"home\" has customization behavior \"disabled\" in the sidebar and cannot be hidden","errors":[{"pointer":"/operations/1/visibility","code":"not-hideable","detail":"tab \"home\" has customization behavior \"disabled\" in the sidebar and cannot be hidden"}]}"#
        ),
        Row(
            name: "PATCH sidebarOnly in the bar", schema: ruleSchema,
            body: #"{"operations": [{"op":"setTabBarVisibility","tab":"settings","visibility":"visible"}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"settings\" is sidebarOnly and can never be shown in the tab bar","errors":[{"pointer":"/operations/0/visibility","code":"sidebar-only","detail":"tab \"settings\" is sidebarOnly and can never be shown in the tab bar"}]}"#
        ),
        Row(
            name: "PATCH add a default-hidden reorderable tab", schema: ruleSchema,
            body: #"{"operations": [{"op":"setTabBarVisibility","tab":"extra","visibility":"visible"}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"extra\" has customization behavior \"reorderable\" in the tabBar and cannot be added","errors":[{"pointer":"/operations/0/visibility","code":"customization-disabled","detail":"tab \"extra\" has customization behavior \"reorderable\" in the tabBar and cannot be added"}]}"#
        ),
        Row(
            name: "PATCH move in an unknown section", schema: ruleSchema,
            body: #"{"operations": [{"op":"moveTab","section":"nope","tab":"places.a","toIndex":0}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"no section \"nope\" in schema version 1","errors":[{"pointer":"/operations/0/section","code":"unknown-section","detail":"no section \"nope\" in schema version 1"}]}"#
        ),
        Row(
            name: "PATCH move out of range", schema: ruleSchema,
            body: #"{"operations": [{"op":"moveTab","section":"places","tab":"places.a","toIndex":9}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"toIndex must be between 0 and 2","errors":[{"pointer":"/operations/0/toIndex","code":"invalid-tab-order","detail":"toIndex must be between 0 and 2"}]}"#
        ),
        Row(
            name: "PATCH move a disabled tab", schema: ruleSchema,
            body: #"{"operations": [{"op":"moveTab","section":"places","tab":"places.b","toIndex":0}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"places.b\" has customization behavior \"disabled\" in the sidebar and cannot be moved","errors":[{"pointer":"/operations/0/tab","code":"not-movable","detail":"tab \"places.b\" has customization behavior \"disabled\" in the sidebar and cannot be moved"}]}"#
        ),
        Row(
            name: "PATCH move across sections", schema: ruleSchema,
            body: #"{"operations": [{"op":"moveTab","section":"places","tab":"locked.a","toIndex":0}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"locked.a\" is not in section \"places\"; in the sidebar tabs reorder only within their section","errors":[{"pointer":"/operations/0/tab","code":"cross-section-move","detail":"tab \"locked.a\" is not in section \"places\"; in the sidebar tabs reorder only within their section"}]}"#
        ),
        Row(
            name: "PATCH reorder a disabled section", schema: ruleSchema,
            body: #"{"operations": [{"op":"setTabOrder","section":"locked","tabOrder":["locked.b","locked.a"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"section \"locked\" has customization behavior \"disabled\" in the sidebar and cannot be reordered","errors":[{"pointer":"/operations/0/section","code":"customization-disabled","detail":"section \"locked\" has customization behavior \"disabled\" in the sidebar and cannot be reordered"}]}"#
        ),
        Row(
            name: "PATCH tab order duplicate", schema: ruleSchema,
            body: #"{"operations": [{"op":"setTabOrder","section":"places","tabOrder":["places.a","places.b","places.c","places.a"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"places.a\" appears twice","errors":[{"pointer":"/operations/0/tabOrder/3","code":"invalid-tab-order","detail":"tab \"places.a\" appears twice"}]}"#
        ),
        Row(
            name: "PATCH tab order missing a tab", schema: ruleSchema,
            body: #"{"operations": [{"op":"setTabOrder","section":"places","tabOrder":["places.a","places.b"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tabOrder must list all of section \"places\"'s tabs; \"places.c\" is missing","errors":[{"pointer":"/operations/0/tabOrder","code":"invalid-tab-order","detail":"tabOrder must list all of section \"places\"'s tabs; \"places.c\" is missing"}]}"#
        ),
        Row(
            name: "PATCH tab order moving a fixed tab", schema: ruleSchema,
            body: #"{"operations": [{"op":"setTabOrder","section":"places","tabOrder":["places.b","places.a","places.c"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"places.b\" has customization behavior \"disabled\" in the sidebar and keeps its builder position 1","errors":[{"pointer":"/operations/0/tabOrder","code":"not-movable","detail":"tab \"places.b\" has customization behavior \"disabled\" in the sidebar and keeps its builder position 1"}]}"#
        ),
        Row(
            name: "PATCH tab order with an unknown tab", schema: ruleSchema,
            body: #"{"operations": [{"op":"setTabOrder","section":"places","tabOrder":["places.a","zzz"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"no tab \"zzz\" in schema version 1","errors":[{"pointer":"/operations/0/tabOrder/1","code":"unknown-tab","detail":"no tab \"zzz\" in schema version 1"}]}"#
        ),
        Row(
            name: "PATCH tab order across sections", schema: ruleSchema,
            body: #"{"operations": [{"op":"setTabOrder","section":"places","tabOrder":["places.a","places.b","places.c","inbox"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"inbox\" is not in section \"places\"; in the sidebar tabs reorder only within their section","errors":[{"pointer":"/operations/0/tabOrder/3","code":"cross-section-move","detail":"tab \"inbox\" is not in section \"places\"; in the sidebar tabs reorder only within their section"}]}"#
        ),
        Row(
            name: "PATCH bar order pinned", schema: ruleSchema,
            body: #"{"operations": [{"op":"resetTabBarOrder"},{"op":"setTabBarOrder","tabBarOrder":["inbox","search"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"search\" is pinned and is never reordered","errors":[{"pointer":"/operations/1/tabBarOrder/1","code":"pinned-tab","detail":"tab \"search\" is pinned and is never reordered"}]}"#
        ),
        Row(name: "PATCH bar order sidebarOnly", schema: ruleSchema, body: #"{"operations": [{"op":"setTabBarOrder","tabBarOrder":["settings"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"settings\" is sidebarOnly and is never in the tab bar","errors":[{"pointer":"/operations/0/tabBarOrder/0","code":"sidebar-only","detail":"tab \"settings\" is sidebarOnly and is never in the tab bar"}]}"#
        ),
        Row(name: "PATCH bar order disabled", schema: ruleSchema, body: #"{"operations": [{"op":"setTabBarOrder","tabBarOrder":["inbox","home"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"home\" has customization behavior \"disabled\" in the tab bar and keeps its default position","errors":[{"pointer":"/operations/0/tabBarOrder/1","code":"not-movable","detail":"tab \"home\" has customization behavior \"disabled\" in the tab bar and keeps its default position"}]}"#
        ),
        Row(
            name: "PATCH bar order duplicate", schema: ruleSchema,
            body: #"{"operations": [{"op":"setTabBarOrder","tabBarOrder":["inbox","inbox"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"inbox\" appears twice","errors":[{"pointer":"/operations/0/tabBarOrder/1","code":"invalid-tab-order","detail":"tab \"inbox\" appears twice"}]}"#
        ),
        Row(name: "PATCH bar order unknown", schema: ruleSchema, body: #"{"operations": [{"op":"setTabBarOrder","tabBarOrder":["inbox","nope"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"no tab \"nope\" in schema version 1","errors":[{"pointer":"/operations/0/tabBarOrder/1","code":"unknown-tab","detail":"no tab \"nope\" in schema version 1"}]}"#
        ),
        Row(
            name: "PATCH expand an unknown section", schema: ruleSchema,
            body: #"{"operations": [{"op":"setSectionExpanded","section":"nope","expanded":true}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"no section \"nope\" in schema version 1","errors":[{"pointer":"/operations/0/section","code":"unknown-section","detail":"no section \"nope\" in schema version 1"}]}"#
        ),
        Row(name: "PATCH reset an unknown section", schema: ruleSchema, body: #"{"operations": [{"op":"resetSectionOrder","section":"nope"}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"no section \"nope\" in schema version 1","errors":[{"pointer":"/operations/0/section","code":"unknown-section","detail":"no section \"nope\" in schema version 1"}]}"#
        ),
        Row(name: "PATCH no visible tab", schema: #"{"items": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}]}"#,
            body:
                #"{"operations": [{"op":"setTabBarVisibility","tab":"a","visibility":"hidden"},{"op":"setTabBarVisibility","tab":"b","visibility":"hidden"},{"op":"resetTabBarOrder"}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"the change would leave no visible tab in the tabBar","errors":[{"pointer":"/operations/2","code":"no-visible-tab","detail":"the change would leave no visible tab in the tabBar"}]}"#
        ),
        Row(
            name: "PATCH escaping ids in an order", schema: escapingSchema,
            body: #"{"operations": [{"op":"setTabOrder","section":"s/~","tabOrder":["s/~.2","s/~.2"]}]}"#,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"s/~.2\" appears twice","errors":[{"pointer":"/operations/0/tabOrder/1","code":"invalid-tab-order","detail":"tab \"s/~.2\" appears twice"}]}"#
        ),
        Row(name: "PUT not hideable", schema: ruleSchema, body: #"{"tabs": {"home": {"sidebarVisibility": "hidden"}}}"#, put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"home\" has customization behavior \"disabled\" in the sidebar and cannot be hidden","errors":[{"pointer":"/tabs/home/sidebarVisibility","code":"not-hideable","detail":"tab \"home\" has customization behavior \"disabled\" in the sidebar and cannot be hidden"}]}"#
        ),
        Row(name: "PUT tab bar entry", schema: ruleSchema, body: #"{"tabs": {"feed": {"tabBarVisibility": "hidden"}}}"#, put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"feed\" has customization behavior \"reorderable\" in the tabBar and cannot be hidden","errors":[{"pointer":"/tabs/feed/tabBarVisibility","code":"not-hideable","detail":"tab \"feed\" has customization behavior \"reorderable\" in the tabBar and cannot be hidden"}]}"#
        ),
        Row(name: "PUT escaped tab id", schema: escapingSchema, body: #"{"tabs": {"a/b": {"sidebarVisibility": "hidden"}}}"#, put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"a/b\" has customization behavior \"disabled\" in the sidebar and cannot be hidden","errors":[{"pointer":"/tabs/a~1b/sidebarVisibility","code":"not-hideable","detail":"tab \"a/b\" has customization behavior \"disabled\" in the sidebar and cannot be hidden"}]}"#
        ),
        Row(name: "PUT escaped unknown tab id", schema: escapingSchema, body: #"{"tabs": {"x~/y": {"tabBarVisibility": "hidden"}}}"#, put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"no tab \"x~/y\" in schema version 1","errors":[{"pointer":"/tabs/x~0~1y/tabBarVisibility","code":"unknown-tab","detail":"no tab \"x~/y\" in schema version 1"}]}"#
        ),
        Row(
            name: "PUT escaped section order item", schema: escapingSchema, body: #"{"sections": {"s/~": {"tabOrder": ["s/~.2", "s/~.2"]}}}"#,
            put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"s/~.2\" appears twice","errors":[{"pointer":"/sections/s~1~0/tabOrder/1","code":"invalid-tab-order","detail":"tab \"s/~.2\" appears twice"}]}"#
        ),
        Row(name: "PUT escaped unknown section order", schema: escapingSchema, body: #"{"sections": {"q/r~": {"tabOrder": ["s/~.2"]}}}"#, put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"no section \"q/r~\" in schema version 1","errors":[{"pointer":"/sections/q~1r~0/tabOrder","code":"unknown-section","detail":"no section \"q/r~\" in schema version 1"}]}"#
        ),
        Row(name: "PUT escaped unknown section expanded", schema: escapingSchema, body: #"{"sections": {"q/r": {"expanded": false}}}"#, put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"no section \"q/r\" in schema version 1","errors":[{"pointer":"/sections/q~1r/expanded","code":"unknown-section","detail":"no section \"q/r\" in schema version 1"}]}"#
        ),
        Row(
            name: "PUT disabled section order", schema: ruleSchema, body: #"{"sections": {"locked": {"tabOrder": ["locked.b", "locked.a"]}}}"#,
            put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"section \"locked\" has customization behavior \"disabled\" in the sidebar and cannot be reordered","errors":[{"pointer":"/sections/locked/tabOrder","code":"customization-disabled","detail":"section \"locked\" has customization behavior \"disabled\" in the sidebar and cannot be reordered"}]}"#
        ),
        Row(name: "PUT section order missing", schema: ruleSchema, body: #"{"sections": {"places": {"tabOrder": ["places.a"]}}}"#, put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tabOrder must list all of section \"places\"'s tabs; \"places.b\" is missing","errors":[{"pointer":"/sections/places/tabOrder","code":"invalid-tab-order","detail":"tabOrder must list all of section \"places\"'s tabs; \"places.b\" is missing"}]}"#
        ),
        Row(name: "PUT bar order item", schema: escapingSchema, body: #"{"tabBarOrder": ["c~d", "a/b"]}"#, put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"tab \"a/b\" has customization behavior \"disabled\" in the tab bar and keeps its default position","errors":[{"pointer":"/tabBarOrder/1","code":"not-movable","detail":"tab \"a/b\" has customization behavior \"disabled\" in the tab bar and keeps its default position"}]}"#
        ),
        Row(name: "PUT no visible tab", schema: #"{"items": [{"id": "a/1", "title": "A"}, {"id": "b~1", "title": "B"}]}"#,
            body: #"{"tabs": {"a/1": {"sidebarVisibility": "hidden"}, "b~1": {"sidebarVisibility": "hidden"}}}"#, put: true,
            expected:
                #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"the change would leave no visible tab in the sidebar","errors":[{"pointer":"/tabs/b~01/sidebarVisibility","code":"no-visible-tab","detail":"the change would leave no visible tab in the sidebar"}]}"#
        ),
    ]

    /// The problem document the API answers for what `body` throws.
    static func problem(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "accepted"
        } catch let refusal as RuleRefusal {
            return String(decoding: APIError.refused(refusal).response().body, as: UTF8.self)
        } catch {
            return "unexpected: \(error)"
        }
    }

    @Test("each refusal's problem document, byte for byte", arguments: rows)
    func wire(row: Row) throws {
        let index = try Seeds.index(row.schema)
        let answer = Self.problem {
            if row.put {
                let (document, _) = try Customization.decode(try json(row.body))
                _ = try CustomizationEditor.replace(with: document, index: index)
            } else {
                _ = try CustomizationEditor.apply(try ops(row.body), to: .empty, index: index)
            }
        }
        #expect(answer == row.expected)
    }

    @Test("a whole-result limit names the last operation")
    func limits() throws {
        let index = try Seeds.index(ruleSchema)
        // Data-driven tabs that may move (`mixes` is reorderable), before any list is stored: any id of the prefix.
        let full = (0..<Customization.maxOrderLength).map { Identifier("mix.\($0)") }
        let start = Customization(sections: ["mixes": .init(tabOrder: full)])
        let answer = Self.problem {
            _ = try CustomizationEditor.apply(
                try ops(#"{"operations": [{"op":"resetTabBarOrder"},{"op":"moveTab","section":"mixes","tab":"mix.new","toIndex":0}]}"#), to: start,
                index: index)
        }
        #expect(
            answer
                == #"{"type":"urn:tabstore:problem:rule-violation","title":"Refused by the tab schema's rules","status":422,"detail":"the tab order of section \"mixes\" would hold more than 2000 ids","errors":[{"pointer":"/operations/1","code":"too-many-entries","detail":"the tab order of section \"mixes\" would hold more than 2000 ids"}]}"#
        )
    }
}
