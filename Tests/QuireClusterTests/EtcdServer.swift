import Foundation
import QuireCluster
import QuireHTTP
import Synchronization
import QuireTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One etcd member on loopback for a test: random free ports, a temporary data directory,
/// stopped by its PID. A machine without etcd fails the test with a message saying how to get it.
final class EtcdServer {
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "etcd is not installed (no etcd on PATH): run scripts/install-deps.sh (Debian's etcd-server)"
        }
    }

    struct NotReady: Error, CustomStringConvertible {
        enum Reason { case exited, timedOut, anotherAnswered }
        let log: String
        let reason: Reason
        /// Started again on other ports, it may answer.
        var isRetryable: Bool { reason != .timedOut }
        var description: String {
            let what =
                switch reason {
                case .exited: "etcd exited before it answered"
                case .timedOut: "etcd did not answer within 60 s"
                case .anotherAnswered: "another etcd answered on its port"
                }
            return what + "; its log:\n\(log)"
        }
    }

    let process = ChildProcess()
    let dataDirectory: String
    let clientURL: String
    /// The member's name, unique: a client that reached another test's etcd (on a port probed
    /// free twice) finds another name in the member list.
    let name = "quire-test-\(UUID().uuidString)"
    private let logPath: String

    init() throws {
        guard let binary = Self.find("etcd") else { throw Missing() }
        dataDirectory = NSTemporaryDirectory() + "quire-etcd-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let clientPort = try Self.freePort()
        let peerPort = try Self.freePort()
        clientURL = "http://127.0.0.1:\(clientPort)"
        let peerURL = "http://127.0.0.1:\(peerPort)"
        logPath = dataDirectory + ".log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "--name", name, "--data-dir", dataDirectory + "/data",
            "--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
            "--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
            "--initial-cluster", "\(name)=\(peerURL)", "--log-level", "error",
        ]
        let log = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    /// Waits until etcd answers a range request (up to 60 s: a full test run on two cores can
    /// keep a starting etcd waiting) and is this member (by its name); throws at once when it
    /// exited or another etcd answers on its port.
    func ready() async throws -> EtcdClient {
        let client = EtcdClient(endpoints: [clientURL], requestTimeout: .seconds(2))
        var reason = NotReady.Reason.timedOut
        for _ in 0..<600 where process.isRunning {
            if (try? await client.range(.key("ready"))) != nil {
                if try await answersAsItself() { return client }
                reason = .anotherAnswered
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        client.shutdown()
        if !process.isRunning { reason = .exited }
        throw NotReady(log: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "", reason: reason)
    }

    /// Whether the etcd on `clientURL` lists this member: a parallel test's etcd that took the
    /// port first answers too, and its tests and this one would share their keys.
    private func answersAsItself() async throws -> Bool {
        let http = HTTPClient()
        defer { http.shutdown() }
        let response = try await http.post(
            clientURL + "/v3/cluster/member/list", body: Array("{}".utf8), headers: [("Content-Type", "application/json")])
        return response.isSuccess && response.bodyText.contains("\"\(name)\"")
    }

    /// A started member that answers: one that exits at once (a port probed free was taken by
    /// a parallel test before etcd bound it) is started again on other ports, up to three times.
    static func started() async throws -> (EtcdServer, EtcdClient) {
        var attempt = 1
        while true {
            let server = try EtcdServer()
            do {
                return (server, try await server.ready())
            } catch let error as NotReady where error.isRetryable && attempt < 3 {
                server.stop()
                attempt += 1
            } catch {
                server.stop()
                throw error
            }
        }
    }

    /// Stops etcd by its PID (SIGTERM, then SIGKILL) and removes its files.
    func stop() {
        let pid = process.processIdentifier
        if process.isRunning {
            kill(pid, SIGTERM)
            for _ in 0..<50 where process.isRunning { usleep(100_000) }
            if process.isRunning { kill(pid, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: dataDirectory)
        try? FileManager.default.removeItem(atPath: logPath)
    }

    deinit { stop() }

    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map { "\($0)/\(name)" } + ["/usr/bin/\(name)"])
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The ports handed out in this process: the kernel may hand a released port out again
    /// before the etcd it was probed for has bound it.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port the kernel just handed out (bound to port 0, then released), never one this
    /// process handed out before.
    static func freePort() throws -> Int {
        for _ in 0..<100 {
            let port = try probedPort()
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
        throw POSIXError(.EADDRINUSE)
    }

    private static func probedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Runs `body` with a fresh etcd and a client of it; stops etcd afterwards whatever happens.
func withEtcd<R>(_ body: (EtcdClient, EtcdServer) async throws -> R) async throws -> R {
    let (server, client) = try await EtcdServer.started()
    defer { server.stop() }
    defer { client.shutdown() }
    return try await body(client, server)
}
