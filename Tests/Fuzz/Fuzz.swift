// tabstore-fuzz: libFuzzer targets for the HTTP request parser, the JSON bodies (schema, customization,
// operations) and JWT parsing. The target is chosen by TABSTORE_FUZZ_TARGET=http|json|jwt.
//
// Built with -DFUZZING and the fuzzer sanitizer (scripts/fuzz), libFuzzer drives LLVMFuzzerTestOneInput.
// Built normally (swift build), it replays the files or folders given as arguments, so the corpora
// stay runnable without the sanitizer toolchain.
import Foundation
import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreSupport

/// The schemas operations and documents are checked against: the demo app, `examples/schema.json`, and the music
/// app's top-level ForEach, `examples/foreach-schema.json` (read from the source tree, so this target links the
/// parsers and rules only, not the service).
let fixtures: [SchemaIndex] = ["schema.json", "foreach-schema.json"].map { name in
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../examples/\(name)").path
    guard let bytes = FileManager.default.contents(atPath: path) else { fatalError("tabstore-fuzz: cannot read \(path)") }
    return SchemaIndex(schema: try! TabSchema.parse(try! JSONParser.parse(Array(bytes))), version: 1)
}

/// Parses every request in `bytes`, fed either whole or in two pieces split at `split`.
func requests(_ bytes: [UInt8], split: Int) -> (heads: [String], status: Int?) {
    var parser = HTTPParser()
    var buffer: [UInt8] = []
    var offset = 0
    var heads: [String] = []
    for piece in [bytes[..<split], bytes[split...]] {
        buffer.append(contentsOf: piece)
        do {
            loop: while true {
                switch try parser.parse(buffer, offset: &offset) {
                case .needMore: break loop
                case .head: continue
                case .request(let request): heads.append("\(request.method) \(request.head.target) \(request.body.count)")
                }
            }
        } catch {
            return (heads, error.status)
        }
    }
    return (heads, nil)
}

/// The parser never crashes, and feeding the same bytes in different pieces gives the same requests.
func fuzzHTTP(_ bytes: [UInt8]) {
    let whole = requests(bytes, split: bytes.count)
    let split = requests(bytes, split: bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1))
    precondition(whole.heads == split.heads && whole.status == split.status, "parser result depends on how bytes arrive")
}

/// JSON bodies never crash the decoders or the rules; what the writer emits parses back to the same value.
func fuzzJSON(_ bytes: [UInt8]) {
    guard let json = try? JSONParser.parse(bytes) else { return }
    precondition((try? JSONParser.parse(JSONWriter.bytes(json))) == json, "JSON round trip changed the value")
    _ = try? TabSchema.parse(json)
    for fixture in fixtures {
        fuzzCustomization(json, fixture)
    }
}

/// A customization document or operation list against one schema: never a crash, and what is accepted stays.
func fuzzCustomization(_ json: JSONValue, _ fixture: SchemaIndex) {
    if let (document, _) = try? Customization.decode(json), let replaced = try? CustomizationEditor.replace(with: document, index: fixture) {
        _ = Layout(customization: replaced, index: fixture, sizeClass: .compact)
        precondition(Reconciler.reconcile(replaced, with: fixture).sameChoices(as: replaced), "an accepted document is not stable")
    }
    if let operations = try? Operation.decodeList(json), let applied = try? CustomizationEditor.apply(operations, to: .empty, index: fixture) {
        _ = Layout(customization: applied, index: fixture, sizeClass: .regular)
        _ = Layout(customization: applied, index: fixture, sizeClass: .compact)
        // An accepted write stays readable: what would be stored decodes under storage and request rules alike.
        let stored = JSONWriter.bytes(applied.json(appId: "com.myApp", userId: "fuzz"))
        precondition((try? Customization.decodeStored(stored))?.sameChoices(as: applied) == true, "an accepted write does not read back")
        precondition((try? JSONParser.parse(stored)).flatMap { try? Customization.decode($0) } != nil, "an accepted write breaks the request limits")
    }
}

/// Token parsing never crashes, and nothing but the real secret verifies.
func fuzzJWT(_ bytes: [UInt8]) {
    guard let token = String(validating: bytes, as: UTF8.self) else { return }
    // Claims never make the time checks trap, whatever the clock says.
    for now in [Int.min, -1, 0, Int.max] { _ = try? JWT.verify(token, secret: "fuzz-secret", now: now) }
    if (try? JWT.verify(token, secret: "fuzz-secret", now: 1_000)) != nil {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        let input = Array("\(parts[0]).\(parts[1])".utf8)
        precondition(Base64URL.encode(Crypto.hmacSHA256(key: Array("fuzz-secret".utf8), message: input)) == parts[2], "a forged token verified")
    }
}

/// Which target runs, chosen once from TABSTORE_FUZZ_TARGET.
let target: @Sendable ([UInt8]) -> Void = {
    switch ProcessInfo.processInfo.environment["TABSTORE_FUZZ_TARGET"] {
    case "http": return fuzzHTTP
    case "json": return fuzzJSON
    case "jwt": return fuzzJWT
    default:
        FileHandle.standardError.write(Data("set TABSTORE_FUZZ_TARGET to http, json or jwt\n".utf8))
        exit(2)
    }
}()

#if FUZZING
// Built with -sanitize=fuzzer this file is a library and libFuzzer's main calls this for every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
/// Without the fuzzer: replays the files, or folders of files, given as arguments.
@main
struct Replay {
    static func main() throws {
        var count = 0
        for path in CommandLine.arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let files = isDirectory.boolValue
                ? (try FileManager.default.contentsOfDirectory(atPath: path)).sorted().map { (path as NSString).appendingPathComponent($0) }
                : [path]
            for file in files {
                target(Array(FileManager.default.contents(atPath: file) ?? Data()))
                count += 1
            }
        }
        print("replayed \(count) inputs")
    }
}
#endif
