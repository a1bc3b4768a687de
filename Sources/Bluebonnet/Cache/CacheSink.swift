import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Stands between the engine and a request for a `GET` the cache may store or is revalidating: passes every event
/// on, keeps a copy of a storable body, and turns a `304 Not Modified` into the stored response, updated.
final class CacheSink: TransportSink {
    /// What the sink needs to know of its request.
    struct Context: Sendable {
        let cache: any ResponseStore
        let key: String
        /// The request as the session made it, before any conditional field was added.
        let request: TransportRequest
        /// Asks the request's (or the session's) `CachedResponseHandler`; `nil` stores as it is.
        let decision: CacheDecision?
        /// The stale variant being revalidated.
        var stored: (entry: CacheEntry, body: Data)?

        init(cache: any ResponseStore, key: String, request: TransportRequest, decision: CacheDecision?) {
            self.cache = cache
            self.key = key
            self.request = request
            self.decision = decision
        }
    }

    private struct State {
        var entry: CacheEntry?
        var notModified: ResponseHead?
        /// The streamed body so far, while it is still small enough to store.
        var copy: Data?
    }

    /// Fields a `304` does not update in the stored response (RFC 9111 §3.2 names `Content-Length`; the others
    /// describe the 304's own framing).
    private static let keptOn304: Set<String> = [
        "content-length", "content-encoding", "transfer-encoding", "content-range", "connection",
    ]

    private let sink: any TransportSink
    private let context: Context
    private let requestTime = Date()
    private let state = Protected(State())

    init(sink: any TransportSink, context: Context) {
        self.sink = sink
        self.context = context
    }

    func transportWillServeFromCache() {
        sink.transportWillServeFromCache()
    }

    func transportDidSendRequestHead() {
        sink.transportDidSendRequestHead()
    }

    func transportDidReceiveResponse(
        _ response: ResponseHead, expectedBodyLength: Int64, encodedBodyLength: Int64??,
        protocolName: String, setCookieFields: [String]
    ) -> TransportHeadReply {
        if context.stored != nil, response.statusCode == 304 {
            // The request never sees this head: it gets the stored response once the 304's (empty) body is read.
            state.write { $0.notModified = response }
            return .proceed(streamingBody: false)
        }
        let entry = storableEntry(for: response, protocolName: protocolName)
        let reply = sink.transportDidReceiveResponse(
            response, expectedBodyLength: expectedBodyLength, encodedBodyLength: encodedBodyLength,
            protocolName: protocolName, setCookieFields: setCookieFields)
        state.write { state in
            state.entry = entry
            if entry != nil, reply.streamsBody { state.copy = Data() }
        }
        return reply
    }

    func transportDidSendBodyBytes(_ count: Int) {
        sink.transportDidSendBodyBytes(count)
    }

    func transportDidSendRequest(hadBody: Bool) {
        sink.transportDidSendRequest(hadBody: hadBody)
    }

    func transportDidReceiveBodyBytes(_ count: Int) {
        if state.read({ $0.notModified != nil }) { return }
        sink.transportDidReceiveBodyBytes(count)
    }

    func transportDidReceiveBodyChunk(_ chunk: Data, readiness: TransportReadiness) {
        let limit = context.cache.largestEntry
        state.write { state in
            guard state.copy != nil else { return }
            if (state.copy?.count ?? 0) + chunk.count > limit {
                // Too large to store: the copy stops here, the stream goes on.
                state.copy = nil
                state.entry = nil
            } else {
                state.copy?.append(chunk)
            }
        }
        sink.transportDidReceiveBodyChunk(chunk, readiness: readiness)
    }

    func transportDidComplete(body: Data, error: AFError?) {
        let (entry, notModified, copy) = state.read { ($0.entry, $0.notModified, $0.copy) }
        if let notModified, let stored = context.stored {
            guard error == nil else {
                sink.transportDidComplete(body: Data(), error: error)
                return
            }
            let responseTime = Date()
            Offload.run { [self] in
                let updated = Self.updating(
                    stored.entry, with: notModified, requestTime: requestTime, responseTime: responseTime)
                context.cache.store(updated, body: stored.body, memoryOnly: false)
                let age = CacheFreshness.currentAge(of: updated, now: Date())
                CachedResponseReplay(
                    entry: updated, body: stored.body, age: Int(min(age, TimeInterval(Int32.max))), fromCache: false,
                    sink: sink
                ).start()
            }
            return
        }
        guard error == nil, var entry else {
            sink.transportDidComplete(body: body, error: error)
            return
        }
        let stored = copy ?? body
        entry.bodyLength = stored.count
        let complete = entry
        // The handler is user code and the store writes a file: both off the event loop, and both before the request
        // completes, so a request made after completion finds the response.
        Offload.run { [self] in
            decideAndStore(complete, body: stored) { [self] in sink.transportDidComplete(body: body, error: nil) }
        }
    }

