import Dispatch
import Foundation
import TabStoreStorage
import TabStoreStore
import TabStoreSupport

/// `tabstore-bench-storage`: committed single-row writes per second with 1, 8 and 64 concurrent
/// writers, with and without group commit, and point reads per second, on a scratch database in the
/// given folder (so it measures that disk). Prints a markdown table.
enum StorageBenchmark {
    static func run(directory: String, seconds: Double, synchronousFull: Bool) async throws -> String {
        var lines = ["| durability | group commit | writers | commits/s | mean batch |", "|---|---|---|---|---|"]
        for groupCommit in [true, false] {
            for writers in [1, 8, 64] {
                let (rate, batch) = try await writes(directory: directory, groupCommit: groupCommit, writers: writers,
                                                     seconds: seconds, synchronousFull: synchronousFull)
                lines.append("| \(synchronousFull ? "FULL" : "NORMAL") | \(groupCommit ? "on" : "off") | \(writers) | \(Int(rate)) | \(String(format: "%.1f", batch)) |")
            }
        }
        let reads = try await pointReads(directory: directory, seconds: seconds)
        lines.append("")
        lines.append("Point reads (primary key, 10,000 rows, 4 reader threads): \(Int(reads))/s")
        return lines.joined(separator: "\n")
    }

    private static func scratchStore(_ directory: String, groupCommit: Bool, synchronousFull: Bool, onBatch: @escaping @Sendable (Int, Double) -> Void = { _, _ in }) throws -> (SQLiteStore, String) {
        let path = (directory as NSString).appendingPathComponent("bench-\(UUID().uuidString).sqlite")
        var configuration = SQLiteStore.Configuration(path: path)
        configuration.groupCommit = groupCommit
        configuration.synchronousFull = synchronousFull
        configuration.onBatch = onBatch
        return (try SQLiteStore(configuration: configuration), path)
    }

    private static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private static func writes(directory: String, groupCommit: Bool, writers: Int, seconds: Double, synchronousFull: Bool) async throws -> (Double, Double) {
        let batches = BatchCounter()
        let (store, path) = try scratchStore(directory, groupCommit: groupCommit, synchronousFull: synchronousFull) { size, _ in batches.add(size) }
        defer { remove(path) }
        _ = try await store.createApp(id: "bench", name: "bench", signingSecret: "s", createdAt: "t")
        let document = Array(String(repeating: "x", count: 300).utf8)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let started = DispatchTime.now().uptimeNanoseconds
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var count = 0
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        let user = "user-\(writer)-\(count % 100)"
                        _ = try await store.updateCustomization(appId: "bench", userId: user, expectedRevision: nil) { current in
                            CustomizationRecord(appId: "bench", userId: user, revision: (current?.revision ?? 0) + 1, schemaVersion: 1, document: document, updatedAt: "t")
                        }
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        await store.close()
        return (Double(total) / elapsed, batches.mean)
    }

    private static func pointReads(directory: String, seconds: Double) async throws -> Double {
        let (store, path) = try scratchStore(directory, groupCommit: true, synchronousFull: false)
        defer { remove(path) }
        _ = try await store.createApp(id: "bench", name: "bench", signingSecret: "s", createdAt: "t")
        let document = Array(String(repeating: "x", count: 300).utf8)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in 0..<10_000 {
                group.addTask {
                    _ = try await store.updateCustomization(appId: "bench", userId: "u\(user)", expectedRevision: nil) { _ in
                        CustomizationRecord(appId: "bench", userId: "u\(user)", revision: 1, schemaVersion: 1, document: document, updatedAt: "t")
                    }
                }
                if user % 500 == 499 { try await group.waitForAll() }
            }
            try await group.waitForAll()
        }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let started = DispatchTime.now().uptimeNanoseconds
        let threads = 4
        let counts = BatchCounter()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for thread in 0..<threads {
                group.enter()
                Thread {
                    var count = 0
                    var user = thread
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        _ = try? store.customizationNow(appId: "bench", userId: "u\(user % 10_000)")
                        user &+= 7919
                        count += 1
                    }
                    counts.add(count)
                    group.leave()
                }.start()
            }
            group.notify(queue: .global()) { continuation.resume() }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        await store.close()
        return Double(counts.total) / elapsed
    }
}

/// Sums from several threads.
private final class BatchCounter: Sendable {
    private let state = Locked<(total: Int, batches: Int)>((0, 0))

    func add(_ value: Int) { state.withLock { $0.total += value; $0.batches += 1 } }
    var total: Int { state.withLock { $0.total } }
    var mean: Double { state.withLock { $0.batches == 0 ? 0 : Double($0.total) / Double($0.batches) } }
}
