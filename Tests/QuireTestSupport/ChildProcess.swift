public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process for tests, started with `posix_spawn`: the subset of Foundation's `Process`
/// that the tests use, under the same names.
///
/// Why not `Process`: on Linux, the toolchain's Foundation finds the descriptors to close in the
/// child by reading `/proc/self/fd` and copying each entry's whole 256-byte name field, which
/// reads past the end of glibc's directory buffer once the listing fills it (about 1,360 open
/// descriptors). A full test run holds that many at its peak (stores, servers and children of
/// tests running side by side), and the copy then ends the whole test process with SIGSEGV when
/// the buffer lies at the end of its mapping. Here the child closes every descriptor above 2
/// with glibc's `posix_spawn_file_actions_addclosefrom_np` instead; nothing is listed.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: the configuration is set before `run()` on one task; what changes after
    // (the exit status) is behind `state`.

    /// How the process ended.
    public enum TerminationReason: Sendable {
        case exit
        case uncaughtSignal
    }

    /// The program to run.
    public var executableURL: URL?
    /// Its arguments (without the program's name).
    public var arguments: [String] = []
    /// Its whole environment; nil inherits this process's.
    public var environment: [String: String]?
    /// Its working directory; nil inherits this process's.
    public var currentDirectoryURL: URL?
    /// A `FileHandle` (`FileHandle.nullDevice` for `/dev/null`) or a `Pipe`; nil inherits.
    public var standardInput: Any?
    /// A `FileHandle` (`FileHandle.nullDevice` for `/dev/null`) or a `Pipe`; nil inherits.
    public var standardOutput: Any?
    /// A `FileHandle` (`FileHandle.nullDevice` for `/dev/null`) or a `Pipe`; nil inherits.
    public var standardError: Any?

    private struct State {
        var pid: pid_t = 0
        /// The raw `waitpid` status once the child was reaped.
        var status: Int32?
    }
    private let state = Mutex(State())
    /// Entered at `run()`, left once the child is reaped: `waitUntilExit()` waits on it.
    private let exited = DispatchGroup()

    public init() {}

    /// The child's process id (0 before `run()`).
    public var processIdentifier: Int32 { state.withLock { $0.pid } }

    /// Starts the program.
    /// - Throws: `POSIXError` when it cannot be started (no such file, not executable).
    public func run() throws {
        guard let executableURL else { throw POSIXError(.ENOENT) }
        let path = executableURL.path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var nullDevice: Int32 = -1
        defer { if nullDevice >= 0 { close(nullDevice) } }
        func descriptor(_ stream: Any?, child: Int32) throws -> Int32? {
            switch stream {
            case let pipe as Pipe:
                return child == STDIN_FILENO ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
            case let handle as FileHandle where handle === FileHandle.nullDevice:
                if nullDevice < 0 { nullDevice = open("/dev/null", O_RDWR | O_CLOEXEC) }
                guard nullDevice >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                return nullDevice
            case let handle as FileHandle:
                return handle.fileDescriptor
            default:
                return nil
            }
        }
        let streams = [(standardInput, STDIN_FILENO), (standardOutput, STDOUT_FILENO), (standardError, STDERR_FILENO)]
        for (stream, child) in streams {
            if let source = try descriptor(stream, child: child) {
                posix_spawn_file_actions_adddup2(&actions, source, child)
            }
        }
        if let directory = currentDirectoryURL?.path {
            try Self.check(SpawnExtensions.addChangeDirectory(&actions, directory))
        }
        let closing = SpawnExtensions.addCloseFrom(&actions, 3)
        if closing == ENOSYS {
            // glibc before 2.34: each descriptor open now, one by one (none leaks to the child).
            for descriptor in 3..<Int32(min(sysconf(Int32(_SC_OPEN_MAX)), 1 << 16)) where fcntl(descriptor, F_GETFD) >= 0 {
                posix_spawn_file_actions_addclose(&actions, descriptor)
            }
        } else {
            try Self.check(closing)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, as `Process` does: a signal sent to the test's group (a
        // terminal's Ctrl-C) does not reach it twice. And signals as a shell starts a program:
        // none blocked, none ignored (the test process may block or ignore some for itself).
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        for signal: Int32 in 1..<32 where signal != SIGKILL && signal != SIGSTOP { sigaddset(&signals, signal) }
        posix_spawnattr_setsigdefault(&attributes, &signals)

        let argv = ([path] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        // Entered before the child exists: a `waitUntilExit()` from another thread waits for it.
        exited.enter()
        let spawned = (argv + [nil]).withUnsafeBufferPointer { arguments in
            if let envp {
                return (envp + [nil]).withUnsafeBufferPointer { variables in
                    posix_spawn(&pid, path, &actions, &attributes, arguments.baseAddress!, variables.baseAddress!)
                }
            }
            return posix_spawn(&pid, path, &actions, &attributes, arguments.baseAddress!, environ)
        }
        guard spawned == 0 else {
            exited.leave()
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO)
        }
        state.withLock { $0.pid = pid }
        // Reaped as soon as it ends, as `Process` does, by a thread of its own: no zombie is left
        // for a test that never asks, and `isRunning` is a read.
        let reaper = Thread { [self, pid] in
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
            // Reaped elsewhere (it cannot be here): an unknown end, told as exit status 255.
            state.withLock { $0.status = result == pid ? status : 0xFF00 }
            exited.leave()
        }
        reaper.name = "ChildProcess reaper"
        reaper.start()
        // The child has its own copies: close this process's ends that belong to the child, so a
        // reader of a pipe sees its end when the child exits.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardError as? Pipe { try? pipe.fileHandleForWriting.close() }
    }

    /// Whether the child was started and has not exited yet.
    public var isRunning: Bool {
        state.withLock { $0.pid > 0 && $0.status == nil }
    }

    /// Waits until the child exits (at once when it has, or was never started).
    public func waitUntilExit() {
        exited.wait()
    }

    /// Waits until the child exits or `seconds` pass; whether it exited.
    public func waitUntilExit(timeout seconds: Double) -> Bool {
        exited.wait(timeout: .now() + seconds) == .success
    }

    /// The exit code, or the signal's number when a signal ended it; -1 while it runs.
    public var terminationStatus: Int32 {
        guard let status = state.withLock({ $0.status }) else { return -1 }
        return Self.signalled(status) ? status & 0x7f : (status >> 8) & 0xff
    }

    /// Whether it exited or a signal ended it (`.exit` while it runs).
    public var terminationReason: TerminationReason {
        guard let status = state.withLock({ $0.status }) else { return .exit }
        return Self.signalled(status) ? .uncaughtSignal : .exit
    }

    /// Sends SIGTERM, unless the child has ended (its id may belong to another process by then).
    public func terminate() { signal(SIGTERM) }

    /// Sends SIGINT, unless the child has ended.
    public func interrupt() { signal(SIGINT) }

    /// Sends `number`, unless the child has ended.
    public func signal(_ number: Int32) {
        state.withLock { state in
            if state.pid > 0 && state.status == nil { kill(state.pid, number) }
        }
    }

    private static func signalled(_ status: Int32) -> Bool {
        let signal = status & 0x7f
        return signal != 0 && signal != 0x7f
    }

    private static func check(_ code: Int32) throws {
        if code != 0 { throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO) }
    }
}

/// glibc's `posix_spawn` extensions that its headers declare only for `_GNU_SOURCE`, which
/// Swift's Glibc module is not built with; looked up by name (glibc 2.34 and later have both).
private enum SpawnExtensions {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static let closeFrom: CloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    private static let changeDirectory: ChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

    static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32 {
        closeFrom?(actions, lowest) ?? ENOSYS
    }

    static func addChangeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32 {
        guard let changeDirectory else { return ENOSYS }
        return path.withCString { changeDirectory(actions, $0) }
    }

    private static func symbol<F>(_ name: String) -> F? {
        // RTLD_DEFAULT is a null handle on glibc.
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: F.self) }
    }
}
