/// Every case `quire-bench` knows, in the order they run and print.
///
/// To add a case: write a `Benchmark`, give it a stable name and the group it compares in, and
/// list it here.
enum Registry {
    static func all(corpus: Corpus, loadRecords: Int) -> [any Benchmark] {
        [
            RawLMDBInsertBenchmark(corpus: corpus, sorted: true),
            QuireBulkInsertBenchmark(corpus: corpus, sorted: true),
            QuireBulkInsertBenchmark(corpus: corpus, sorted: true, relaxed: true),
            QuireBulkInsertBenchmark(corpus: corpus, sorted: true, indexed: true),
            JSONLMDBInsertBenchmark(corpus: corpus),
            SQLiteInsertBenchmark(corpus: corpus, sorted: true),
            RawLMDBInsertBenchmark(corpus: corpus, sorted: false),
            QuireBulkInsertBenchmark(corpus: corpus, sorted: false),
            QuireBulkInsertBenchmark(corpus: corpus, sorted: false, indexed: true),
            SQLiteInsertBenchmark(corpus: corpus, sorted: false),
            SQLiteInsertBenchmark(corpus: corpus, sorted: true, fullText: true),
            QuireBulkInsertBenchmark(corpus: corpus, sorted: true, searchable: true),
            GroupCommitBenchmark(corpus: corpus),
            SQLiteLoadBenchmark(count: loadRecords),
            QuireLoadBenchmark(count: loadRecords, searchable: false),
            SQLiteLoadBenchmark(count: loadRecords, fullText: true),
            QuireLoadBenchmark(count: loadRecords, searchable: true),
            SQLiteLoadBenchmark(count: loadRecords, kind: .again),
            QuireLoadBenchmark(count: loadRecords, searchable: true, kind: .again),
            QuireLoadBenchmark(count: loadRecords, searchable: true, kind: .revised),
            EncodeBenchmark(corpus: corpus, format: .json),
            EncodeBenchmark(corpus: corpus, format: .plist),
            EncodeBenchmark(corpus: corpus, format: .hand),
            EncodeBenchmark(corpus: corpus, format: .quire),
            EncodeBenchmark(corpus: corpus, format: .quireZstd),
            EncodeBenchmark(corpus: corpus, format: .quireChecked),
            ManyStringsEncodeBenchmark(),
            LongTextTokenizeBenchmark(corpus: corpus, script: .latin),
            LongTextTokenizeBenchmark(corpus: corpus, script: .cjk),
            DecodeBenchmark(corpus: corpus, format: .json),
            DecodeBenchmark(corpus: corpus, format: .hand),
            DecodeBenchmark(corpus: corpus, format: .quire),
            DecodeBenchmark(corpus: corpus, format: .quireZstd),
            DecodeBenchmark(corpus: corpus, format: .quireChecked),
            PointGetBenchmark(corpus: corpus, threads: 1),
            PointGetBenchmark(corpus: corpus, threads: 2),
            ScanBenchmark(corpus: corpus, threads: 1),
            ScanBenchmark(corpus: corpus, threads: 2),
            QuireScanBenchmark(corpus: corpus, threads: 1),
            QuireScanBenchmark(corpus: corpus, threads: 2),
            FieldReadBenchmark(corpus: corpus, lazy: false),
            FieldReadBenchmark(corpus: corpus, lazy: true),
            DumpBenchmark(corpus: corpus, direct: false),
            DumpBenchmark(corpus: corpus, direct: true),
            DumpBenchmark(corpus: corpus, direct: true, compressed: true),
            FetchBenchmark(corpus: corpus),
            ClusterIngestBenchmark(corpus: corpus),
            ReplicaApplyBenchmark(corpus: corpus, bulk: true),
            ReplicaApplyBenchmark(corpus: corpus, bulk: false),
        ] + SearchQueryClass.allCases.flatMap { kind in
            [(true, 1), (false, 1), (true, 2), (false, 2)].map { fts5, threads in
                SearchQueryBenchmark(corpus: corpus, kind: kind, threads: threads, fts5: fts5) as any Benchmark
            }
        }
    }

    /// Comparisons beyond "each case over its group's baseline", as (subject, reference):
    /// the ratio is subject records/s over reference records/s. Targets are stated this way,
    /// e.g. ("insert.quire.sorted", "insert.sqlite.sorted") for "≥ 4× SQLite".
    static let extraComparisons: [(String, String)] = [
        ("insert.lmdb_raw.sorted", "insert.sqlite.sorted"),
        ("insert.lmdb_raw.random", "insert.sqlite.random"),
        ("insert.quire.sorted", "insert.sqlite.sorted"),
        ("insert.quire.random", "insert.sqlite.random"),
        ("insert.quire.indexed.sorted", "insert.sqlite.sorted"),
        ("insert.quire.indexed.random", "insert.sqlite.random"),
        ("insert.quire.random", "insert.quire.sorted"),
        ("encode.quire", "encode.hand"),
        ("decode.quire", "decode.hand"),
        ("decode.quire.checked", "decode.quire"),
        ("read.scan.quire.1t", "read.scan.1t"),
        // The full load with full-text indexes on both sides.
        ("load.quire.jsonl", "load.sqlite.jsonl.fts5"),
    ] + SearchQueryClass.allCases.flatMap { kind in
        // Issue 20: Quire ≥ 2× FTS5 on each thread count, and 2 threads ≥ 1.7× one.
        [
            ("search.quire.\(kind.rawValue).2t", "search.fts5.\(kind.rawValue).2t"),
            ("search.quire.\(kind.rawValue).2t", "search.quire.\(kind.rawValue).1t"),
            ("search.fts5.\(kind.rawValue).2t", "search.fts5.\(kind.rawValue).1t"),
        ]
    }

    /// Size comparisons (bytes per record over the reference's), as (subject, reference).
    static let sizeComparisons: [(String, String)] = [
        ("encode.plist", "encode.json"),
        ("encode.hand", "encode.json"),
        ("encode.quire", "encode.json"),
        ("encode.quire.zstd", "encode.json"),
        ("encode.quire", "encode.hand"),
        // Full-text index bytes (issue 20: ≤ FTS5's).
        ("insert.quire.search.sorted", "insert.sqlite.fts5"),
    ]
}
