import Foundation

// tabstore-bench-storage [SECONDS] [--dir DIR] [--durability full|normal]
// The storage layer alone, no HTTP: committed writes/s with and without group commit, and point reads/s,
// on scratch files in DIR (default: a new temporary folder, removed afterwards). See bench/README.md.
var arguments = Array(CommandLine.arguments.dropFirst())
var seconds = 3.0
var directory: String?
var synchronousFull = true
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--dir" where !arguments.isEmpty: directory = arguments.removeFirst()
    case "--durability" where arguments.first == "full" || arguments.first == "normal":
        synchronousFull = arguments.removeFirst() == "full"
    default:
        guard let value = Double(argument), value > 0, value <= 3600 else {
            FileHandle.standardError.write(Data("usage: tabstore-bench-storage [SECONDS] [--dir DIR] [--durability full|normal]\n".utf8))
            exit(2)
        }
        seconds = value
    }
}
let scratch = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("tabstore-bench-\(UUID().uuidString)").path
do {
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    print(try await StorageBenchmark.run(directory: scratch, seconds: seconds, synchronousFull: synchronousFull))
    if directory == nil { try? FileManager.default.removeItem(atPath: scratch) }
} catch {
    FileHandle.standardError.write(Data("tabstore-bench-storage: \(error)\n".utf8))
    exit(1)
}
