import QuireLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Decides whether a write command may create a store at a path.
///
/// Only a missing path or an empty directory becomes a new store; a directory holding a store
/// opens as that store (its data file is checked when opened). Anything else — a file, a
/// directory with other files in it (`--store .`, `--store /`, a home directory) — is refused,
/// so a mistyped path never scatters LMDB files among someone's own.
enum StoreDirectoryCheck {
    /// Throws `RuntimeError` "`command`: `path`: …" when `path` may not become or be a store.
    static func checkWritable(_ path: String, command: String) throws(RuntimeError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            guard errno == ENOENT else { throw RuntimeError(command, "\(path): \(errorString(errno))") }
            if let why = missingParent(of: path) { throw RuntimeError(command, "\(path): cannot create the store: \(why)") }
            return
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw RuntimeError(command, "\(path): exists and is not a store directory")
        }
        if access(path + "/data.mdb", F_OK) == 0 { return }
        if ReadOnlyStore.isHiddenByPermissions(path) {
            throw RuntimeError(command, "\(path): permission denied: this user cannot look into the store's directory")
        }
        guard let names = directoryNames(path) else {
            throw RuntimeError(command, "\(path): \(errorString(errno))")
        }
        for name in names {
            if name.hasPrefix(Environment.partialCopyPrefix) {
                throw RuntimeError(command, "\(path): \(interruptedCopyNote(name))")
            }
            // A lock file alone, or the directory a new store's file is made in, is what an
            // interrupted first open leaves; neither holds data.
            if name != "lock.mdb" && !name.hasPrefix(Environment.creationPrefix) {
                throw RuntimeError(
                    command,
                    "\(path): is not a store and not empty; refusing to create a store in it (use a new or empty directory)"
                )
            }
        }
    }

    /// Why the directory that would hold a new `path` is missing or unreadable, or nil: a new
    /// store (or copy) is made in an existing directory, so say which one is missing.
    static func missingParent(of given: String) -> String? {
        var path = given
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }  // `./dest/` is `./dest`
        let slash = path.lastIndex(of: "/")
        let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        var info = stat()
        guard stat(parent, &info) != 0 else { return nil }
        return "its directory \(parent) \(errno == ENOENT ? "does not exist" : "cannot be read (\(errorString(errno)))")"
    }

    /// Whether something other than a directory is at `path` (a file, a device, a socket).
    static func isNonDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFDIR
    }

    /// The name of what an interrupted `copy` left in the directory `path` (its partial data
    /// file), or nil.
    static func interruptedCopy(in path: String) -> String? {
        directoryNames(path)?.first { $0.hasPrefix(Environment.partialCopyPrefix) }
    }

    /// What to say of a directory holding a copy's partial file `name` and no store.
    static func interruptedCopyNote(_ name: String) -> String {
        "no store here, only what an interrupted (or still running) copy left (\(name)): run the copy again (it removes it) or delete it"
    }
}
