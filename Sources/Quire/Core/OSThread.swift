import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads of the store's own, started with `pthread_create` so that a failure is seen.
///
/// Foundation's `Thread.start()` fails silently when the system cannot make a thread (`ENOMEM`
/// under `ulimit -v`, `EAGAIN` at the process's thread limit): the work never ran, and whoever
/// waited for it waited for ever, deaf to Ctrl-C.
enum OSThread {
    /// A thread could not be started.
    struct StartError: Error, CustomStringConvertible {
        let code: Int32
        var description: String { "cannot start a thread: \(String(cString: strerror(code)))" }
    }

    private final class Start {
        let name: String?
        let body: () -> Void
        init(name: String?, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Runs `body` on a new detached thread (named `name`, with `stackSize` bytes of stack when
    /// given); throws when no thread could be made, without running it.
    static func start(name: String? = nil, stackSize: Int? = nil, _ body: @escaping () -> Void) throws(StartError) {
        // Allocated, not a Swift value: the C struct's zero initializer is not visible here.
        let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
        pthread_attr_init(attributes)
        defer {
            pthread_attr_destroy(attributes)
            attributes.deallocate()
        }
        pthread_attr_setdetachstate(attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(attributes, stackSize) }
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        #if canImport(Glibc)
        var thread: pthread_t = 0
        #else
        var thread: pthread_t?
        #endif
        let code = pthread_create(&thread, attributes, { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            // Foundation names the OS thread (what debuggers and `top -H` show).
            if let name = start.name { Thread.current.name = name }
            start.body()
            return nil
        }, start)
        guard code == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw StartError(code: code)
        }
    }
}
