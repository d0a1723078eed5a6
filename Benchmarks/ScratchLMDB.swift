import CLMDB
import Foundation

/// The bare LMDB C API over a fresh temporary directory, for the raw baselines.
///
/// Not the QuireLMDB layer on purpose: these cases are the floor the store is compared with.
final class ScratchLMDB {
    let directory: URL
    private(set) var env: OpaquePointer?
    private(set) var dbi: MDB_dbi = 0

    /// Creates the directory and opens an environment with `MDB_NOTLS` and a map big enough for
    /// any `--records` the harness accepts.
    init(mapSize: Int = 8 << 30) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("quire-bench-lmdb-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try check(mdb_env_create(&env), "mdb_env_create")
        try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
        try check(mdb_env_set_maxreaders(env, 126), "mdb_env_set_maxreaders")
        try check(mdb_env_open(env, directory.path, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
        try write { txn in try check(mdb_dbi_open(txn, nil, 0, &dbi), "mdb_dbi_open") }
    }

    deinit { close() }

    /// Closes the environment and removes its files.
    func close() {
        if let env { mdb_env_close(env) }
        env = nil
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` in one write transaction and commits it (durably: no `MDB_NOSYNC`).
    func write(_ body: (OpaquePointer?) throws -> Void) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        do {
            try body(txn)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    /// Puts every key/value pair in one transaction; `append` uses `MDB_APPEND` (keys must be sorted).
    func putAll(keys: [[UInt8]], values: [[UInt8]], append: Bool) throws {
        let flags = append ? UInt32(MDB_APPEND) : 0
        try write { txn in
            for index in keys.indices {
                try keys[index].withUnsafeBytes { key in
                    try values[index].withUnsafeBytes { value in
                        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
                        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
                        try check(mdb_put(txn, dbi, &k, &v, flags), "mdb_put")
                    }
                }
            }
        }
    }

    /// Deletes every record (between samples), in one transaction.
    func empty() throws {
        try write { txn in try check(mdb_drop(txn, dbi, 0), "mdb_drop") }
    }
}

/// Turns an LMDB return code into a `BenchError` naming the call.
func check(_ rc: Int32, _ operation: String) throws {
    guard rc == 0 else { throw BenchError("\(operation): \(String(cString: mdb_strerror(rc)))") }
}
