import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport

@Suite("Entity-tag lists (RFC 9110 §8.8.3, §13.1.1-2): parsing and comparison")
struct EntityTagTests {
    struct Case: Sendable, CustomStringConvertible {
        let fields: [String]
        /// nil: malformed.
        let parsed: EntityTagCondition?
        var description: String { fields.description }
    }

    static func strong(_ opaque: String) -> EntityTag { EntityTag(opaque) }
    static func weak(_ opaque: String) -> EntityTag { EntityTag(opaque, weak: true) }

    static let cases: [Case] = [
        Case(fields: ["*"], parsed: .any),
        Case(fields: [" * "], parsed: .any),
        Case(fields: [#""1.2""#], parsed: .tags([strong("1.2")])),
        Case(fields: [#"W/"1.2""#], parsed: .tags([weak("1.2")])),
        Case(fields: [#""""#], parsed: .tags([strong("")])),
        Case(fields: [#""a", W/"b" ,"c""#], parsed: .tags([strong("a"), weak("b"), strong("c")])),
        Case(fields: [#""a""#, #""b""#], parsed: .tags([strong("a"), strong("b")])),
        // Empty list members are allowed (§5.6.1); a comma inside an opaque-tag is a character of it.
        Case(fields: [#", "a",, "b" ,"#], parsed: .tags([strong("a"), strong("b")])),
        Case(fields: [#""a,b", "c""#], parsed: .tags([strong("a,b"), strong("c")])),
        Case(fields: ["\"caf\u{E9}\""], parsed: .tags([strong("caf\u{E9}")])),  // obs-text
        // An empty list is grammatical (#entity-tag allows zero members): it names nothing.
        Case(fields: [""], parsed: .tags([])),
        Case(fields: [" , ,"], parsed: .tags([])),
        // Malformed.
        Case(fields: ["1.2"], parsed: nil),
        Case(fields: [#""1.2"#], parsed: nil),
        Case(fields: [#"1.2""#], parsed: nil),
        Case(fields: [#"w/"1.2""#], parsed: nil),
        Case(fields: [#"W/ "1.2""#], parsed: nil),
        Case(fields: [#""a" "b""#], parsed: nil),
        Case(fields: [#""a"b"#], parsed: nil),
        Case(fields: ["\"a b\""], parsed: nil),
        Case(fields: ["\"a\u{7F}\""], parsed: nil),
        Case(fields: ["\"a\tb\""], parsed: nil),
        Case(fields: [#"*, "a""#], parsed: nil),
        Case(fields: ["*", #""a""#], parsed: nil),
        Case(fields: ["*", "*"], parsed: nil),
        Case(fields: ["**"], parsed: nil),
    ]

    @Test("parse", arguments: cases)
    func parse(_ testCase: Case) {
        let result = try? EntityTagCondition.parse(testCase.fields)
        #expect(result == testCase.parsed)
        if testCase.parsed == nil {
            #expect(throws: EntityTagCondition.Malformed.self) { try EntityTagCondition.parse(testCase.fields) }
        }
    }

    @Test("an absent header is no condition")
    func absent() throws {
        #expect(try EntityTagCondition.parse([]) == nil)
    }

    @Test("strong comparison for If-Match, weak for If-None-Match; * needs a current representation")
    func comparison() {
        let current = EntityTag("3.2")
        let table: [(EntityTagCondition, exists: Bool, strong: Bool, weak: Bool)] = [
            (.tags([EntityTag("3.2")]), true, true, true),
            (.tags([EntityTag("3.2", weak: true)]), true, false, true),
            (.tags([EntityTag("3.1"), EntityTag("3.2")]), true, true, true),
            (.tags([EntityTag("3"), EntityTag("3.2.compact")]), true, false, false),
            (.any, true, true, true),
            (.any, false, false, false),
            // A listed tag is compared whatever `exists` says (only `*` asks whether there is one).
            (.tags([EntityTag("3.2")]), false, true, true),
        ]
        for (condition, exists, strong, weak) in table {
            #expect(condition.matchesStrongly(current, exists: exists) == strong, "\(condition) exists: \(exists)")
            #expect(condition.matchesWeakly(current, exists: exists) == weak, "\(condition) exists: \(exists)")
        }
        #expect(!EntityTag("3.2", weak: true).strongMatches(EntityTag("3.2", weak: true)))
        // Opaque tags are bytes: canonically equivalent spellings are different tags.
        #expect(!EntityTag("\u{E9}").weakMatches(EntityTag("e\u{301}")))
        #expect(EntityTag("a", weak: true).text == #"W/"a""#)
    }

    @Test("If-Match before If-None-Match; a matching If-None-Match is 304 on GET, 412 on writes")
    func evaluationOrder() throws {
        func conditions(_ headers: [(String, String)]) throws -> Preconditions {
            try Preconditions(TestRequest.get("/").headers(headers).httpRequest)
        }
        let current = EntityTag("1.1")
        #expect(try conditions([]).evaluate(current, exists: true, safe: true) == .proceed)
        #expect(try conditions([("If-None-Match", #""1.1""#)]).evaluate(current, exists: true, safe: true) == .notModified)
        #expect(try conditions([("If-None-Match", #""1.1""#)]).evaluate(current, exists: true, safe: false) == .failed)
        #expect(try conditions([("If-Match", #""0.1""#), ("If-None-Match", #""1.1""#)]).evaluate(current, exists: true, safe: true) == .failed)
        #expect(try conditions([("If-None-Match", "*")]).evaluate(current, exists: false, safe: false) == .proceed)
        #expect(throws: APIError.self) { try conditions([("If-Match", "1.1")]) }
        #expect(throws: APIError.self) { try conditions([("If-None-Match", "W/")]) }
    }
}
