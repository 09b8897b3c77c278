import Foundation
import Synchronization
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreSupport

/// Shared by the issue 15 tests (idempotency, history, export and erase, long polls, the change feed).
package enum Sync {
    /// A PATCH body setting one tab's sidebar visibility (the fixture schema's tabs: com.myApp.home, .bell,
    /// .climate, .lights).
    package static func visibility(_ tab: String, _ visibility: String) -> String {
        #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.\#(tab)", "visibility": "\#(visibility)"}]}"#
    }

    package static func hide(_ tab: String) -> String { visibility(tab, "hidden") }

    /// The tabs a customization answer (or an embedded customization) hides in the sidebar, sorted.
    package static func hidden(_ value: JSONValue?) -> [String] {
        guard case .object(let object)? = value, case .object(let tabs)? = object["tabs"] else { return [] }
        return tabs.members.compactMap { member in
            guard case .object(let entry) = member.value, entry["sidebarVisibility"] == .string("hidden") else { return nil }
            return member.key
        }.sorted()
    }

    package static func hidden(_ response: TestResponse) -> [String] { hidden(try? response.json()) }
}

extension TestResponse {
    /// The `revision` member of a customization answer.
    package var revision: Int? {
        guard case .integer(let revision)? = field("revision") else { return nil }
        return revision
    }

    /// The value of one metric line (`name value`) in a `/metrics` answer.
    package func metric(_ name: String) -> Int? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.dropFirst(name.count + 1)) }
    }
}

extension JSONValue {
    /// A member of an object; nil for anything else.
    package subscript(member: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[member]
    }

    package var items: [JSONValue] {
        guard case .array(let items) = self else { return [] }
        return items
    }

    package var integer: Int? {
        guard case .integer(let value) = self else { return nil }
        return value
    }
}

/// A clock a test moves by hand (seconds since 1970), for key expiry.
package final class TestClock: Sendable {
    private let seconds: Atomic<Int>

    package init(_ start: Int = Int(Date().timeIntervalSince1970)) { seconds = Atomic(start) }

    package var now: Int { seconds.load(ordering: .relaxed) }

    package func advance(_ by: Int) { seconds.add(by, ordering: .relaxed) }
}
