/// One measured case of `quire-bench`.
///
/// The runner calls `setUp` once, then for each sample (the first one a discarded warm-up)
/// `prepareSample` (untimed), `run` (timed) and `finishSample` (untimed), then `tearDown`.
/// `run` returns a value derived from all the work it did, so the optimiser cannot drop any of it;
/// the runner checks it is the same on every sample.
protocol Benchmark: AnyObject {
    /// A stable dotted name such as `insert.lmdb_raw.sorted`; `--filter` matches substrings of it.
    var name: String { get }
    /// How many records one `run` processes (records/s is `records / seconds`).
    var records: Int { get }
    /// The comparison group (`insert.sorted`, `encode`, …); ratios are taken within a group.
    var group: String { get }
    /// Whether this case is the one its group's ratios divide by.
    var isBaseline: Bool { get }
    /// The stored or encoded size of one record in this case's format, once known (after `setUp`).
    var bytesPerRecord: Double? { get }
    /// A remark printed under the table and written to the JSON (commits made, chunks…), if any.
    var note: String? { get }

    func setUp() throws
    func prepareSample() throws
    func run() throws -> Int
    func finishSample() throws
    func tearDown()
}

extension Benchmark {
    var note: String? { nil }
    func prepareSample() throws {}
    func finishSample() throws {}
    func tearDown() {}
}

/// A failure inside a benchmark's own machinery (LMDB or SQLite setup, a mismatch).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
