import Foundation
import QuireCluster

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
        let log: String
        let exited: Bool
        var description: String {
            (exited ? "etcd exited before it answered" : "etcd did not answer within 60 s") + "; its log:\n\(log)"
        }
    }

    let process = Process()
    let dataDirectory: String
    let clientURL: String
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
            "--name", "test", "--data-dir", dataDirectory + "/data",
            "--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
            "--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
            "--initial-cluster", "test=\(peerURL)", "--log-level", "error",
        ]
        let log = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    /// Waits until etcd answers a range request (up to 60 s: a full test run on two cores can
    /// keep a starting etcd waiting); throws at once when it exited.
    func ready() async throws -> EtcdClient {
        let client = EtcdClient(endpoints: [clientURL], requestTimeout: .seconds(2))
        for _ in 0..<600 where process.isRunning {
            if (try? await client.range(.key("ready"))) != nil { return client }
            try await Task.sleep(for: .milliseconds(100))
        }
        client.shutdown()
        throw NotReady(log: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "", exited: !process.isRunning)
    }

    /// A started member that answers: one that exits at once (a port probed free was taken by
    /// a parallel test before etcd bound it) is started again on other ports, up to three times.
    static func started() async throws -> (EtcdServer, EtcdClient) {
        var attempt = 1
        while true {
            let server = try EtcdServer()
            do {
                return (server, try await server.ready())
            } catch let error as NotReady where error.exited && attempt < 3 {
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

    /// A port the kernel just handed out (bound to port 0, then released).
    static func freePort() throws -> Int {
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
