import Foundation
public import Quire
import QuireHTTP
import QuireLMDB

/// Consistent copies of a member's store, and their installation on a member that fell behind
/// the log's compaction.
///
/// A copy is `mdb_env_copy` of the environment: one read transaction, so the records and the
/// applied revision (``ReplicaState``) in it belong to one commit. A member that installs it
/// resumes the log right after that revision.
public enum StoreSnapshot {
    /// The bytes of a compacted copy of `store`'s environment (its `data.mdb`).
    public static func bytes(of store: Store) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("quire-snapshot-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try store.environment.copy(to: directory, compact: true)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/data.mdb")))
    }

    /// Downloads a peer's snapshot into `<path>.bootstrap` and checks that it opens as a store.
    ///
    /// - Returns: The applied revision the snapshot holds.
    static func download(from url: String, for path: String, client: HTTPClient) async throws -> Int64 {
        let response = try await client.get(url)
        guard response.isSuccess, !response.body.isEmpty else {
            throw ClusterError(.bootstrapFailed, "\(url) answered \(response.status)")
        }
        let staging = path + ".bootstrap"
        try? FileManager.default.removeItem(atPath: staging)
        try FileManager.default.createDirectory(
            atPath: staging, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try writeDurably(response.body, to: staging + "/data.mdb")
        Environment.syncDirectory(staging)
        return try appliedRevision(ofStoreAt: staging)
    }

    /// Writes `bytes` as a new file, 0600 like every store file, and flushes it to the disk: the
    /// install renames it into place, and after a power loss the renames must not be on the
    /// disk without the bytes.
    private static func writeDurably(_ bytes: [UInt8], to file: String) throws {
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ClusterError(.bootstrapFailed, "cannot write \(file): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ClusterError(.bootstrapFailed, "cannot write \(file): \(String(cString: strerror(errno)))") }
            written += n
        }
        guard fsync(fd) == 0 else { throw ClusterError(.bootstrapFailed, "cannot flush \(file): \(String(cString: strerror(errno)))") }
    }

    /// The applied revision of the replica at `path`, opened read-only: throws unless it opens
    /// as a store.
    private static func appliedRevision(ofStoreAt path: String) throws -> Int64 {
        var options = StoreOptions()
        options.readOnly = true
        let copy = try Store(path: path, options: options)
        defer { copy.close() }
        return try copy.read { try $0.get(.string(ReplicaState.key), from: ReplicaState.collection) }?.appliedRevision
            ?? 0
    }

    /// Replaces the store directory at `path` by the downloaded `<path>.bootstrap`. The store at
    /// `path` must be closed. A crash midway leaves either directory in place, and
    /// ``recover(path:)`` finishes or undoes the swap at the next start.
    static func install(at path: String) throws {
        let manager = FileManager.default
        let previous = path + ".replaced"
        try? manager.removeItem(atPath: previous)
        try manager.moveItem(atPath: path, toPath: previous)
        try manager.moveItem(atPath: path + ".bootstrap", toPath: path)
        Environment.syncDirectory(parent(of: path))
        try manager.removeItem(atPath: previous)
    }

    /// The directory that holds `path`.
    private static func parent(of path: String) -> String {
        let url = URL(fileURLWithPath: path).deletingLastPathComponent()
        return url.path.isEmpty ? "." : url.path
    }

    /// Refuses a directory that holds anything but a store's files: installing a snapshot
    /// replaces the whole directory (``install(at:)``), which would delete the rest.
    static func checkReplaceable(_ path: String) throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return }
        // A first open killed midway leaves its staging directory (`.lmdb-create-…`): the store's own.
        let others = try manager.contentsOfDirectory(atPath: path).filter {
            $0 != "data.mdb" && $0 != "lock.mdb" && !$0.hasPrefix(Environment.creationPrefix)
        }.sorted()
        guard others.isEmpty else {
            let named = others.prefix(3).joined(separator: ", ") + (others.count > 3 ? ", …" : "")
            throw ClusterError(
                .foreignStore,
                "\(path) holds files that are not a store's (\(named)): a member replaces its store directory when it installs a peer's snapshot; give it a directory of its own")
        }
    }

    /// Cleans up after a bootstrap interrupted by a crash: between the two renames, the download
    /// goes in place if it opens as a store, else the replaced store goes back (it was deleted,
    /// and a damaged download installed). The replaced store is deleted only once a store is at
    /// `path` again.
    static func recover(path: String) {
        let manager = FileManager.default
        let (previous, download) = (path + ".replaced", path + ".bootstrap")
        if !manager.fileExists(atPath: path), manager.fileExists(atPath: previous) {
            if manager.fileExists(atPath: download), (try? appliedRevision(ofStoreAt: download)) != nil {
                try? manager.moveItem(atPath: download, toPath: path)
            } else {
                try? manager.moveItem(atPath: previous, toPath: path)
            }
            Environment.syncDirectory(parent(of: path))
        }
        if manager.fileExists(atPath: path) { try? manager.removeItem(atPath: previous) }
        try? manager.removeItem(atPath: download)
    }
}
