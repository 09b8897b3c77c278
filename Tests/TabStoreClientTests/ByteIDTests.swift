import Foundation
import Testing
@testable import TabStoreClient

/// Ids are bytes in the client as on the server: two ids that differ only in Unicode normalization (one Swift
/// String) stay two ids in equality, hashing, maps, JSON member names, the queue file's owner and on the wire.
@Suite("TabStoreClient ids are bytes", .serialized)
struct ByteIDTests {
    static let composed: TabStoreID = "caf\u{E9}"  // é precomposed
    static let decomposed: TabStoreID = "cafe\u{301}"  // e + COMBINING ACUTE ACCENT
    static let kelvin: TabStoreID = "\u{212A}ate"  // KELVIN SIGN

    @Test("equality, hashing and order are over the bytes; a literal and a string make the same id")
    func identity() throws {
        #expect(Self.composed.string == Self.decomposed.string)  // what Swift says; not what the server says
        #expect(Self.composed != Self.decomposed && Self.kelvin != "Kate")
        #expect(Set([Self.composed, Self.decomposed, Self.kelvin, "Kate", TabStoreID("caf\u{E9}")]).count == 4)
        #expect([Self.composed: 1, Self.decomposed: 2].count == 2)
        #expect(TabStoreID("com.myApp.bell") == "com.myApp.bell" && TabStoreID(utf8: Array("caf\u{E9}".utf8)) == Self.composed)
        #expect(TabStoreID(utf8: [0x63, 0xFF]) == nil)
        #expect([Self.composed, Self.decomposed, "b", "B"].sorted() == ["B", "b", Self.decomposed, Self.composed])  // "caf" then 65 < C3
        let decoded = try JSONDecoder().decode([TabStoreID].self, from: JSONEncoder().encode([Self.composed, Self.decomposed]))
        #expect(decoded == [Self.composed, Self.decomposed] && decoded.map { Array($0.utf8) } == [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
        #expect(Self.decomposed.debugDescription == #"TabStoreID("cafe\u{301}")"#)
    }

    /// A stored customization whose maps hold both spellings of "café" (and of "sé"), as the server sends it.
    static let document = """
        {"appId":"com.myApp","userId":"caf\u{E9}","revision":3,"schemaVersion":1,"updatedAt":"2026-11-29T22:00:00Z",\
        "tabs":{"caf\u{E9}":{"sidebarVisibility":"hidden","tabBarVisibility":"automatic"},\
        "cafe\u{301}":{"sidebarVisibility":"visible","tabBarVisibility":"hidden"}},\
        "sections":{"s\u{E9}":{"tabOrder":["cafe\u{301}","caf\u{E9}"]},"se\u{301}":{"tabOrder":null,"expanded":false}},\
        "tabBarOrder":["caf\u{E9}","cafe\u{301}"],\
        "dynamicTabs":{"s\u{E9}":[{"id":"caf\u{E9}.1","title":"One"}],"se\u{301}":[{"id":"cafe\u{301}.1","title":"Two"}]}}
        """

