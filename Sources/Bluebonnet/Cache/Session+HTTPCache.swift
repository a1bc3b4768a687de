import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// Bluebonnet's HTTP cache store: a `URLCache` to set as `URLSessionConfiguration.urlCache`, with memory and disk
    /// capacities and a directory, as `URLCache` has.
    ///
    /// FoundationNetworking's own `URLCache` is not used by a `Session`: on Linux it keeps one response per URL (a
    /// `Vary` response is served to a request it does not match) and took 80 ms to store a 10 KB response to disk in our
    /// measurement. This store keeps each variant apart, writes each response to a temporary file renamed into place
    /// (a crash mid-write leaves no torn entry), bounds memory and disk with least-recently-used eviction, and is safe
    /// to use from many threads. What to store and when a stored response may be used are decided by the `Session`
    /// (RFC 9111), not here.
    ///
    /// Disk I/O happens on the calling thread: a `Session` calls it only off its event loops.
    public final class HTTPCache: URLCache, @unchecked Sendable {
        // Every mutable field lives in `state`, behind its lock; `directory` is fixed at init.
        private struct Record {
            var entry: CacheEntry
            /// The body, while it is held in memory.
            var body: Data?
            /// The file holding the entry, once it is on disk.
            var file: String?
            var lastAccess: UInt64
        }

        private struct State {
            var records: [String: [String: Record]] = [:]
            var memoryCapacity: Int
            var diskCapacity: Int
            var memoryUsage = 0
            var diskUsage = 0
            var clock: UInt64 = 0
        }

        private static let magic = Data("BBC1".utf8)
        private let directory: URL?
        private let state: Protected<State>

        /// Makes a cache.
        ///
        /// - Parameters:
        ///   - memoryCapacity: The most bytes of bodies kept in memory.
        ///   - diskCapacity:   The most bytes kept on disk; 0 for a memory-only cache.
        ///   - directory:      Where the disk store lives; created if missing, its entries read back. `nil` for a
        ///                     memory-only cache.
        public init(memoryCapacity: Int, diskCapacity: Int, directory: URL? = nil) {
            self.directory = diskCapacity > 0 ? directory : nil
            state = Protected(
                State(memoryCapacity: max(0, memoryCapacity), diskCapacity: directory == nil ? 0 : max(0, diskCapacity))
            )
            super.init(memoryCapacity: 0, diskCapacity: 0, diskPath: nil)
            loadDirectory()
        }

        // MARK: - URLCache

        /// The most bytes of bodies kept in memory.
        override public var memoryCapacity: Int {
            get { state.read { $0.memoryCapacity } }
            set {
                state.write { $0.memoryCapacity = max(0, newValue) }
                evict()
            }
        }

        /// The most bytes kept on disk.
        override public var diskCapacity: Int {
            get { state.read { $0.diskCapacity } }
            set {
                state.write { $0.diskCapacity = directory == nil ? 0 : max(0, newValue) }
                evict()
            }
        }

        /// Bytes of bodies held in memory.
        override public var currentMemoryUsage: Int { state.read { $0.memoryUsage } }

        /// Bytes of files on disk.
        override public var currentDiskUsage: Int { state.read { $0.diskUsage } }

        /// The stored response a request's URL and header fields select (its `Vary` fields must match).
        ///
        /// - Parameter request: The request.
        /// - Returns: The response, or `nil`.
        override public func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
            guard let url = request.url, let key = CacheEntry.key(for: url) else { return nil }
            let headers = (request.allHTTPHeaderFields ?? [:]).map { (name: $0.key, value: $0.value) }
            guard let (entry, body) = lookup(key: key, headers: headers) else {
                return nil
            }
            return CachedURLResponse(
                response: entry.httpResponse(), data: body, userInfo: entry.decodedUserInfo, storagePolicy: .allowed)
        }

        /// Stores a response for a request, replacing the variant it matches.
        ///
        /// - Parameters:
        ///   - cachedResponse: The response; one with `.notAllowed` storage is not stored.
        ///   - request:        The request it answered.
        override public func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
            guard let url = request.url, let key = CacheEntry.key(for: url),
                let entry = CacheEntry(
                    cached: cachedResponse, key: key, requestHeaders: request.allHTTPHeaderFields ?? [:])
            else { return }
            store(entry, body: cachedResponse.data, memoryOnly: cachedResponse.storagePolicy == .allowedInMemoryOnly)
        }

        /// Removes every stored variant of a request's URL.
        override public func removeCachedResponse(for request: URLRequest) {
            guard let url = request.url, let key = CacheEntry.key(for: url) else { return }
            let files = removeVariants(of: key)
            deleteFiles(files)
        }

        /// Removes everything.
        override public func removeAllCachedResponses() {
            removeRecords { _ in true }
        }

        /// Removes what was stored at or after `date`.
        override public func removeCachedResponses(since date: Date) {
            removeRecords { $0.entry.responseTime >= date.timeIntervalSince1970 }
        }

        // MARK: - What a Session uses

        /// The largest body stored: an eighth of the larger capacity.
        var largestEntry: Int { state.read { max($0.memoryCapacity, $0.diskCapacity) / 8 } }

        /// Whether anything is stored for `key`: read from memory only, so it is cheap enough for every request.
        func hasEntries(for key: String) -> Bool {
            state.read { $0.records[key]?.isEmpty == false }
        }

        /// The variant of `key` the request's fields select, with its body; reads the disk when the body is not in
        /// memory. A file that is missing or torn is dropped and reads as a miss.
        func lookup(key: String, headers: [(name: String, value: String)]) -> (CacheEntry, Data)? {
            let found = state.write { state -> (String, Record)? in
                guard let variants = state.records[key],
                    let (id, record) = variants.first(where: { $0.value.entry.matches(headers) })
                else { return nil }
                state.clock += 1
                state.records[key]?[id]?.lastAccess = state.clock
                return (id, record)
            }
            guard let (id, record) = found else { return nil }
            if let body = record.body { return (record.entry, body) }
            guard let directory, let file = record.file,
                let (entry, body) = Self.read(directory.appendingPathComponent(file)), entry.key == key,
                entry.variantID == id
            else {
                drop(key: key, id: id, ifFile: record.file)
                return nil
            }
            return (entry, body)
        }

        /// Stores a variant: in memory at once, then on disk (unless `memoryOnly`), replacing the variant it matches.
        /// A body larger than an eighth of the larger capacity is not stored.
        func store(_ entry: CacheEntry, body: Data, memoryOnly: Bool) {
            guard body.count <= largestEntry else { return }
            let id = entry.variantID
            var replacedFile: String?
            state.write { state in
                state.clock += 1
                if let old = state.records[entry.key]?[id] {
                    state.memoryUsage -= old.body?.count ?? 0
                    if let file = old.file {
                        state.diskUsage -= old.entry.bodyLength
                        replacedFile = file
                    }
                }
                // The body stays in memory until its file is written, so a lookup meanwhile finds it whole; eviction then
                // trims memory to its capacity.
                let record = Record(entry: entry, body: body, file: nil, lastAccess: state.clock)
                state.memoryUsage += record.body?.count ?? 0
                state.records[entry.key, default: [:]][id] = record
            }
            if let directory, let replacedFile {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(replacedFile))
            }
            if let directory, !memoryOnly, let file = write(entry, body: body, in: directory) {
                let stale = state.write { state -> Bool in
                    // Replaced or removed while the file was written: that file is nobody's.
                    guard var record = state.records[entry.key]?[id], record.entry == entry, record.file == nil else {
                        return true
                    }
                    record.file = file
                    state.diskUsage += entry.bodyLength
                    state.records[entry.key]?[id] = record
                    return false
                }
                if stale { try? FileManager.default.removeItem(at: directory.appendingPathComponent(file)) }
            }
            evict()
        }

        /// Removes every variant of `key` (§4.4: after an unsafe method succeeds on it) from the index at once; the
        /// files are deleted on another thread, so the caller never waits for the disk.
        func invalidate(key: String) {
            let files = removeVariants(of: key)
            guard !files.isEmpty else { return }
            Offload.run { [self] in deleteFiles(files) }
        }

        // MARK: - Bookkeeping

        /// Takes every variant of `key` out of the index; returns their files.
        private func removeVariants(of key: String) -> [String] {
            state.write { state -> [String] in
                guard let variants = state.records.removeValue(forKey: key) else { return [] }
                for record in variants.values { Self.account(removing: record, from: &state) }
                return variants.values.compactMap(\.file)
            }
        }

        private func drop(key: String, id: String, ifFile file: String?) {
            let removed = state.write { state -> Bool in
                guard let record = state.records[key]?[id], record.file == file else { return false }
                Self.account(removing: record, from: &state)
                state.records[key]?[id] = nil
                if state.records[key]?.isEmpty == true { state.records[key] = nil }
                return true
            }
            if removed, let file { deleteFiles([file]) }
        }

        private func removeRecords(where shouldRemove: (Record) -> Bool) {
            let files = state.write { state -> [String] in
                var files: [String] = []
                for (key, variants) in state.records {
                    for (id, record) in variants where shouldRemove(record) {
                        Self.account(removing: record, from: &state)
                        state.records[key]?[id] = nil
                        if let file = record.file { files.append(file) }
                    }
                    if state.records[key]?.isEmpty == true { state.records[key] = nil }
                }
                return files
            }
            deleteFiles(files)
        }

        private static func account(removing record: Record, from state: inout State) {
            state.memoryUsage -= record.body?.count ?? 0
            if record.file != nil { state.diskUsage -= record.entry.bodyLength }
        }

        /// Least recently used first: bodies leave memory (a record not on disk leaves whole), then files leave disk.
        private func evict() {
            let files = state.write { state -> [String] in
                var files: [String] = []
                guard state.memoryUsage > state.memoryCapacity || state.diskUsage > state.diskCapacity else {
                    return files
                }
                var order = state.records.flatMap { key, variants in
                    variants.map { (key: key, id: $0.key, access: $0.value.lastAccess) }
                }
                order.sort { $0.access < $1.access }
                for item in order where state.memoryUsage > state.memoryCapacity {
                    guard var record = state.records[item.key]?[item.id], let body = record.body else { continue }
                    if record.file == nil {
                        // Not on disk (yet, or ever): leaving memory is leaving the cache.
                        state.records[item.key]?[item.id] = nil
                    } else {
                        record.body = nil
                        state.records[item.key]?[item.id] = record
                    }
                    state.memoryUsage -= body.count
                }
                for item in order where state.diskUsage > state.diskCapacity {
                    guard let record = state.records[item.key]?[item.id], let file = record.file else { continue }
                    Self.account(removing: record, from: &state)
                    state.records[item.key]?[item.id] = nil
                    files.append(file)
                }
                state.records = state.records.filter { !$0.value.isEmpty }
                return files
            }
            deleteFiles(files)
        }

        private func deleteFiles(_ files: [String]) {
            guard let directory else { return }
            for file in files { try? FileManager.default.removeItem(at: directory.appendingPathComponent(file)) }
        }

        // MARK: - Disk

        /// `BBC1`, the metadata's length (4 bytes, big-endian), the metadata (JSON), then the body.
        private func write(_ entry: CacheEntry, body: Data, in directory: URL) -> String? {
            guard let metadata = try? JSONEncoder().encode(entry) else { return nil }
            var data = Self.magic
            withUnsafeBytes(of: UInt32(metadata.count).bigEndian) { data.append(contentsOf: $0) }
            data.append(metadata)
            data.append(body)
            let hexDigits = Array("0123456789abcdef".utf8)
            let digest = String(
                decoding: SHA256.hash(data: Data((entry.key + "\n" + entry.variantID).utf8)).prefix(16)
                    .flatMap { [hexDigits[Int($0 >> 4)], hexDigits[Int($0 & 0xF)]] }, as: UTF8.self)
            // A fresh name per write: a concurrent store of the same variant never writes into this file.
            let name = "\(digest)-\(UUID().uuidString.prefix(8).lowercased()).entry"
            let temporary = directory.appendingPathComponent(".tmp-\(UUID().uuidString)")
            do {
                try OwnerOnlyFile.create(data, at: temporary)
                try FileManager.default.moveItem(at: temporary, to: directory.appendingPathComponent(name))
                return name
            } catch {
                try? FileManager.default.removeItem(at: temporary)
                return nil
            }
        }

        /// Whether an entry's key or URL names a user or password.
        static func holdsUserInfo(_ entry: CacheEntry) -> Bool {
            let keyURL = URL(string: String(entry.key.drop { $0 != " " }.dropFirst()))
            return entry.url.user != nil || entry.url.password != nil || keyURL?.user != nil || keyURL?.password != nil
        }

        /// Reads a whole entry file; `nil` when it is not one or is torn.
        private static func read(_ file: URL) -> (CacheEntry, Data)? {
            guard let data = try? Data(contentsOf: file), let (entry, offset) = header(of: data),
                data.count - offset == entry.bodyLength
            else { return nil }
            return (entry, data.subdata(in: data.startIndex + offset..<data.endIndex))
        }

        /// The metadata of an entry file and where its body starts.
        private static func header(of data: Data) -> (CacheEntry, Int)? {
            guard data.count >= 8, data.prefix(4) == magic else { return nil }
            let length = data.dropFirst(4).prefix(4).reduce(0) { $0 << 8 | Int($1) }
            guard length > 0, data.count >= 8 + length,
                let entry = try? JSONDecoder().decode(
                    CacheEntry.self, from: data.subdata(in: data.startIndex + 8..<data.startIndex + 8 + length))
            else { return nil }
            return (entry, 8 + length)
        }

        /// Reads back the entries a previous run left, oldest-modified first, and removes temporary files a crash left.
        private func loadDirectory() {
            guard let directory else { return }
            try? OwnerOnlyFile.makeDirectory(directory)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            var found: [(name: String, entry: CacheEntry, modified: Date)] = []
            for name in names {
                let url = directory.appendingPathComponent(name)
                if name.hasPrefix(".tmp-") {
                    try? FileManager.default.removeItem(at: url)
                    continue
                }
                guard name.hasSuffix(".entry") else { continue }
                // Only the head is read here; the body is read on first use.
                guard let handle = try? FileHandle(forReadingFrom: url) else { continue }
                let prefix = (try? handle.read(upToCount: 64 * 1024)) ?? Data()
                let size = (try? handle.seekToEnd()).map(Int.init) ?? 0
                try? handle.close()
                // An entry an earlier version wrote with a URL's password in it is not read back but removed.
                guard let (entry, offset) = Self.header(of: prefix), size - offset == entry.bodyLength,
                    !Self.holdsUserInfo(entry)
                else {
                    try? FileManager.default.removeItem(at: url)
                    continue
                }
                OwnerOnlyFile.restrict(url)
                let modified =
                    (try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date)
                    ?? .distantPast
                found.append((name, entry, modified))
            }
            found.sort { $0.modified < $1.modified }
            let duplicates = state.write { state -> [String] in
                var duplicates: [String] = []
                for item in found {
                    state.clock += 1
                    let id = item.entry.variantID
                    if let old = state.records[item.entry.key]?[id], let file = old.file {
                        duplicates.append(file)
                        state.diskUsage -= old.entry.bodyLength
                    }
                    state.records[item.entry.key, default: [:]][id] = Record(
                        entry: item.entry, body: nil, file: item.name,
                        lastAccess: state.clock)
                    state.diskUsage += item.entry.bodyLength
                }
                return duplicates
            }
            deleteFiles(duplicates)
            evict()
        }
    }
}
