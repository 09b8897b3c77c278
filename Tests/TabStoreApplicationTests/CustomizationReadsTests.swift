import Foundation
import Testing
@testable import TabStoreApplication
@testable import TabStoreDomain
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// The read use cases driven without HTTP: a customization and its layouts, a history page, a revert's choices,
/// an export and an erase, over a real SQLite store in a temporary folder.
@Suite("Application layer: reads, history, export and erase without HTTP")
struct CustomizationReadsTests {
    struct Fixture {
        let writes: CustomizationWritesTests.Fixture
        let services: ApplicationServices
        var key: UserKey { writes.key }
        var schema: SchemaIndex { writes.schema }

        func hide(_ tab: String, _ visibility: Visibility = .hidden) async throws -> WrittenCustomization {
            let outcome = try await services.writes.edit(writes.request(), kind: CustomizationWrites.Kind(change: .patch)) { current, schema in
                try CustomizationEditor.apply([.setVisibility(.sidebar, tab: Identifier(tab), visibility)], to: current, index: schema)
            }
            return try CustomizationWritesTests.written(outcome)
        }

        func object(_ bytes: [UInt8]) throws -> JSONObject {
            guard case .object(let object) = try JSONParser.parse(bytes) else { throw TestFailure("not an object: \(bytes.count) bytes") }
            return object
        }
    }

    static func fixture(_ dir: TemporaryDirectory) async throws -> Fixture {
        let writes = try await CustomizationWritesTests.fixture(dir)
        let services = ApplicationServices(store: writes.store, configuration: ApplicationServices.Configuration(
            writes: writes.writes.limits, maxFollowersPerUser: 4, maxLongPolls: 4, representationCacheBytes: 1 << 20, documentCacheBytes: 1 << 20,
            historyPageCacheBytes: 1 << 20, historyReads: HistoryReads.Limits()), logger: Logger(minimum: .error))
        return Fixture(writes: writes, services: services)
    }

    @Test("a user with nothing stored reads the empty customization at revision 0; a written one reads its stored bytes")
    func customizationDocuments() async throws {
        let dir = TemporaryDirectory()
        let fixture = try await Self.fixture(dir)
        let reads = fixture.services.reads
        #expect(try await reads.record(fixture.key) == nil)
        #expect(try reads.recordNow(fixture.key)?.record == nil)
        let empty = try fixture.object(try #require(try reads.customizationDocument(nil, fixture.key, schema: fixture.schema)))
        #expect(empty["revision"] == .integer(0) && empty["userId"] == .string("alice"))

        let written = try await fixture.hide("bell")
        let record = try #require(try await reads.record(fixture.key))
        #expect(try record.revision == written.revision && reads.recordNow(fixture.key)?.record?.revision == written.revision)
        // Stored under the version served: the stored bytes themselves, nothing derived or kept.
        #expect(try reads.customizationDocument(record, fixture.key, schema: fixture.schema) == record.document)
        #expect(reads.representations.statistics.entries == 1)  // only the empty customization above
    }

    @Test("a layout is made once per tag and then served from memory; not laid out when asked to wait")
    func layouts() async throws {
        let dir = TemporaryDirectory()
        let fixture = try await Self.fixture(dir)
        let reads = fixture.services.reads
        _ = try await fixture.hide("bell")
        let record = try await reads.record(fixture.key)
        let request = LayoutRequest(sizeClass: .regular, platform: .iPadOS, style: nil)
        #expect(CustomizationReads.layoutTag(revision: 1, schemaVersion: 1, request: request) == "1.1.regular.iPadOS")
        #expect(try reads.layoutDocument(record, fixture.key, schema: fixture.schema, request: request, layOutLater: true) == nil)
        let layout = try #require(try reads.layoutDocument(record, fixture.key, schema: fixture.schema, request: request))
        #expect(try fixture.object(layout)["revision"] == .integer(1))
        // Kept: asked to wait now, it is answered from memory.
        #expect(try reads.layoutDocument(record, fixture.key, schema: fixture.schema, request: request, layOutLater: true) == layout)
        let compact = LayoutRequest(sizeClass: .compact, platform: nil, style: nil)
        #expect(try reads.layoutDocument(record, fixture.key, schema: fixture.schema, request: compact, layOutLater: true) == nil)
    }

    @Test("a history page lists the kept revisions newest first and says where the next one starts; a revert's choices come from one")
    func historyAndRevert() async throws {
        let dir = TemporaryDirectory()
        let fixture = try await Self.fixture(dir)
        for (tab, visibility) in [("bell", Visibility.hidden), ("cart", .hidden), ("bell", .visible)] { _ = try await fixture.hide(tab, visibility) }
        let page = try fixture.object(try await fixture.services.historyPage(fixture.key, under: nil, before: nil, limit: 2))
        guard case .array(let items)? = page["items"] else { throw TestFailure("no items") }
        let revisions = items.compactMap { item -> Int? in
            guard case .object(let object) = item, case .integer(let revision)? = object["revision"] else { return nil }
            return revision
        }
        #expect(revisions == [3, 2] && page["nextBefore"] == .integer(2))
        let older = try fixture.object(try await fixture.services.historyPage(fixture.key, under: nil, before: 2, limit: 2))
        #expect(older["nextBefore"] == .null)

        #expect(try await fixture.services.revertChoices(fixture.key, toRevision: 0) == .empty)
        let first = try #require(try await fixture.services.revertChoices(fixture.key, toRevision: 1))
        #expect(first.tabs[Identifier("bell")]?.sidebarVisibility == .hidden && first.tabs[Identifier("cart")] == nil)
        #expect(try await fixture.services.revertChoices(fixture.key, toRevision: 99) == nil)
    }

    @Test("an export holds the customization as stored and every kept revision; an erase everywhere leaves nothing to read")
    func exportAndErase() async throws {
        let dir = TemporaryDirectory()
        let fixture = try await Self.fixture(dir)
        _ = try await fixture.hide("bell")
        _ = try await fixture.hide("cart")
        let entry = try #require(try await fixture.services.apps.entry(Identifier("shop")))
        let export = try fixture.object(try await fixture.services.export(Identifier("alice"), in: entry))
        #expect(export["appId"] == .string("shop") && export["userId"] == .string("alice"))
        guard case .array(let history)? = export["history"], case .object(let customization)? = export["customization"] else {
            throw TestFailure("export without history or customization")
        }
        #expect(history.count == 2 && customization["revision"] == .integer(2))
        let everywhere = try fixture.object(try await fixture.services.exportEverywhere(Identifier("alice")))
        guard case .array(let apps)? = everywhere["apps"] else { throw TestFailure("no apps") }
        #expect(apps.count == 1)

        try await fixture.services.eraseEverywhere(Identifier("alice"))
        #expect(try await fixture.services.reads.record(fixture.key) == nil)
        let after = try fixture.object(try await fixture.services.exportEverywhere(Identifier("alice")))
        #expect(after["apps"] == .array([]))
    }
}
