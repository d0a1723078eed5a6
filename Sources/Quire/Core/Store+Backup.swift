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
        guard compact else {
            try StoreError.boundary("\(path): backup to \(destination)") {
                try environment.copy(to: destination, compact: false, isCancelled: isCancelled)
            }
            return
        }
        try Self.compactCopy(of: path, to: destination, isCancelled: isCancelled) { staging in
            try environment.copy(to: staging, compact: true, isCancelled: isCancelled)
        }
    }

    /// Makes a compacted copy in `destination` (absent or an empty directory): `copy` writes it
    /// into a staging directory (compacted), where the records written before their
    /// dictionary are rewritten with it; only then does it appear as `destination/data.mdb`. A
    /// copy killed at any point leaves no `data.mdb`, only a staging directory the next copy
    /// removes (the rewrite went through states missing records: one killed midway had looked
    /// like a finished backup). Damage met in the staging copy is named as `source`'s: the
    /// staging directory is gone by the time anyone reads the error.
    package static func compactCopy(
        of source: String, to destination: String, isCancelled: (() -> Bool)?, copy: (_ staging: String) throws -> Void
    ) throws(StoreError) {
        try StoreError.boundary("\(destination): compacted copy") {
            if mkdir(destination, 0o700) != 0 && errno != EEXIST {
                throw StoreError(.storage, "\(destination): cannot make the directory: \(String(cString: strerror(errno)))")
            }
            if access(destination + "/data.mdb", F_OK) == 0 {
                throw StoreError(.storage, "\(destination): the destination already holds a store")
            }
            try Environment.removePartialCopies(in: destination)
            let staging = try Environment.makeStagingDirectory(in: destination)
            defer { Environment.removeTree(staging) }
            try copy(staging)
            do {
                try recompress(at: staging, isCancelled: isCancelled)
            } catch let error as StoreError where error.code == .corrupted {
                // Not the error itself: it names the staging path throughout.
                throw StoreError(
                    .corrupted, "\(source): \(StoreError.corruptionMessage) (met in its compacted copy; nothing is left in \(destination))")
            }
            if isCancelled?() == true { throw StoreError(.cancelled, "\(destination): the copy was cancelled") }
            try Environment.publishStagedCopy(staging, to: destination)
        }
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
