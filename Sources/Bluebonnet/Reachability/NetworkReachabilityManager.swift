import Foundation

/// Listens for changes in the reachability of the network, or of one host, as Alamofire's manager does on Apple
/// platforms.
///
/// On Linux the state comes from the kernel: the network is reachable when a non-loopback interface is up and
/// running with an address and a default route exists; a host is reachable when the kernel has a route to its
/// address (a connected UDP socket, which sends nothing). Changes are seen through a routing netlink socket (links,
/// addresses and routes), read by a dispatch source, so no thread waits per manager; where netlink is unavailable
/// the state is polled every two seconds. Linux does not tell cellular from other links: a reachable network is
/// `.reachable(.ethernetOrWiFi)`.
///
/// Reachability can tell why a request failed, or when to retry one; it should not keep a user from trying a
/// request, since the first request may be what makes the network reachable.
open class NetworkReachabilityManager: @unchecked Sendable {
    // Mutable state lives in `mutableState`, behind its lock; everything else is fixed at init.

    /// The reachability of the network or host.
    public enum NetworkReachabilityStatus: Equatable, Sendable {
        /// Whether it is reachable is not known.
        case unknown
        /// Not reachable.
        case notReachable
        /// Reachable on the associated `ConnectionType`.
        case reachable(ConnectionType)

        /// The kind of link a reachable network is on.
        public enum ConnectionType: Equatable, Sendable {
            /// Ethernet, Wi-Fi, or any other link Linux does not call cellular.
            case ethernetOrWiFi
            /// A cellular link; never reported on Linux.
            case cellular
        }
    }

    /// Called when the status changes, with the new status.
    public typealias Listener = @Sendable (NetworkReachabilityStatus) -> Void

    /// A manager of the network's general reachability.
    public static let `default` = NetworkReachabilityManager()

    /// Whether the network (or host) is reachable now.
    open var isReachable: Bool { isReachableOnCellular || isReachableOnEthernetOrWiFi }

    /// Whether it is reachable over a cellular link; always `false` on Linux.
    open var isReachableOnCellular: Bool { status == .reachable(.cellular) }

    /// Whether it is reachable over Ethernet, Wi-Fi or another non-cellular link.
    open var isReachableOnEthernetOrWiFi: Bool { status == .reachable(.ethernetOrWiFi) }

    /// The queue the state is read and changes are handled on.
    public let reachabilityQueue = DispatchQueue(label: "org.bluebonnet.reachabilityQueue")

    /// The status now, read from the kernel (for a host name, after a DNS lookup).
    open var status: NetworkReachabilityStatus {
        readStatus()
    }

    private struct MutableState {
        var listener: Listener?
        var listenerQueue: DispatchQueue?
        var previousStatus: NetworkReachabilityStatus?
        var monitor: RouteChangeMonitor?
    }

    /// The host watched, or `nil` for the network in general.
    private let host: String?
    private let mutableState = Protected(MutableState())

    /// Makes a manager for a host.
    ///
    /// - Parameter host: A host name or address, without a scheme (`example.com`, not `https://example.com`).
    public convenience init?(host: String) {
        guard !host.isEmpty, !host.contains("://"), !host.contains("/") else { return nil }
        self.init(watching: host)
    }

    /// Makes a manager for the network in general.
    public convenience init?() {
        self.init(watching: nil)
    }

    /// Internal so tests can stand in a manager of their own for the kernel.
    init(watching host: String?) {
        self.host = host
    }

    deinit {
        stopListening()
    }

    /// Starts listening; the listener is called at once with the current status, then on each change. Stops any
    /// earlier listener first.
    ///
    /// - Parameters:
    ///   - queue:    The queue the listener is called on. `.main` by default.
    ///   - listener: The listener.
    /// - Returns: `true` (listening always starts: through netlink, or by polling where it is unavailable).
    @discardableResult
    open func startListening(onQueue queue: DispatchQueue = .main, onUpdatePerforming listener: @escaping Listener)
        -> Bool
    {
        stopListening()
        // The monitor holds the manager weakly: a manager dropped while listening stops by itself.
        let monitor = RouteChangeMonitor(queue: reachabilityQueue) { [weak self] in self?.statusMayHaveChanged() }
        mutableState.write { state in
            state.listener = listener
            state.listenerQueue = queue
            state.monitor = monitor
        }
        reachabilityQueue.async { [weak self] in self?.statusMayHaveChanged() }
        return true
    }

    /// Stops listening; the listener is released.
    open func stopListening() {
        let monitor = mutableState.write { state -> RouteChangeMonitor? in
            defer {
                state.listener = nil
                state.listenerQueue = nil
                state.previousStatus = nil
                state.monitor = nil
            }
            return state.monitor
        }
        // Released outside the lock: its deinit cancels the dispatch source.
        _ = monitor
    }

    /// Whether the state comes from netlink events (`false`: from polling). For tests and diagnostics.
    var usesNetlink: Bool? {
        mutableState.read { $0.monitor?.usesNetlink }
    }

    /// Reads the status and tells the listener if it changed. Runs on `reachabilityQueue`.
    private func statusMayHaveChanged() {
        let status = readStatus()
        mutableState.write { state in
            guard state.listener != nil, state.previousStatus != status else { return }
            state.previousStatus = status
            if let listener = state.listener, let queue = state.listenerQueue {
                queue.async { listener(status) }
            }
        }
    }

    private func readStatus() -> NetworkReachabilityStatus {
        if let host {
            // A name that does not resolve has no route, as far as anyone can tell.
            return ReachabilityProbe.route(to: host) ?? .notReachable
        }
        return ReachabilityProbe.general() ?? .unknown
    }
}
