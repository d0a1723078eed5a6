import Foundation
import Testing

/// A store whose lock file this user cannot write still opens for reading (without LMDB's
/// reader table), and the hint names the file that is in the way.
@Suite struct ReadOnlyStoreTests {
    /// Runs `quire` as a user who may read the store but not write its lock file: `nobody`
    /// through `setpriv` when the tests run as root, else this user with the files made read-only.
    private func runAsReader(_ args: [String], store: String) async throws -> QuireResult? {
        let binary = try QuireBinary.url().path
        if geteuid() == 0 {
            let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
            guard FileManager.default.isExecutableFile(atPath: setpriv.path) else { return nil }
            return try await runQuire(
                ["--reuid=65534", "--regid=65534", "--clear-groups", binary, "--store", store] + args, executable: setpriv)
        }
        return try await runQuire(["--store", store] + args)
    }

    @Test func readCommandsWorkWhenTheLockFileIsNotWritable() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 5)
            let reference = try await runQuire(["--store", store, "dump"])
            let manager = FileManager.default
            try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
            try manager.setAttributes([.posixPermissions: 0o555], ofItemAtPath: store)
            try manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store + "/data.mdb")
            try manager.setAttributes([.posixPermissions: 0o444], ofItemAtPath: store + "/lock.mdb")
            defer { try? manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: store) }
            guard let dump = try await runAsReader(["dump"], store: store) else { return }
            #expect(dump.status == 0, "\(dump)")
            #expect(dump.stdout == reference.stdout)
            let verify = try await #require(try runAsReader(["verify", "--quiet"], store: store))
            #expect(verify.status == 0, "\(verify)")
            // Writing is refused with a hint that names the lock file or the directory, not a guess.
            let load = try await #require(try runAsReader(["load", "-"], store: store))
            #expect(load.status == 1, "\(load)")
            #expect(load.stderr.contains("lock.mdb") || load.stderr.contains("data.mdb"), "\(load)")
        }
    }
}
