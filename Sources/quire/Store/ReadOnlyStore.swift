import QuireLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens an existing store for reading, the way the LMDB tools (`mdb_dump`, `mdb_copy`) do.
enum ReadOnlyStore {
    /// The options for a read-only open.
    ///
    /// A map size of 0 adopts the size recorded in the file instead of imposing our default, so
    /// `mdb_dump` headers and copies carry the store's own map size, as the LMDB tools' do.
    static var options: EnvironmentOptions {
        var options = EnvironmentOptions()
        options.readOnly = true
        options.mapSize = 0
        // Enough handles for any store; each named database takes one for the life of the process.
        options.maxDatabases = 1024
        return options
    }

    /// True when `path` is a directory holding an LMDB data file.
    static func exists(at path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return false }
        return access(path + "/data.mdb", F_OK) == 0
    }

    /// True when `path` is a directory this user may not look into (a store another user made, 0700).
    static func isHiddenByPermissions(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR && access(path + "/data.mdb", F_OK) != 0 && errno == EACCES
    }

    /// Why ``exists(at:)`` is false: no store, or a directory this user may not look into (a
    /// store another user made, 0700), which is not a typo in the path.
    static func absence(at path: String, command: String) -> RuntimeError {
        if StoreDirectoryCheck.isNonDirectory(path) {
            return RuntimeError(command, "\(path): is a file, not a store (a store is the directory that holds data.mdb)")
        }
        if isHiddenByPermissions(path) {
            return RuntimeError(command, "\(path): permission denied: this user cannot look into the store's directory")
        }
        if let leftover = StoreDirectoryCheck.interruptedCopy(in: path) {
            return RuntimeError(command, "\(path): \(StoreDirectoryCheck.interruptedCopyNote(leftover))")
        }
        return RuntimeError(
            command,
            "\(path): no store at this path (make one with 'quire demo', 'fetch' or 'load', or name another with --store or $QUIRE_STORE)")
    }

    /// Opens the store at `path` read-only, so it works while another process writes.
    /// - Throws: `RuntimeError` "`command`: `path`: no store at this path" when there is none,
    ///   or with LMDB's reason when it cannot be opened.
    static func open(_ path: String, command: String) throws(RuntimeError) -> Environment {
        guard exists(at: path) else { throw absence(at: path, command: command) }
        do {
            return try Environment(path: path, options: options)
        } catch {
            throw RuntimeError(command, MetaPageAdvice.adding(to: "\(path): \(describe(error))", path))
        }
    }

    /// LMDB's message and hint, without the operation and path (the caller names the path).
    static func describe(_ error: LMDBError) -> String {
        if let hint = error.hint { return "\(error.message) (\(hint))" }
        return error.message
    }
}
