import Foundation
import QuireServe

#if canImport(Glibc)
    import Glibc
#endif

/// `quire-bench serve-fixed FILE [--port N]`: the baseline of `scripts/bench-serve.sh`, the
/// same libmicrohttpd layer as `quire serve` (same daemon settings, same headers) answering
/// every request with FILE's bytes. Prints its URL, serves until SIGINT/SIGTERM.
enum ServeFixedBody {
    static func runIfAsked(_ arguments: [String]) {
        guard arguments.first == "serve-fixed" else { return }
        guard arguments.count >= 2, let body = FileManager.default.contents(atPath: arguments[1]) else {
            fail("usage: quire-bench serve-fixed FILE [--port N] (FILE must be readable)", status: 64)
        }
        var port = 0
        if let flag = arguments.firstIndex(of: "--port"), flag + 1 < arguments.count, let n = Int(arguments[flag + 1]) {
            port = n
        }
        // Blocked before the daemon's threads start, so they inherit the mask and sigwait gets them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        let server: FixedBodyServer
        do {
            server = try FixedBodyServer(body: Array(body), port: port)
        } catch {
            fail("serve-fixed: \(error)", status: 1)
        }
        FileHandle.standardOutput.write(
            Data("quire-bench: serving \(body.count) fixed bytes at http://127.0.0.1:\(server.port)/\n".utf8))
        var received: Int32 = 0
        sigwait(&signals, &received)
        server.stop()
        exit(0)
    }
}
