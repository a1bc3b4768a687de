// swift-tools-version:6.2
import PackageDescription

// No warnings: every target of ours builds with warnings as errors (dependencies keep their own settings).
let noWarnings: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "Bluebonnet",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Bluebonnet", targets: ["Bluebonnet"]),
        .library(name: "BluebonnetTestServer", targets: ["BluebonnetTestServer"]),
        .library(name: "BluebonnetTesting", targets: ["BluebonnetTesting"]),
        .library(name: "BluebonnetOpenAPI", targets: ["BluebonnetOpenAPI"]),
        .library(name: "BonnetKit", targets: ["BonnetKit"]),
        .executable(name: "bonnet", targets: ["bonnet"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // Already built as AsyncHTTPClient's dependency, with its traits off as AsyncHTTPClient takes it: reading a
        // Session from a ConfigReader adds no package to the build.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.0.0", traits: []),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
    ],
    targets: [
        .target(
            name: "Bluebonnet",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                "CZlib",
            ],
            swiftSettings: noWarnings
        ),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .target(
            name: "BluebonnetTestServer",
            dependencies: [
                "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: noWarnings
        ),
        .target(
            name: "BluebonnetTesting",
            dependencies: ["Bluebonnet"],
            swiftSettings: noWarnings
        ),
        // A `ClientTransport` over a `Session` for swift-openapi-generator's clients. `Bluebonnet` itself never
        // depends on OpenAPIRuntime.
        .target(
            name: "BluebonnetOpenAPI",
            dependencies: [
                "Bluebonnet",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: noWarnings
        ),
        // A client swift-openapi-generator wrote from `openapi.yaml` (the test server's routes), committed; the tests
        // run it on `BluebonnetTransport`. `scripts/regenerate-openapi.sh` checks it is current.
        .target(
            name: "OpenAPIFixtureClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/OpenAPIFixtureClient",
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            // Generated code, not ours: its `package import`s warn as unused in files that declare little, and the
            // generator silences that only for compilers from 6.4 on.
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]
        ),
        .target(
            name: "TopLevelNameFixtures",
            path: "Tests/TopLevelNameFixtures",
            swiftSettings: noWarnings
        ),
        // The command-line client's logic: options, the request plan, sending, printing, files. It links the library
        // only (never the test server), and runs against a `Console`, so that tests run it in-process.
        .target(
            name: "BonnetKit",
            dependencies: [
                "Bluebonnet",
                "CZlib",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: noWarnings
        ),
        // The `bonnet` program: BonnetKit's commands, and `demo` and `serve` on the embedded test server.
        .executableTarget(
            name: "bonnet",
            dependencies: [
                "Bluebonnet",
                "BonnetKit",
                "BluebonnetTestServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: noWarnings
        ),
        .testTarget(
            name: "BluebonnetTests",
            dependencies: [
                "Bluebonnet",
                "BluebonnetTestServer",
                "BluebonnetTesting",
                "BluebonnetOpenAPI",
                "OpenAPIFixtureClient",
                "BonnetKit",
                "TopLevelNameFixtures",
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: noWarnings
        ),
    ],
    swiftLanguageModes: [.v6]
)