    static func contains(_ data: Data, _ text: String) -> Bool {
        let needle = Array(text.utf8), bytes = [UInt8](data)
        guard needle.count <= bytes.count else { return false }
        return (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test("a customization with both spellings as member names decodes to two entries and encodes back byte for byte")
    func customizationDocument() throws {
        let sectionComposed: TabStoreID = "s\u{E9}", sectionDecomposed: TabStoreID = "se\u{301}"
        let decoded = try TabStoreJSON.decode(Customization.self, from: Data(Self.document.utf8))
        #expect(decoded.userId == Self.composed && decoded.userId != Self.decomposed)
        #expect(decoded.tabs.count == 2)
        #expect(decoded.tabs[Self.composed] == TabChoice(sidebarVisibility: .hidden))
        #expect(decoded.tabs[Self.decomposed] == TabChoice(sidebarVisibility: .visible, tabBarVisibility: .hidden))
        #expect(decoded.sections.count == 2 && decoded.sections[sectionComposed]?.tabOrder == [Self.decomposed, Self.composed])
        #expect(decoded.sections[sectionDecomposed] == SectionChoice(tabOrder: nil, expanded: false))
        #expect(decoded.dynamicTabs?[sectionComposed]?.map(\.id) == ["caf\u{E9}.1"] && decoded.dynamicTabs?[sectionDecomposed]?.map(\.id) == ["cafe\u{301}.1"])
        #expect(decoded.tabBarOrder == [Self.composed, Self.decomposed])

        let encoded = try TabStoreJSON.encode(decoded)
        // Sorted by name; the reserved spelling (hex of the bytes) puts them in byte order: "caf" then 65 < C3.
        #expect(Self.contains(encoded, """
            "tabs":{"cafe\u{301}":{"sidebarVisibility":"visible","tabBarVisibility":"hidden"},\
            "caf\u{E9}":{"sidebarVisibility":"hidden","tabBarVisibility":"automatic"}}
            """))
        #expect(Self.contains(encoded, #""sections":{"se\#u{301}":{"expanded":false,"tabOrder":null},"s\#u{E9}":{"tabOrder":["cafe\#u{301}","caf\#u{E9}"]}}"#))
        #expect(Self.contains(encoded, #""dynamicTabs":{"se\#u{301}":[{"id":"cafe\#u{301}.1","title":"Two"}],"s\#u{E9}":[{"id":"caf\#u{E9}.1","title":"One"}]}"#))
        #expect(!Self.contains(encoded, "tabstore-id") && !Self.contains(encoded, "\\u"))
        #expect(try TabStoreJSON.decode(Customization.self, from: encoded) == decoded)
        // What PUT sends keeps both too.
        let body = try TabStoreJSON.encode(Customization.Choices(decoded))
        #expect(try TabStoreJSON.decode(Customization.self, from: Self.asCustomization(body)).tabs == decoded.tabs)

        // Escaped member names are the same ids (replaced as bytes: String's replacingOccurrences would match both).
        let escaped = Self.replacing(Self.replacing(Data(Self.document.utf8), "\"caf\u{E9}\":{", "\"caf\\u00e9\":{"),
                                     "\"cafe\u{301}\":{", "\"cafe\\u0301\":{")
        #expect(Self.contains(escaped, #""caf\u00e9":{"#) && Self.contains(escaped, #""cafe\u0301":{"#))
        #expect(try TabStoreJSON.decode(Customization.self, from: escaped) == decoded)

        // A plain JSONEncoder would keep one of them: it throws instead.
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(decoded) }
        #expect(throws: (any Error).self) { try TabStoreJSON.decode(Customization.self, from: Data(Self.document.utf8.dropLast())) }
    }

    /// `data` with the first occurrence of `old`'s bytes replaced by `new`'s.
    static func replacing(_ data: Data, _ old: String, _ new: String) -> Data {
        let bytes = [UInt8](data), needle = Array(old.utf8)
        guard let start = (0...(bytes.count - needle.count)).first(where: { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }) else {
            return data
        }
        return Data(bytes[..<start] + Array(new.utf8) + bytes[(start + needle.count)...])
    }

    /// A PUT body with server-owned members added in front, to decode it as a customization.
    static func asCustomization(_ body: Data) -> Data {
        Data(Array(#"{"appId":"a","userId":"u","revision":1,"schemaVersion":1,"updatedAt":null,"#.utf8) + [UInt8](body).dropFirst())
    }

    @Test("a layout's selectionFallback keeps both spellings")
    func layoutFallback() throws {
        let json = """
            {"appId":"com.myApp","userId":"u","sizeClass":"regular","revision":1,"schemaVersion":1,"customizationApplied":true,\
            "sidebar":[{"kind":"tab","id":"home","title":"Home"}],"tabBar":[],"pinned":[],"more":[],\
            "hidden":["caf\u{E9}","cafe\u{301}"],"selectionFallback":{"caf\u{E9}":"home","cafe\u{301}":"caf\u{E9}"}}
            """
        let layout = try TabStoreJSON.decode(TabLayout.self, from: Data(json.utf8))
        #expect(layout.hidden == [Self.composed, Self.decomposed] && layout.selectionFallback.count == 2)
        #expect(layout.fallback(for: Self.composed) == "home" && layout.fallback(for: Self.decomposed) == Self.composed)
        #expect(try TabStoreJSON.decode(TabLayout.self, from: TabStoreJSON.encode(layout)) == layout)
    }

    @Test("member names: only names Foundation would merge are reserved, in their own object; a reserved-looking name stays itself")
    func memberNames() throws {
        for plain in [#"{"a":"x\":y","caf\#u{E9}":1,"b":["caf\#u{E9}","cafe\#u{301}"]}"#, #"{"x":{"caf\#u{E9}":1},"y":{"cafe\#u{301}":2}}"#,
                      #"{"caf\u00e9":1,"n\u00e9":[{"k":"v"}]}"#] {
            #expect(MemberNames.reserveAmbiguous(Data(plain.utf8)) == Data(plain.utf8), "\(plain)")
        }
        let nul = #"{"\u0000tabstore-id:41":1,"A":2,"\u0000x":3}"#
        let map = try TabStoreJSON.decode(IDMap<Int>.self, from: Data(nul.utf8)).dictionary
        #expect(map == ["\u{0}tabstore-id:41": 1, "A": 2, "\u{0}x": 3])
        #expect(try TabStoreJSON.decode(IDMap<Int>.self, from: TabStoreJSON.encode(IDMap(map))).dictionary == map)
        let both = #"{"caf\#u{E9}":1,"cafe\#u{301}":2,"\#u{212A}":3,"K":4}"#
        #expect(try TabStoreJSON.decode(IDMap<Int>.self, from: Data(both.utf8)).dictionary
                == [Self.composed: 1, Self.decomposed: 2, "\u{212A}": 3, "K": 4])
    }

    @Test("a queue file written for one spelling of a user id is refused for the other")
    func queueOwner() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tabstore-queue-\(UUID().uuidString)/queue.json")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let base = URL(string: "http://127.0.0.1:9")!
        let owner = TabStoreClient(baseURL: base, appId: "com.myApp", userId: Self.composed) { _ in "t" }
        try await owner.offlineQueue(file: file).enqueue([.setSidebarVisibility(tab: Self.decomposed, visibility: .hidden)])
        for other in [Self.decomposed, "\u{212A}ate", "Kate"] as [TabStoreID] {
            let client = TabStoreClient(baseURL: base, appId: "com.myApp", userId: other) { _ in "t" }
            #expect(performing: { try client.offlineQueue(file: file) }, throws: { error in
                guard case OfflineQueueError.belongsTo(let appId, let userId) = error else { return false }
                return appId == "com.myApp" && userId == Self.composed
            })
        }
        let reopened = try owner.offlineQueue(file: file)
        #expect(await reopened.pending.map(\.operations) == [[.setSidebarVisibility(tab: Self.decomposed, visibility: .hidden)]])
        #expect(await reopened.pending.first?.operations != [.setSidebarVisibility(tab: Self.composed, visibility: .hidden)])
    }

    /// Two tabs and two section tabs whose ids differ only in normalization: two tabs each for the server.
    static let schema = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house"},
          {"kind": "tab", "id": "caf\u{E9}", "title": "Café (composed)", "systemImage": "cup.and.saucer"},
          {"kind": "tab", "id": "cafe\u{301}", "title": "Café (decomposed)", "systemImage": "mug"},
          {"kind": "section", "id": "s\u{E9}", "title": "Section", "tabs": [
            {"kind": "tab", "id": "x\u{E9}", "title": "X composed", "systemImage": "x.circle"},
            {"kind": "tab", "id": "xe\u{301}", "title": "X decomposed", "systemImage": "x.square"}]}
        ]}
        """

    @Test("against the server: both spellings are stored, answered and laid out as two tabs, for the right one of two users")
    func serverRoundTrip() async throws {
        let section: TabStoreID = "s\u{E9}", xComposed: TabStoreID = "x\u{E9}", xDecomposed: TabStoreID = "xe\u{301}"
        try await withServer { server in
            let app = try await server.makeApp(schema: Self.schema)
            let client = app.client(server, user: Self.composed.string)
            let operations: [TabOperation] = [
                .setSidebarVisibility(tab: Self.composed, visibility: .hidden),
                .setSidebarVisibility(tab: Self.decomposed, visibility: .visible),
                .setTabBarVisibility(tab: Self.decomposed, visibility: .hidden),
                .setTabOrder(section: section, tabOrder: [xDecomposed, xComposed]),
            ]
            let written = try await client.apply(operations)
            #expect(written.userId == Self.composed && written.revision == 1 && written.tabs.count == 2)
            #expect(written.tabs[Self.composed] == TabChoice(sidebarVisibility: .hidden))
            #expect(written.tabs[Self.decomposed] == TabChoice(sidebarVisibility: .visible, tabBarVisibility: .hidden))
            #expect(written.sections[section]?.tabOrder == [xDecomposed, xComposed])
            #expect(try await client.customization() == written)  // a 304 serves the cached bytes
            #expect(try await app.client(server, user: Self.composed.string).customization() == written)  // read afresh
            #expect(try await client.history().items.first?.operations == operations)

            let layout = try await client.layout(sizeClass: .regular)
            #expect(layout.hidden == [Self.composed] && layout.fallback(for: Self.composed) != nil && layout.fallback(for: Self.decomposed) == nil)
            #expect(layout.sidebar.map(\.id) == ["com.myApp.home", Self.decomposed, section])
            guard case .section(let laidOut)? = layout.sidebar.last else { Issue.record("no section: \(layout.sidebar)"); return }
            #expect(laidOut.tabs.map(\.id) == [xDecomposed, xComposed])

            // The other spelling of the user is another person.
            let other = app.client(server, user: Self.decomposed.string)
            #expect(try await other.customization().revision == 0)

            // PUT the choices whole with the two swapped; a snapshot's edit names both.
            var swapped = written
            swapped.tabs = [Self.composed: TabChoice(sidebarVisibility: .visible), Self.decomposed: TabChoice(sidebarVisibility: .hidden)]
            let replaced = try await client.replace(swapped)
            #expect(replaced.revision == 2 && replaced.tabs == swapped.tabs)
            #expect(ChoicesSnapshot(written).operations(to: ChoicesSnapshot(replaced)) == [
                .setSidebarVisibility(tab: Self.decomposed, visibility: .hidden),
                .setTabBarVisibility(tab: Self.decomposed, visibility: .automatic),
                .setSidebarVisibility(tab: Self.composed, visibility: .visible),
            ])
            #expect(try await client.layout(sizeClass: .regular).hidden == [Self.decomposed])
        }
    }
}
