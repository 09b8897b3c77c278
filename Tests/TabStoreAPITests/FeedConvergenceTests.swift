import Dispatch
import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreSupport
import TabStoreTestSupport

/// Many devices of one person writing and following at once: every device converges to the last committed
/// revision (docs/devices.md "Follow changes: the change feed"), whatever the interleaving, also a device that drops and resumes with Last-Event-ID.
@Suite("Change feed convergence (randomized)", .serialized)
struct FeedConvergenceTests {
    /// SplitMix64: a seeded generator, so a failing interleaving of writes can be named by its seed.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// What one device saw: the ids of its events in order, and the last event's document.
    struct Seen: Sendable {
        var ids: [String] = []
        var lastData: String?
        var reconnects = 0
    }

    /// Follows until `target` (set once the writes are done) is the last id seen, reconnecting once after
    /// `dropAfter` events with the last id as Last-Event-ID.
    static func follow(port: Int, path: String, token: String, dropAfter: Int?, target: Locked<String?>) throws -> Seen {
        var seen = Seen()
        var client = try SSEClient(port: port, TestRequest.get(path).bearer(token))
        // The writers may take long on a loaded machine: the wait for the last event is bounded from when the writes
        // are done (30 s), and the whole follow by a safety net (5 min), never by how fast the writes go.
        let start = DispatchTime.now().uptimeNanoseconds
        var deadline = start + 300_000_000_000
        var targetSeen = false
        while DispatchTime.now().uptimeNanoseconds < deadline {
            if let wanted = target.withLock({ $0 }) {
                if seen.ids.last == wanted { return seen }
                if !targetSeen {
                    targetSeen = true
                    deadline = min(deadline, DispatchTime.now().uptimeNanoseconds + 30_000_000_000)
                }
            }
            if let drop = dropAfter, seen.reconnects == 0, seen.ids.count == drop, let last = seen.ids.last {
                client.disconnect()
                client = try SSEClient(port: port, TestRequest.get(path).bearer(token).header("Last-Event-ID", last))
                seen.reconnects += 1
            }
            guard let event = client.nextEvent(timeout: 0.2) else { continue }
            seen.ids.append(event.id ?? "?")
            seen.lastData = event.data
        }
        return seen
    }

    static func revision(_ id: String) -> Int { Int(id.split(separator: ".").first ?? "") ?? -1 }

    @Test("devices writing and following one user all converge to the last committed revision", arguments: [UInt64(15), 2026, 777])
    func converge(seed: UInt64) async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let path = creds.customization + "/events"
            let target = Locked<String?>(nil)
            let devices = 6
            let port = live.port
            let token = creds.userToken
            let followers = (0..<devices).map { device in
                Task {
                    try await offPool { try Self.follow(port: port, path: path, token: token, dropAfter: device % 2 == 1 ? 2 : nil, target: target) }
                }
            }
            try await waitUntil { live.service.api.followers.streams == devices }
            // Every device writes its own random toggles (Home is never hidden, so a tab always stays visible).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in 0..<devices {
                    group.addTask {
                        var random = SeededGenerator(state: seed &* 31 &+ UInt64(device))
                        for _ in 0..<8 {
                            let tab = ["bell", "climate", "lights"].randomElement(using: &random)!
                            let visibility = ["hidden", "visible", "automatic"].randomElement(using: &random)!
                            let answer = try await live.send(.patch(creds.customization).bearer(token).json(Sync.visibility(tab, visibility)))
                            #expect(answer.status == 200, "seed \(seed)")
                            try await Task.sleep(for: .milliseconds(Int.random(in: 0...15, using: &random)))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let final = try await live.send(.get(creds.customization).bearer(token))
            let finalId = String(final.etag!.dropFirst().dropLast())
            target.withLock { $0 = finalId }
            for (device, follower) in followers.enumerated() {
                let seen = try await follower.value
                #expect(seen.ids.last == finalId, "device \(device), seed \(seed): saw \(seen.ids)")
                #expect(seen.lastData == final.text, "device \(device), seed \(seed)")
                // In commit order: revisions only grow, and none is sent twice (a resume sends nothing it had).
                let revisions = seen.ids.map(Self.revision)
                #expect(zip(revisions, revisions.dropFirst()).allSatisfy { $0 < $1 }, "device \(device), seed \(seed): \(seen.ids)")
                if device % 2 == 1 { #expect(seen.reconnects == 1, "device \(device) resumed") }
            }
        }
    }
}
