import CLMDB
import Dispatch
import Synchronization

/// `read.scan.1t` / `read.scan.2t`: each of T threads walks every record with a cursor in its own
/// read transaction (the env has `MDB_NOTLS`), touching each value's first and last byte.
/// `records` counts the records read by all threads together, so records/s is the aggregate.
/// A small corpus is scanned several times per sample so a sample lasts long enough to time.
final class ScanBenchmark: Benchmark {
    let threads: Int
    private let corpus: Corpus
    private var store: ScratchLMDB?

    init(corpus: Corpus, threads: Int) {
        self.corpus = corpus
        self.threads = threads
    }

    var name: String { "read.scan.\(threads)t" }
    var group: String { "read.scan" }
    var isBaseline: Bool { threads == 1 }
    /// Full passes each thread makes per sample: at least a million records read per thread.
    var passes: Int { max(1, 1_000_000 / max(1, corpus.count)) }
    var records: Int { corpus.count * threads * passes }
    var bytesPerRecord: Double? { corpus.meanValueBytes }

    func setUp() throws {
        let store = try ScratchLMDB()
        let order = corpus.sortedOrder
        try store.putAll(keys: order.map { corpus.keys[$0] }, values: order.map { corpus.values[$0] }, append: true)
        self.store = store
    }

    func run() throws -> Int {
        guard let store else { throw BenchError("no store") }
        let handle = EnvironmentHandle(env: store.env, dbi: store.dbi)
        let passes = passes
        let results = Mutex<[Result<Int, BenchError>]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            let result = Result { () throws(BenchError) in
                var sum = 0
                for _ in 0..<passes { sum &+= try Self.scan(handle) }
                return sum
            }
            results.withLock { $0.append(result) }
        }
        var total = 0
        for result in results.withLock({ $0 }) { total &+= try result.get() }
        return total
    }

    func tearDown() {
        store?.close()
        store = nil
    }

    private static func scan(_ handle: EnvironmentHandle) throws(BenchError) -> Int {
        var txn: OpaquePointer?
        var cursor: OpaquePointer?
        guard mdb_txn_begin(handle.env, nil, UInt32(MDB_RDONLY), &txn) == 0 else { throw BenchError("mdb_txn_begin") }
        defer { mdb_txn_abort(txn) }
        guard mdb_cursor_open(txn, handle.dbi, &cursor) == 0 else { throw BenchError("mdb_cursor_open") }
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var sum = 0
        var count = 0
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, op) == 0 {
            op = MDB_NEXT
            count += 1
            if let bytes = value.mv_data, value.mv_size > 0 {
                sum &+= Int(bytes.load(as: UInt8.self)) &+ Int(bytes.load(fromByteOffset: value.mv_size - 1, as: UInt8.self))
            }
            sum &+= value.mv_size
        }
        return sum &+ count
    }
}

/// The environment pointer handed to scanning threads.
///
/// `@unchecked Sendable` because an LMDB environment is safe to use from many threads, and with
/// `MDB_NOTLS` each thread's read transaction is its own; the pointer itself is never mutated.
struct EnvironmentHandle: @unchecked Sendable {
    let env: OpaquePointer?
    let dbi: MDB_dbi
}
