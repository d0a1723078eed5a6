/// Keeps the log bounded: entries every live member has applied are deleted, and etcd's own
/// history is compacted at the same revision (etcd's storage quota counts both).
///
/// The compaction *floor* (`<prefix>compacted`) is raised before anything is deleted, with a
/// comparison so it only ever rises; a replica reads it after reading the log, so one that
/// sees a floor at or below its applied revision knows nothing it needed had been deleted.
public enum LogCompactor {
    /// The revision up to which the log may have been deleted (0: never compacted).
    public static func floor(client: EtcdClient, keys: ClusterKeys) async throws(EtcdError) -> Int64 {
        guard let stored = try await client.get(keys.compacted) else { return 0 }
        return Int64(String(decoding: stored.value, as: UTF8.self)) ?? 0
    }

    /// Deletes the log entries written at or before `revision` and compacts etcd's history there.
    ///
    /// Call it only with a revision every member has applied (``ClusterNode`` uses the lowest
    /// applied revision its live members publish).
    ///
    /// - Returns: How many entries were deleted (0 when the floor was already there).
    @discardableResult
    public static func compact(
        upTo revision: Int64, client: EtcdClient, keys: ClusterKeys
    ) async throws(EtcdError)
        -> Int
    {
        let current = try await client.get(keys.compacted)
        let floor = current.map { Int64(String(decoding: $0.value, as: UTF8.self)) ?? 0 } ?? 0
        guard revision > floor else { return 0 }
        let raised = try await client.txn(
            compare: [EtcdCompare(keys.compacted, .equal, .modRevision(current?.modRevision ?? 0))],
            success: [.put(keys.compacted, Array(String(revision).utf8))])
        // Another compactor moved the floor meanwhile: it deletes; this one stops.
        guard raised.succeeded else { return 0 }
        var deleted = 0
        while true {
            let old = try await client.range(keys.log, maxModRevision: revision, limit: 1000, keysOnly: true)
            if old.kvs.isEmpty { break }
            for start in stride(from: 0, to: old.kvs.count, by: client.maxTxnOperations) {
                let slice = old.kvs[start..<min(start + client.maxTxnOperations, old.kvs.count)]
                _ = try await client.txn(
                    compare: [], success: slice.map { .delete(EtcdKeyRange(key: $0.key, end: nil)) })
                deleted += slice.count
            }
            if !old.more { break }
        }
        do {
            try await client.compact(revision: revision)
        } catch {
            // Out of range: etcd's history is already compacted at or past it.
            if error.code != .refused(grpcCode: EtcdError.grpcOutOfRange) { throw error }
        }
        return deleted
    }
}
