@testable import Bluebonnet
import Foundation
import XCTest

/// Reachability on Linux: the kernel's state read right, changes seen through netlink, and a real change observed in
/// a network namespace the test makes.
final class NetworkReachabilityTests: XCTestCase {
    func procNet(route: String, ipv6: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("procnet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        try route.write(to: directory.appendingPathComponent("route"), atomically: true, encoding: .utf8)
        try ipv6.write(to: directory.appendingPathComponent("ipv6_route"), atomically: true, encoding: .utf8)
        return directory.path
    }

    func testDefaultRoutesAreReadFromBothRoutingTables() throws {
        let route = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            eth0\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0
            eth1\t0002A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0
            down0\t00000000\t00000000\t0000\t0\t0\t0\t00000000\t0\t0\t0
            """
        let ipv6 = """
            00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 wlan0
            00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo
            20010db8000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth1
            """
        XCTAssertEqual(
            ReachabilityProbe.defaultRouteInterfaces(procNet: try procNet(route: route, ipv6: ipv6)),
            ["eth0", "wlan0"],
            "a route that is down, a rejecting ::/0 on lo and a non-default prefix do not count")
        XCTAssertEqual(ReachabilityProbe.defaultRouteInterfaces(procNet: "/nonexistent"), [])
    }

    func testAHostIsReachableWhenTheKernelHasARouteToIt() {
        XCTAssertEqual(NetworkReachabilityManager(host: "127.0.0.1")?.status, .reachable(.ethernetOrWiFi))
        XCTAssertEqual(NetworkReachabilityManager(host: "localhost")?.isReachableOnEthernetOrWiFi, true)
        XCTAssertEqual(NetworkReachabilityManager(host: "no-such-host.invalid")?.status, .notReachable)
        XCTAssertNil(NetworkReachabilityManager(host: "https://example.com"))
        XCTAssertNil(NetworkReachabilityManager(host: ""))
        XCTAssertEqual(NetworkReachabilityManager(host: "127.0.0.1")?.isReachableOnCellular, false)
    }

    func testListeningReportsTheCurrentStatusAtOnceThroughNetlinkAndStopsWhenAsked() async throws {
        let manager = try XCTUnwrap(NetworkReachabilityManager(host: "127.0.0.1"))
        let reported = expectation(description: "status")
        let statuses = Recorder<NetworkReachabilityManager.NetworkReachabilityStatus>()
        XCTAssertTrue(
            manager.startListening(onQueue: .global()) { status in
                statuses.append(status)
                reported.fulfill()
            })
        await fulfillment(of: [reported], timeout: 30)
        XCTAssertEqual(statuses.values, [.reachable(.ethernetOrWiFi)])
        XCTAssertEqual(manager.usesNetlink, true, "this machine has netlink")
        manager.stopListening()
        XCTAssertNil(manager.usesNetlink)
    }

    func testThePollingFallbackCallsBackOnItsPeriod() async throws {
        let ticks = Recorder<Int>()
        let twice = expectation(description: "two polls")
        twice.expectedFulfillmentCount = 2
        twice.assertForOverFulfill = false
        let monitor = RouteChangeMonitor(queue: DispatchQueue(label: "poll"), pollingInterval: 0.05, netlink: false) {
            ticks.append(1)
            twice.fulfill()
        }
        XCTAssertFalse(monitor.usesNetlink)
        await fulfillment(of: [twice], timeout: 30)
        withExtendedLifetime(monitor) {}
    }

    /// In a new network namespace (as root): nothing but a down loopback at first, then a veth pair with an address
    /// and a default route, then the link taken down. `bonnet reachability --watch` runs inside and must print each
    /// change as netlink reports it.
    func testAChangeInANetworkNamespaceIsObservedAsItHappens() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "bonnet"
        ).path
        let script = """
            '\(binary)' reachability --watch --for 4 &
            sleep 1
            ip link add bbv0 type veth peer name bbv1 && ip addr add 10.213.7.1/24 dev bbv0 && ip link set bbv1 up \
              && ip link set bbv0 up && ip route add default dev bbv0 || echo "setup failed" >&2
            sleep 1
            ip link set bbv0 down
            wait
            """
        guard getuid() == 0 else { throw Self.skip("the test must run as root to make a network namespace") }
        guard
            let unshare = ["/usr/bin/unshare", "/bin/unshare"].first(
                where: FileManager.default.isExecutableFile(atPath:)),
            ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].contains(
                where: FileManager.default.isExecutableFile(atPath:))
        else {
            throw Self.skip("unshare (util-linux) and ip (iproute2) are needed")
        }
        let probe = try run(unshare, ["-n", "true"])
        guard probe.status == 0 else { throw Self.skip("this machine refuses new network namespaces: \(probe.errors)") }
        let result = try run(unshare, ["-n", "sh", "-c", script])
        XCTAssertEqual(result.status, 0, result.errors)
        XCTAssertFalse(result.errors.contains("setup failed"), result.errors)
        XCTAssertEqual(
            result.output.split(separator: "\n"), ["not reachable", "reachable (ethernet or wifi)", "not reachable"],
            result.errors)
    }

    private static func skip(_ reason: String) -> XCTSkip {
        // Printed as well, so a log shows why the real change was not observed.
        print("NetworkReachabilityTests: skipped: \(reason)")
        if ProcessInfo.processInfo.environment["BLUEBONNET_REQUIRE_NETNS"] != nil {
            XCTFail("BLUEBONNET_REQUIRE_NETNS is set, but \(reason)")
        }
        return XCTSkip(reason)
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> (
        status: Int32, output: String, errors: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData, as: UTF8.self)
        )
    }
}
