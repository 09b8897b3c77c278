import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TabStoreClient

// An app's life with TabStore: launch, hide and reorder, a conflict from another device, the change feed, a safe
// retry, an offline cold launch, two windows on one file (and a second process refused).
// TABSTORE_URL, TABSTORE_TOKEN (a user token for alice in com.myApp), TABSTORE_STATE (a folder for the state file).

/// One line on standard output, written at once (also into a pipe, and before a crash).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
/// Ends the program with status 1 when what an app relies on did not hold.
func check(_ condition: Bool, _ what: String) {
    if !condition {
        say("FAILED: \(what)")
        exit(1)
    }
}
let environment = ProcessInfo.processInfo.environment
let file = URL(fileURLWithPath: environment["TABSTORE_STATE"] ?? NSTemporaryDirectory() + "tabstore-demo").appendingPathComponent("alice.json")

if CommandLine.arguments.dropFirst().first == "--second-process" {
    do {
        _ = try TabStoreClient(baseURL: URL(string: "http://127.0.0.1:9")!, appId: "com.myApp", userId: "alice") { _ in "" }.offlineQueue(file: file)
        say("  second process: opened the file (should not happen)")
        exit(1)
    } catch {
        say("  second process: \(error.localizedDescription)")
        exit(0)
    }
}

guard let base = environment["TABSTORE_URL"].flatMap(URL.init(string:)), let token = environment["TABSTORE_TOKEN"] else {
    say("set TABSTORE_URL and TABSTORE_TOKEN (scripts/client-example does)")
    exit(2)
}
let bell: TabStoreID = "com.myApp.bell", climate: TabStoreID = "com.myApp.climate", lights: TabStoreID = "com.myApp.lights"
let categories: TabStoreID = "com.myApp.categories", home: TabStoreID = "com.myApp.home"

/// A transport that loses the answer to the next request it is told to (the server applied it; the app never hears).
final class FlakyTransport: TabStoreTransport, @unchecked Sendable {
    // @unchecked: `lose` and `sent` are touched under `lock` only.
    private let base = URLSessionTransport()
    private let lock = NSLock()
    private var lose = 0
    private(set) var sent: [String] = []
    func loseNext() { lock.withLock { lose = 1 } }
    var keys: [String] { lock.withLock { sent } }
    func send(_ request: URLRequest) async throws -> TransportResponse {
        let response = try await base.send(request)
        let lost = lock.withLock { () -> Bool in
            if let key = request.value(forHTTPHeaderField: "Idempotency-Key") { sent.append(key) }
            defer { lose = 0 }
            return lose > 0
        }
        if lost { throw URLError(.networkConnectionLost) }
        return response
    }
    func stream(_ request: URLRequest) async throws -> TransportStream { try await base.stream(request) }
}

func client(_ url: URL = base, transport: any TabStoreTransport = URLSessionTransport()) -> TabStoreClient {
    let quick = Backoff(initial: 0.2, maximum: 1)
    return TabStoreClient(baseURL: url, appId: "com.myApp", userId: "alice",
                          configuration: .init(schemaVersion: 1, transport: transport, feedBackoff: quick, queueBackoff: quick, writeBackoff: quick)) { _ in token }
}
func describe(_ c: Customization) -> String {
    let hidden = c.tabs.filter { $0.value.sidebarVisibility == .hidden }.keys.map(\.string).sorted()
    let order = c.sections[categories]?.tabOrder?.map(\.string) ?? ["builder order"]
    return "revision \(c.revision), hidden \(hidden), categories \(order)"
}
func sidebar(_ layout: TabLayout) -> String {
    layout.sidebar.map { item -> String in
        switch item {
        case .tab(let tab): tab.title
        case .section(let section): section.title + "(" + section.tabs.map(\.title).joined(separator: ",") + ")"
        }
    }.joined(separator: " ")
}

try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
let flaky = FlakyTransport()
let ipad = client(transport: flaky)

say("1. launch")
let queue = try ipad.offlineQueue(file: file)
let launched = try await queue.customization()
say("  customization: \(describe(launched.value)), fromCache \(launched.isFromCache), pending \(launched.hasPendingWrites)")
say("  sidebar: \(sidebar(try await queue.layout(sizeClass: .regular, platform: .iPadOS).value))")

say("2. hide and reorder")
let edited = try await ipad.apply([.setSidebarVisibility(tab: bell, visibility: .hidden), .setTabOrder(section: categories, tabOrder: [lights, climate])])
say("  stored: \(describe(edited))")
do {
    try await ipad.apply([.setSidebarVisibility(tab: home, visibility: .hidden)])
} catch let error as TabStoreError {
    say("  hiding Home: \(error.localizedDescription) [\(error.failureReason ?? "")]")
}

