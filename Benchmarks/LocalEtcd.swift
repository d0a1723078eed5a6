import Foundation
import QuireCluster

#if canImport(Glibc)
    import Glibc
#endif

/// A one-member etcd on loopback for the cluster cases: free ports, a temporary data directory,
/// stopped by its PID in `stop()`.
final class LocalEtcd {
    let process = Process()
    let directory: String
    let client: EtcdClient

    init() throws {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map {
            "\($0)/etcd"
        }
        guard let binary = (path + ["/usr/bin/etcd"]).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { throw BenchError("etcd is not installed: run scripts/install-deps.sh (Debian's etcd-server)") }
        directory = NSTemporaryDirectory() + "quire-bench-etcd-\(UUID().uuidString)"
        let client = "http://127.0.0.1:\(try Self.freePort())"
        let peer = "http://127.0.0.1:\(try Self.freePort())"
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "--name", "bench", "--data-dir", directory, "--listen-client-urls", client, "--advertise-client-urls",
            client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "bench=\(peer)",
            "--log-level", "error", "--quota-backend-bytes", String(8 << 30),
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.client = EtcdClient(endpoints: [client])
        let etcd = self.client
        for attempt in 0... {
            if (try? blockingAwait { try await etcd.range(.key("ready")) }) != nil { break }
            if attempt == 200 {
                stop()
                throw BenchError("etcd did not start within 20 s")
            }
            usleep(100_000)
        }
    }

    func stop() {
        client.shutdown()
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw BenchError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
