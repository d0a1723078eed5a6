#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The staging directories (``Environment/creationPrefix``) that first opens killed midway left
/// in a store's directory: harmless, but nothing else would ever remove them.
enum AbandonedCreations {
    /// How old a staging directory must be to be taken for abandoned: a creation takes well under
    /// a second, and its process holds no lock on the directory's `lock.mdb` for a moment in it.
    static let age: time_t = 60

    /// Removes those in `path` that are over a minute old and whose `lock.mdb`, if any, no other
    /// process holds: LMDB keeps a lock on its first byte while an environment is open (asked
    /// with `F_GETLK`, which takes none).
    static func remove(in path: String) {
        let names = directoryNames(path) ?? []
        let abandoned = names.filter { $0.hasPrefix(Environment.creationPrefix) }.map { path + "/" + $0 }.filter(isAbandoned)
        for staging in abandoned { removeStaging(staging) }
    }

    /// Removes a staging directory and the environment files in it (the directory stays if
    /// anything else is in it).
    static func removeStaging(_ staging: String) {
        unlink(staging + "/data.mdb")
        unlink(staging + "/lock.mdb")
        rmdir(staging)
    }

    private static func isAbandoned(_ staging: String) -> Bool {
        var info = stat()
        guard stat(staging, &info) == 0 else { return false }
        #if canImport(Darwin)
            let modified = info.st_mtimespec.tv_sec
        #else
            let modified = info.st_mtim.tv_sec
        #endif
        guard time(nil) - modified > age else { return false }
        errno = 0
        guard let locked = Environment.isLockedByAnother(staging + "/lock.mdb") else { return errno == ENOENT }
        return !locked
    }
}
