// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for every parser Bluebonnet owns. Its own package, built only with sanitizer flags by
// scripts/fuzz.sh, so the fuzzing runtime never reaches users or the normal build.
let package = Package(
    name: "BluebonnetFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Bluebonnet", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "BluebonnetFuzz",
            dependencies: [
                .product(name: "Bluebonnet", package: "Bluebonnet"),
                .product(name: "BluebonnetTestServer", package: "Bluebonnet"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
