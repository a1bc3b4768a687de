import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tells when the kernel's links, addresses or routes change: a routing netlink socket read by a dispatch source,
/// so no thread waits on it. Where netlink cannot be opened, a timer polls instead.
final class RouteChangeMonitor: @unchecked Sendable {
    // `source` is set once, in init; a dispatch source's methods may be called from any thread.
    // Constants of <linux/netlink.h> and <linux/rtnetlink.h>, which Glibc's module does not export.
    private static let netlinkRoute: Int32 = 0
    private static let groups: UInt32 =
        0x1 /* LINK */ | 0x10 /* IPV4_IFADDR */ | 0x40 /* IPV4_ROUTE */
        | 0x100 /* IPV6_IFADDR */ | 0x400 /* IPV6_ROUTE */

    /// How often the fallback polls.
    static let pollingInterval: TimeInterval = 2

    private let source: any DispatchSourceProtocol
    /// Whether changes come from netlink (else from polling).
    let usesNetlink: Bool

    /// Starts watching; `onChange` runs on `queue` after every burst of changes (and every poll).
    ///
    /// - Parameters:
    ///   - queue:           Where `onChange` runs.
    ///   - pollingInterval: The fallback's period.
    ///   - netlink:         Whether to try netlink first; `false` forces the fallback (for its tests).
    ///   - onChange:        Called after changes.
    init(
        queue: DispatchQueue, pollingInterval: TimeInterval = RouteChangeMonitor.pollingInterval, netlink: Bool = true,
        onChange: @escaping @Sendable () -> Void
    ) {
        if netlink, let fd = Self.openNetlink() {
            let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            read.setEventHandler {
                // The messages themselves do not matter: any of them means the state is read again.
                var buffer = [UInt8](repeating: 0, count: 16 * 1024)
                while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
                onChange()
            }
            read.setCancelHandler { close(fd) }
            source = read
            usesNetlink = true
        } else {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + pollingInterval, repeating: pollingInterval)
            timer.setEventHandler(handler: onChange)
            source = timer
            usesNetlink = false
        }
        source.resume()
    }

    deinit {
        source.cancel()
    }

    /// A non-blocking `NETLINK_ROUTE` socket bound to the link, address and route groups.
    private static func openNetlink() -> Int32? {
        let fd = socket(
            AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            netlinkRoute)
        guard fd >= 0 else { return nil }
        // struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
        var address = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: UInt16(AF_NETLINK)) { address.replaceSubrange(0..<2, with: $0) }
        withUnsafeBytes(of: groups) { address.replaceSubrange(8..<12, with: $0) }
        let bound = address.withUnsafeBytes { bytes in
            bind(fd, bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
        guard bound == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}
