import Foundation
import Testing

/// The README and docs/ are read by people who have only this repository: every link stays inside it.
@Suite("Documentation links")
struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("README.md and docs/*.md link only to files that exist in the repository")
    func linksStayInside() throws {
        let documents = ["README.md", "docs/domain.md", "docs/api.md"]
        for document in documents {
            let url = Self.root.appendingPathComponent(document)
            let text = try String(contentsOf: url, encoding: .utf8)
            #expect(!text.contains("shared/spec") && !text.contains("DOMAIN.md") && !text.contains("API.md"), "\(document)")
            // Markdown link targets: ](target)
            for piece in text.components(separatedBy: "](").dropFirst() {
                guard let end = piece.firstIndex(of: ")") else { continue }
                let target = String(piece[..<end]).components(separatedBy: "#")[0]
                guard !target.isEmpty, !target.hasPrefix("http://"), !target.hasPrefix("https://") else { continue }
                let resolved = url.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL
                #expect(resolved.path.hasPrefix(Self.root.standardizedFileURL.path + "/"), "\(document) links outside: \(target)")
                #expect(FileManager.default.fileExists(atPath: resolved.path), "\(document) links to a missing \(target)")
            }
        }
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("](docs/domain.md)") && readme.contains("](docs/api.md)"))
    }
}
