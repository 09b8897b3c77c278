// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "TabStore",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tab-server", targets: ["tab-server"]),
        .library(name: "TabStore", targets: ["TabStore"]),
    ],
    targets: [
        // SQLite from the system (Debian: libsqlite3-dev). modulemap + shim only.
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // OpenSSL's libcrypto for HMAC-SHA256, random bytes and constant-time comparison (Debian: libssl-dev).
        .systemLibrary(
            name: "CCrypto",
            path: "Sources/CCrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Linux syscalls Glibc's module does not export (epoll, accept4, eventfd), as static inline wrappers.
        .systemLibrary(
            name: "CSystem",
            path: "Sources/CSystem"
        ),
        .target(
            name: "TabStore",
            dependencies: ["CSQLite", "CCrypto", "CSystem"],
            swiftSettings: [.swiftLanguageMode(.v6)],
            linkerSettings: [.linkedLibrary("m")]
        ),
        .executableTarget(
            name: "tab-server",
            dependencies: ["TabStore"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // libFuzzer targets (scripts/fuzz builds them with the fuzzer sanitizer; a plain build replays corpora).
        .executableTarget(
            name: "tabstore-fuzz",
            dependencies: ["TabStore"],
            path: "Tests/Fuzz",
            exclude: ["corpus"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "TabStoreTests",
            dependencies: ["TabStore"],
            path: "Tests/TabStoreTests",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
