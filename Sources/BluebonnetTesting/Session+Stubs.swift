import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// A session whose requests `stubs` answer.
    ///
    /// - Parameters:
    ///   - stubs:                    The stubs.
    ///   - configuration:            The configuration, to which the stubs' `URLProtocol` is added.
    ///                               `URLSessionConfiguration.af.default` by default.
    ///   - startRequestsImmediately: Whether a request starts when its first handler is added. `true` by default.
    ///   - interceptor:              The session's interceptor. `nil` by default.
    ///   - redirectHandler:          The session's redirect handler. `nil` by default.
    ///   - eventMonitors:            Monitors told of every request's events. None by default.
    ///   - maximumResponseSize:      The largest body held in memory. `Session.defaultMaximumResponseSize` by default.
    public convenience init(
        stubs: HTTPStubs,
        configuration: URLSessionConfiguration = URLSessionConfiguration.af.default,
        startRequestsImmediately: Bool = true,
        interceptor: (any RequestInterceptor)? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        eventMonitors: [any EventMonitor] = [],
        maximumResponseSize: Int64? = Session.defaultMaximumResponseSize
    ) {
        self.init(
            configuration: stubs.configuration(configuration), startRequestsImmediately: startRequestsImmediately,
            interceptor: interceptor, redirectHandler: redirectHandler, eventMonitors: eventMonitors,
            maximumResponseSize: maximumResponseSize)
    }
}
