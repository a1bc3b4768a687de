import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads, from the kernel, whether the machine (or a host) can be reached: never blocks on the network, except a
/// host name's DNS lookup.
enum ReachabilityProbe {
    /// The machine's reachability: a non-loopback interface is up and running with an address, and a default route
    /// exists (IPv4 or IPv6). `nil` when the interfaces cannot be read.
    static func general() -> NetworkReachabilityManager.NetworkReachabilityStatus? {
        guard let interfaces = liveInterfaces() else { return nil }
        let defaults = defaultRouteInterfaces()
        let usable = interfaces.intersection(defaults)
        return usable.isEmpty ? .notReachable : .reachable(.ethernetOrWiFi)
    }

    /// Whether a route to `host` exists: a UDP socket connected to its address (which sends nothing) succeeds only
    /// when the kernel has a route. `nil` when the name does not resolve.
    static func route(to host: String) -> NetworkReachabilityManager.NetworkReachabilityStatus? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, "9", &hints, &results) == 0, let first = results else { return nil }
        defer { freeaddrinfo(results) }
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            defer { cursor = info.pointee.ai_next }
            let fd = socket(info.pointee.ai_family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            let connected = connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0
            close(fd)
            if connected { return .reachable(.ethernetOrWiFi) }
        }
        return .notReachable
    }

    /// Names of interfaces that are up and running, not loopback, with an IPv4 address or a global IPv6 one.
    static func liveInterfaces() -> Set<String>? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var names: Set<String> = []
        var cursor = list
        while let item = cursor {
            defer { cursor = item.pointee.ifa_next }
            let flags = Int32(bitPattern: item.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_RUNNING) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                let address = item.pointee.ifa_addr
            else { continue }
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                names.insert(String(cString: item.pointee.ifa_name))
            case AF_INET6:
                // A link-local address (fe80::/10) alone reaches nothing beyond the link.
                let linkLocal = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { $0[0] == 0xFE && $0[1] & 0xC0 == 0x80 }
                }
                if !linkLocal { names.insert(String(cString: item.pointee.ifa_name)) }
            default:
                break
            }
        }
        return names
    }

    /// Interfaces that carry a default route, from `/proc/net/route` and `/proc/net/ipv6_route`.
    static func defaultRouteInterfaces(procNet: String = "/proc/net") -> Set<String> {
        var names: Set<String> = []
        if let table = try? String(contentsOfFile: procNet + "/route", encoding: .utf8) {
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                // Iface, Destination, Gateway, Flags, ..., Mask: a default route has destination and mask 0 and is up.
                guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000",
                    let flags = Int(fields[3], radix: 16), flags & 0x1 != 0
                else { continue }
                names.insert(String(fields[0]))
            }
        }
        if let table = try? String(contentsOfFile: procNet + "/ipv6_route", encoding: .utf8) {
            for line in table.split(separator: "\n") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                // Destination, prefix length, ..., flags, device: `::/0` that is up, not a rejection.
                guard fields.count >= 10, fields[0] == String(repeating: "0", count: 32), fields[1] == "00",
                    let flags = Int(fields[8], radix: 16), flags & 0x1 != 0, flags & 0x200 == 0, fields[9] != "lo"
                else { continue }
                names.insert(String(fields[9]))
            }
        }
        return names
    }
}
