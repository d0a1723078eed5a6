/// Every case `quire-bench` knows, in the order they run and print.
///
/// To add a case: write a `Benchmark`, give it a stable name and the group it compares in, and
/// list it here. (Next: `insert.quire.sorted`, `insert.quire.random`, `encode.quire`,
/// `decode.quire`, `encode.quire.zstd`, `fetch.loopback`.)
enum Registry {
    static func all(corpus: Corpus) -> [any Benchmark] {
        [
            RawLMDBInsertBenchmark(corpus: corpus, sorted: true),
            JSONLMDBInsertBenchmark(corpus: corpus),
            SQLiteInsertBenchmark(corpus: corpus, sorted: true),
            RawLMDBInsertBenchmark(corpus: corpus, sorted: false),
            SQLiteInsertBenchmark(corpus: corpus, sorted: false),
            EncodeBenchmark(corpus: corpus, format: .json),
            EncodeBenchmark(corpus: corpus, format: .plist),
            EncodeBenchmark(corpus: corpus, format: .hand),
            DecodeBenchmark(corpus: corpus, format: .json),
            DecodeBenchmark(corpus: corpus, format: .hand),
            ScanBenchmark(corpus: corpus, threads: 1),
            ScanBenchmark(corpus: corpus, threads: 2),
        ]
    }

    /// Comparisons beyond "each case over its group's baseline", as (subject, reference):
    /// the ratio is subject records/s over reference records/s. Targets are stated this way,
    /// e.g. ("insert.quire.sorted", "insert.sqlite.sorted") for "≥ 4× SQLite".
    static let extraComparisons: [(String, String)] = [
        ("insert.lmdb_raw.sorted", "insert.sqlite.sorted"),
        ("insert.lmdb_raw.random", "insert.sqlite.random"),
        ("insert.quire.sorted", "insert.sqlite.sorted"),
        ("insert.quire.random", "insert.sqlite.random"),
    ]

    /// Size comparisons (bytes per record over the reference's), as (subject, reference).
    static let sizeComparisons: [(String, String)] = [
        ("encode.plist", "encode.json"),
        ("encode.hand", "encode.json"),
        ("encode.quire", "encode.json"),
        ("encode.quire.zstd", "encode.json"),
    ]
}
