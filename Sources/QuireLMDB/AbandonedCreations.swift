#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The staging directories (``Environment/creationPrefix``) that first opens killed midway left
/// in a store's directory: harmless, but nothing else would ever remove them.
enum AbandonedCreations {
    /// Removes those in `path` but `own` that no process is using: LMDB holds a lock on the
    /// first byte of an open environment's `lock.mdb` (asked with `F_GETLK`, which takes none);
    /// one without a lock file is left alone for a minute (its process may be about to open it).
    static func remove(in path: String, except own: String) {
        guard let directory = opendir(path) else { return }
        var abandoned: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            let staging = path + "/" + name
            if name.hasPrefix(Environment.creationPrefix), staging != own, isAbandoned(staging) { abandoned.append(staging) }
        }
        closedir(directory)
        for staging in abandoned {
            unlink(staging + "/data.mdb")
            unlink(staging + "/lock.mdb")
            rmdir(staging)  // fails, leaving it, if anything else is in it
        }
    }

    private static func isAbandoned(_ staging: String) -> Bool {
        let lockFile = open(staging + "/lock.mdb", O_RDWR | O_CLOEXEC)
        guard lockFile >= 0 else {
            var info = stat()
            guard errno == ENOENT, stat(staging, &info) == 0 else { return false }
            return time(nil) - info.st_mtim.tv_sec > 60
        }
        defer { close(lockFile) }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 1
        guard fcntl(lockFile, F_GETLK, &probe) == 0 else { return false }
        return probe.l_type == Int16(F_UNLCK)
    }
}