    /// Asks the handler (the request's, else the session's; storing as it is without one), then stores.
    private func decideAndStore(_ entry: CacheEntry, body: Data, then proceed: @escaping @Sendable () -> Void) {
        guard let decision = context.decision else {
            context.cache.store(entry, body: body, memoryOnly: false)
            proceed()
            return
        }
        let proposed = CachedURLResponse(
            response: entry.httpResponse(), data: body, userInfo: nil, storagePolicy: .allowed)
        let cache = context.cache
        let key = context.key
        let requestHeaders = Dictionary(
            context.request.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $0 + ", " + $1 })
        let (requestTime, responseTime) = (entry.requestTime, entry.responseTime)
        let protocolName = entry.protocolName
        Confinement.assertOffEventLoop("A cached response handler")
        decision.decide(proposed) { decided in
            defer { proceed() }
            guard let decided else { return }
            if decided === proposed {
                cache.store(entry, body: body, memoryOnly: false)
            } else if let changed = CacheEntry(
                cached: decided, key: key, requestHeaders: requestHeaders,
                requestTime: Date(timeIntervalSince1970: requestTime),
                responseTime: Date(timeIntervalSince1970: responseTime), protocolName: protocolName)
            {
                cache.store(changed, body: decided.data, memoryOnly: decided.storagePolicy == .allowedInMemoryOnly)
            }
        }
    }

    /// The entry to store for a response, or `nil` when RFC 9111 §3 forbids storing it.
    private func storableEntry(for response: ResponseHead, protocolName: String) -> CacheEntry? {
        let status = response.statusCode
        guard (200...599).contains(status), status != 206, status != 304 else { return nil }
        var entry = CacheEntry(
            key: context.key, url: response.url.withoutUserInfo, statusCode: status,
            headers: response.fields.map { [$0.name, $0.value] },
            protocolName: protocolName,
            varyValues: [:], requestTime: requestTime.timeIntervalSince1970,
            responseTime: Date().timeIntervalSince1970, bodyLength: 0)
        let control = CacheControl(entry.field("Cache-Control"))
        guard !control.noStore else { return nil }
        let explicit = control.maxAge != nil || entry.field("Expires") != nil
        guard CacheFreshness.heuristicallyCacheable.contains(status) || explicit || control.isPublic else { return nil }
        // §3.5: a response to an authorized request is stored only when it says a cache may.
        if CachingTransport.field("authorization", in: context.request.headers) != nil,
            !(control.mustRevalidate || control.isPublic || control.sharedMaxAge != nil)
        {
            return nil
        }
        let varyNames = CacheEntry.varyNames(entry.field("Vary"))
        guard !varyNames.contains("*") else { return nil }
        entry.varyValues = CacheEntry.varyValues(varyNames, in: context.request.headers)
        // Stored even when it is never fresh and has no validator: `.returnCacheDataElseLoad` may still use it.
        return entry
    }

    /// The stored response with the fields of the `304` that validated it, and the validation's times.
    static func updating(_ entry: CacheEntry, with notModified: ResponseHead, requestTime: Date, responseTime: Date)
        -> CacheEntry
    {
        var updated = entry
        let fresh = notModified.fields.map { [$0.name, $0.value] }.filter { !keptOn304.contains($0[0].lowercased()) }
        let replacedNames = Set(fresh.map { $0[0].lowercased() })
        updated.headers.removeAll { $0.count != 2 || replacedNames.contains($0[0].lowercased()) }
        updated.headers += fresh
        updated.requestTime = requestTime.timeIntervalSince1970
        updated.responseTime = responseTime.timeIntervalSince1970
        return updated
    }
}
