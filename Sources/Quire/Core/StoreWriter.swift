/// The single writer of a store: an actor on its own thread.
///
/// LMDB allows one write transaction at a time, and it must begin and commit on one thread.
/// Work sent here runs synchronously from begin to commit inside one actor job, on a dedicated
/// thread, so commits and their fsyncs never block Swift's cooperative pool.
public actor StoreWriter {
    private nonisolated let thread: WriterThread

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        thread.asUnownedSerialExecutor()
    }

    /// Starts the writer's thread; throws when the system cannot make one.
    init() throws(OSThread.StartError) {
        thread = try WriterThread(name: "quire.writer")
    }

    /// Runs synchronous work on the writer thread.
    func run<R: Sendable>(_ work: @Sendable () throws -> R) throws -> R {
        try work()
    }

    /// Runs synchronous work on the writer thread from any thread, waiting for it.
    nonisolated func runSync<R>(_ work: () throws -> R) throws -> R {
        try thread.runSync(work)
    }

    /// Whether the caller is on the writer thread.
    nonisolated var isCurrent: Bool { thread.isCurrent }

    /// Ends the writer thread once queued work is done.
    nonisolated func stop() {
        thread.stop()
    }
}
