internal import CLMDB

/// What a process does when LMDB fails one of its internal assertions.
///
/// LMDB checks some page invariants with assertions; on a damaged file one can fail, and LMDB
/// then prints `mdb.c:…: Assertion '…' failed` to stderr and calls `abort()`. A program that
/// wants to end differently (a command-line tool printing its own message and exit status)
/// installs a handler here before opening any environment; it is called with LMDB's message
/// first, and should not return (if it does, LMDB prints and aborts as before). The handler
/// runs on the failing thread, in the middle of an LMDB call: only async-signal-safe work
/// (`write(2)`, `_exit(2)`) is safe in it.
package enum LMDBAssertionHook {
    /// The handler's type: LMDB's message, as a C string.
    package typealias Handler = @convention(c) (UnsafePointer<CChar>?) -> Void

    nonisolated(unsafe) private static var handler: Handler?

    /// Sets the handler for environments opened from now on. Call once, at startup, before any
    /// environment is opened (the handler is read without a lock).
    package static func install(_ handler: Handler?) {
        self.handler = handler
    }

    /// Registers the trampoline with a new environment when a handler is installed.
    static func attach(to env: OpaquePointer) {
        guard handler != nil else { return }
        _ = mdb_env_set_assert(env) { _, message in
            LMDBAssertionHook.handler?(message)
        }
    }
}
