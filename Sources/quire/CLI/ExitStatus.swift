/// The process exit statuses of `quire`.
enum ExitStatus {
    static let success: Int32 = 0
    /// A runtime failure: the store is missing or corrupt, the network failed, …
    static let failure: Int32 = 1
    /// `EX_USAGE` from sysexits.h: the command line was wrong.
    static let usage: Int32 = 64
    /// 128 + SIGINT, like a shell: the user stopped the command, the store is consistent.
    static let interrupted: Int32 = 130
}
