// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for every parser Bluebonnet owns. Its own package, built only with sanitizer flags by
// scripts/fuzz.sh, so the fuzzing runtime never reaches users or the normal build.
let package = Package(
    name: "BluebonnetFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Bluebonnet", path: "..")
    ],
    targets: [
        .executableTarget(
            name: "BluebonnetFuzz",
            dependencies: [
                .product(name: "Bluebonnet", package: "Bluebonnet"),
                .product(name: "BluebonnetTestServer", package: "Bluebonnet"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
