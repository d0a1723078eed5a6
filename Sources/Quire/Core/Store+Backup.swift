import Foundation
internal import QuireLMDB

extension Store {
    /// Writes a consistent copy of the store into `destination` (absent or an empty
    /// directory), even while other threads and processes read and write it. The copy appears
    /// whole or not at all, readable by its owner only.
    ///
    /// With `compact` (the default) the copy leaves out free pages and renumbers the rest, and
    /// the records of compressed collections written before their dictionary was trained are
    /// rewritten with it (values, keys and indexes unchanged).
    ///
    /// - Throws: `StoreError` (`.cancelled` when `isCancelled` returned true; nothing is left
    ///   behind then).
    public func backup(to destination: String, compact: Bool = true, isCancelled: (() -> Bool)? = nil)
        throws(StoreError)
    {
        // A plain copy takes LMDB's write lock, which the writer's thread holds inside a write.
        precondition(!isInsideWrite, "Quire: store.backup(to:) inside a write transaction would wait for itself; back up after the write returns")
        try StoreError.boundary("\(path): backup to \(destination)") {
            do {
                try environment.copy(to: destination, compact: compact, isCancelled: isCancelled)
            } catch let error as LMDBError where error.code == ECANCELED {
                throw StoreError(.cancelled, "\(path): backup to \(destination) cancelled")
            }
        }
        if compact { try Self.recompress(at: destination, isCancelled: isCancelled) }
    }

    /// Rewrites, in the store at `path` (a fresh copy no one else uses), the records of
    /// compressed collections not yet compressed with their dictionary, then compacts the file
    /// again so the rewrite leaves no free pages. What `backup(compact:)` and `quire copy
    /// --compact` run on their copy. Not public: on a store in use it would empty collections
    /// under its readers and rename a file over the one other processes write.
    /// - Returns: how many records were rewritten.
    @discardableResult
    package static func recompress(at path: String, isCancelled: (() -> Bool)? = nil) throws(StoreError) -> Int {
        let rewritten = try StoreError.boundary("\(path): recompressing") { () throws -> Int in
            // A plain LMDB environment (not a Quire store), or one without compressed
            // collections, is left exactly as copied.
            guard try hasCompressedCollections(path) else { return 0 }
            let store = try Store(path: path)
            defer { store.close() }
            return try store.writer.runSync { try store.recompressRecords(isCancelled: isCancelled) }
        }
        guard rewritten > 0 else { return 0 }
        try StoreError.boundary("\(path): compacting after recompression") {
            let scratch = path + "/.recompressed-\(getpid())"
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let env = try Environment(path: path, options: StoreOptions().environmentOptions)
            defer { env.close() }
            try env.copy(to: scratch, compact: true, isCancelled: isCancelled)
            // The compacted file replaces the rewritten one whole (rename is atomic).
            guard rename(scratch + "/data.mdb", path + "/data.mdb") == 0 else {
                throw StoreError(.storage, "\(path): cannot replace data.mdb: \(String(cString: strerror(errno)))")
            }
        }
        return rewritten
    }

    /// Whether the environment at `path` is a Quire store with a compressed collection.
    private static func hasCompressedCollections(_ path: String) throws -> Bool {
        var options = StoreOptions()
        options.readOnly = true
        let env = try Environment(path: path, options: options.environmentOptions)
        defer { env.close() }
        guard let meta = try? env.openDatabase(StoreLayout.meta, flags: []) else { return false }
        return try env.read { txn in
            for entry in txn.entries(in: meta, range: .prefix(StoreLayout.collectionKey(""))) {
                if let definition = try? JSONDecoder().decode(CollectionDefinition.self, from: Data(entry.value)),
                    definition.compressed
                {
                    return true
                }
            }
            try txn.checkIntact()
            return false
        }
    }
}
