// swift-tools-version:6.1
import PackageDescription

// Bluebonnet's benchmarks: its own package, so package-benchmark and its malloc interposer never reach users.
let package = Package(
    name: "BluebonnetBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Bluebonnet", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        .executableTarget(
            name: "BluebonnetBench",
            dependencies: [
                .product(name: "Bluebonnet", package: "Bluebonnet"),
                .product(name: "BluebonnetTestServer", package: "Bluebonnet"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "BluebonnetOpenAPI", package: "Bluebonnet"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(
            name: "Allocations",
            dependencies: [
                .product(name: "Bluebonnet", package: "Bluebonnet"),
                .product(name: "BluebonnetTestServer", package: "Bluebonnet"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Allocations",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // What FoundationNetworking's `HTTPURLResponse.init` costs per header field against an ASCII fast path
        // (issue 47, item 3): Foundation only, no Bluebonnet.
        .executableTarget(name: "HeaderNameCanonicalisation"),
    ],
    swiftLanguageModes: [.v6]
)
