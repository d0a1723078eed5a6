#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// What a process ended during a writer-lock wait (``WriterLockWait/isWaitingLong``) must
/// remove first: a plain copy waits for the lock with its temporary file already made (and
/// perhaps its destination directory), and a signal handler's exit skips every `defer`.
///
/// Read by the signal handler: fixed buffers and an atomic flag, no allocation, no lock.
package enum WaitExitCleanup {
    private static let capacity = Int(PATH_MAX) + 1
    nonisolated(unsafe) private static let file = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
    nonisolated(unsafe) private static let directory = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
    /// 0: nothing registered; 1: the file; 2: the file and the directory.
    private static let registered = Atomic<Int>(0)

    /// Registers `file`, and `directory` when the copy created it, for removal by an exit
    /// during the wait. Paths longer than the buffers are not registered.
    static func register(file path: String, directory created: String?) {
        registered.store(0, ordering: .sequentiallyConsistent)
        guard copy(path, into: file) else { return }
        if let created, copy(created, into: directory) {
            registered.store(2, ordering: .sequentiallyConsistent)
        } else {
            registered.store(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Nothing to remove any more (the wait ended, or the copy cleans up itself).
    static func clear() {
        registered.store(0, ordering: .sequentiallyConsistent)
    }

    /// Removes what is registered. Async-signal-safe: an atomic load, `unlink(2)`, `rmdir(2)`.
    package static func removeRegistered() {
        let what = registered.exchange(0, ordering: .sequentiallyConsistent)
        guard what > 0 else { return }
        unlink(file)
        if what == 2 { rmdir(directory) }
    }

    private static func copy(_ path: String, into buffer: UnsafeMutablePointer<CChar>) -> Bool {
        let bytes = Array(path.utf8CString)
        guard bytes.count <= capacity else { return false }
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: $0.count) }
        return true
    }
}
