#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's open-file limit, settled before anything starts. libdispatch's worker monitor
/// traps (SIGILL) when it cannot open a `/proc` file, so `ulimit -n 4` crashed every command,
/// and a load or a server that used up a low limit could crash the same way.
enum DescriptorLimit {
    /// Below this even a short command cannot run: it stops at once with a message.
    static let minimum: rlim_t = 16
    /// A lower soft limit is raised toward the hard one (a load or a server holds dozens).
    static let wanted: rlim_t = 256

    /// Raises a low soft limit as far as the hard limit allows; the reason to stop when even
    /// that leaves fewer than ``minimum`` descriptors.
    static func settle() -> String? {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        if limit.rlim_cur < wanted && limit.rlim_max > limit.rlim_cur {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, wanted)
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        guard limit.rlim_cur < minimum else { return nil }
        return "only \(limit.rlim_cur) open files are allowed (ulimit -n): quire needs at least \(minimum)"
    }

    #if canImport(Glibc)
        private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        private static let resource = RLIMIT_NOFILE
    #endif
}
