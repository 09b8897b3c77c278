// swift-tools-version:6.0
import PackageDescription

// What an app does with TabStoreClient, as its own package depending on the client by path (an app would use
// `.package(url: "https://…/tabstore.git", branch: "main")`). `scripts/client-example` builds and runs it against a
// release server.
let package = Package(
    name: "TabStoreDemo",
    platforms: [.macOS(.v15), .iOS(.v17)],
    dependencies: [.package(name: "TabStore", path: "../..")],
    targets: [
        .executableTarget(name: "TabStoreDemo", dependencies: [.product(name: "TabStoreClient", package: "TabStore")],
                          swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