say("3. the feed (Mac app following), and a conflict from another device (the iPhone)")
let events = ipad.updates()
let follower = Task {
    var seen: [String] = []
    for try await change in events {
        seen.append(describe(change))
        say("  feed: \(describe(change))")
        if change.revision >= edited.revision + 1 { break }
    }
    return seen
}
let phone = client()
try await Task.sleep(nanoseconds: 300_000_000)
let fromPhone = try await phone.apply([.setSidebarVisibility(tab: climate, visibility: .hidden)])
say("  iPhone stored: \(describe(fromPhone))")
do {
    try await ipad.apply([.setTabOrder(section: categories, tabOrder: [climate, lights])], ifMatch: edited)
} catch TabStoreError.conflict(let current) {
    say("  iPad's write against revision \(edited.revision): conflict, current is \(describe(current)); rebased on it")
    let rebased = try await ipad.apply([.setTabOrder(section: categories, tabOrder: [climate, lights])], ifMatch: current)
    say("  iPad stored: \(describe(rebased))")
}
_ = try await follower.value

say("4. a safe retry: the answer is lost, the client retries with the same Idempotency-Key")
let before = try await ipad.history(limit: 100).items.count
flaky.loseNext()
let retried = try await ipad.apply([.setSidebarVisibility(tab: bell, visibility: .visible)], idempotencyKey: "demo-retry-1")
let keys = flaky.keys.filter { $0 == "demo-retry-1" }
let added = try await ipad.history(limit: 100).items.count - before
check(keys.count == 2 && added == 1, "a lost answer is retried with its key and applied once")
say("  stored: \(describe(retried)); attempts sent \(keys.count) with key demo-retry-1; new history entries \(added)")

say("5. offline cold launch (the server unreachable), an edit while offline, then back online")
await queue.close()
let offlineClient = client(URL(string: "http://127.0.0.1:9")!)
let offline = try offlineClient.offlineQueue(file: file)
let cold = try await offline.customization()
check(cold.isFromCache && cold.value == retried, "an offline cold launch shows the last served customization")
say("  customization: \(describe(cold.value)), fromCache \(cold.isFromCache), lastSynced \(cold.lastSynced.map { "\($0)" } ?? "never")")
say("  sidebar (kept): \(sidebar(try await offline.layout(sizeClass: .regular, platform: .iPadOS).value))")
try await offline.enqueue([.setSidebarVisibility(tab: lights, visibility: .hidden)])
let shown = await offline.cachedCustomization()
check(shown.hasPendingWrites && shown.value[tab: lights].sidebarVisibility == .hidden, "an offline edit shows at once")
say("  after hiding Lights offline: \(describe(shown.value)), pending \(shown.hasPendingWrites)")
say("  sidebar (local): \(sidebar(try await offline.layout(sizeClass: .regular, platform: .iPadOS).value))")
let status = offlineClient.status
say("  status: \(status.connectivity), pending writes \(status.pendingWrites), last error: \(status.lastError ?? "none")")
await offline.close()
let online = try ipad.offlineQueue(file: file)
let replay = await online.replay()
let synced = try await online.customization()
check(replay.remaining == 0 && !synced.isFromCache && !synced.hasPendingWrites && synced.value[tab: lights].sidebarVisibility == .hidden,
      "the offline edit reaches the server")
say("  back online: replayed \(replay.events.count), remaining \(replay.remaining); \(describe(synced.value)), fromCache \(synced.isFromCache), pending \(synced.hasPendingWrites)")

say("6. two windows on one file, and a second process")
let window1 = try ipad.offlineQueue(file: file)
let window2 = try client().offlineQueue(file: file)
say("  same queue: \(window1 === window2)")
try await window1.enqueue([.setSidebarVisibility(tab: lights, visibility: .visible)])
try await window2.enqueue([.setSidebarVisibility(tab: climate, visibility: .visible)])
check(window1 === window2, "two windows share one queue")
check(await window1.pending.count == 2, "neither window's write is lost")
say("  pending seen by window 1: \(await window1.pending.count), by window 2: \(await window2.pending.count)")
let helper = Process()
helper.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
helper.arguments = ["--second-process"]
try helper.run()
helper.waitUntilExit()
check(helper.terminationStatus == 0, "a second process is refused the file")
let both = await window1.replay()
check(both.events.count == 2 && both.remaining == 0, "both windows' writes are applied")
say("  replayed \(both.events.count): \(describe(try await ipad.customization()))")
say("  status: \(ipad.status.connectivity), pending writes \(ipad.status.pendingWrites)")
await window1.close()
say("done")
