import Foundation
import Testing
import TabStoreTestSupport

/// The README, CONTRIBUTING.md, CHANGELOG.md and docs/ are read by people who have only this repository: every
/// relative link resolves to a file (and heading) inside it, the README stays short, and neither the documents
/// nor the code's comments cite documents that are not here (an outside spec's API.md, DOMAIN.md or its seeds).
@Suite("Documentation")
struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Documents that readers outside the repository never see: citing them sends a reader nowhere.
    static let foreignCitations = ["API.md", "DOMAIN.md", "shared/spec", "shared/seeds"]
    /// The outside spec's seed examples, in any case ("seed 002", "the seeds"); fuzz seed corpora and random seeds
    /// are no citations.
    static let seedCitations = ["seed 00", "seeds 00", "the seeds", "the seed's", "seeds'", "seed example"]

    /// README.md, CONTRIBUTING.md, CHANGELOG.md, every docs/*.md, and the client's README when there is one.
    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        let client = "Sources/TabStoreClient/README.md"
        let optional = FileManager.default.fileExists(atPath: root.appendingPathComponent(client).path) ? [client] : []
        return ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"] + docs + optional
    }

    static func read(_ url: URL) throws -> String {
        try String(contentsOf: url, encoding: .utf8)
    }

    /// The document's lines with fenced code blocks blanked: links and headings are the prose's, not a sample's.
    static func prose(_ text: String) -> [String] {
        var inFence = false
        var lines: [String] = []
        for line in text.components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                lines.append("")
            } else {
                lines.append(inFence ? "" : line)
            }
        }
        return lines
    }

    /// The anchors GitHub gives a document's headings: lowercased, only letters, digits, `-`, `_` and spaces kept,
    /// each space a `-`; a repeated one gets `-1`, `-2`, ….
    static func anchors(_ text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        for line in prose(text) {
            let hashes = line.prefix(while: { $0 == "#" }).count
            guard (1...6).contains(hashes), line.dropFirst(hashes).hasPrefix(" ") else { continue }
            let title = String(line.dropFirst(hashes + 1)).lowercased()
            let kept = title.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == " " }
            let slug = kept.replacingOccurrences(of: " ", with: "-")
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// Every Markdown link target in a document's prose (`](target)`, without a title).
    static func linkTargets(_ text: String) -> [String] {
        prose(text).joined(separator: "\n").components(separatedBy: "](").dropFirst().compactMap { (piece: String) -> String? in
            guard let end = piece.firstIndex(of: ")") else { return nil }
            return String(piece[..<end]).components(separatedBy: " ")[0]
        }
    }

    @Test("every relative link in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md resolves to a file (and heading) in the repository")
    func linksResolve() throws {
        let rootPath = Self.root.standardizedFileURL.path
        for document in try Self.documents() {
            let url = Self.root.appendingPathComponent(document)
            let text = try Self.read(url)
            for target in Self.linkTargets(text) {
                guard !target.isEmpty, !target.hasPrefix("http://"), !target.hasPrefix("https://"), !target.hasPrefix("mailto:") else { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let file = parts[0].removingPercentEncoding ?? parts[0]
                let fragment = parts.count > 1 ? parts[1] : ""
                let resolved = file.isEmpty ? url : url.deletingLastPathComponent().appendingPathComponent(file).standardizedFileURL
                #expect(resolved.standardizedFileURL.path.hasPrefix(rootPath + "/"), "\(document) links outside the repository: \(target)")
                guard FileManager.default.fileExists(atPath: resolved.path) else {
                    Issue.record("\(document) links to a missing \(target)")
                    continue
                }
                if !fragment.isEmpty, resolved.pathExtension == "md" {
                    let anchors = Self.anchors(try Self.read(resolved))
                    #expect(anchors.contains(fragment), "\(document) links to a missing heading: \(target)")
                }
            }
        }
    }

    @Test("README.md is at most 250 lines and leads to the pages by reader")
    func readmeIsShort() throws {
        let readme = try Self.read(Self.root.appendingPathComponent("README.md"))
        let lines = readme.components(separatedBy: "\n")
        let count = lines.last == "" ? lines.count - 1 : lines.count
        #expect(count <= 250, "README.md has \(count) lines")
        for page in ["docs/domain.md", "docs/api.md", "docs/walkthrough.md", "docs/operations.md", "CONTRIBUTING.md", "CHANGELOG.md"] {
            #expect(readme.contains("](\(page))"), "README.md does not link \(page)")
        }
    }

    @Test("no document, comment or script cites API.md, DOMAIN.md or the seeds: they are not in this repository")
    func noForeignCitations() throws {
        var files = try Self.documents()
        files += ["openapi.yaml", "Package.swift"]
        for folder in ["Sources", "Tests", "scripts", "console", "docs", ".ci"] {
            let base = Self.root.appendingPathComponent(folder)
            let relatives = (try? FileManager.default.subpathsOfDirectory(atPath: base.path)) ?? []
            files += relatives.map { "\(folder)/\($0)" }
        }
        for file in Set(files).sorted() where !file.hasPrefix("Tests/Fuzz/corpus/") && !file.hasSuffix("DocumentationTests.swift") {
            let url = Self.root.appendingPathComponent(file)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            let lowered = text.lowercased()
            for citation in Self.foreignCitations {
                #expect(!text.contains(citation), "\(file) cites \(citation): cite the docs/ page that holds it")
            }
            for citation in Self.seedCitations {
                #expect(!lowered.contains(citation), "\(file) cites the seeds (\"\(citation)\"): cite docs/domain.md or say it plainly")
            }
        }
    }
}
