import Foundation
import Quire

/// `dump.quire.tree` (baseline: each record decoded to a `CompactValue` tree, then written as
/// JSON, what `quire dump` did) and `dump.quire.json` (JSON written straight from the record
/// bytes, `snapshot.forEachJSONBytes`, what it does now): every article of the shared read store,
/// in key order, in one snapshot. Records/s is what `quire dump` can reach before its output.
/// `dump.quire.json.zstd`: the same from the store with its records compressed (a default
/// store's articles), so each record is decompressed first.
final class DumpBenchmark: Benchmark {
    let name: String
    let group = "dump"
    private let corpus: Corpus
    private let direct: Bool
    private let compressed: Bool
    private var readStore: ReadStore?

    init(corpus: Corpus, direct: Bool, compressed: Bool = false) {
        self.corpus = corpus
        self.direct = direct
        self.compressed = compressed
        name = (direct ? "dump.quire.json" : "dump.quire.tree") + (compressed ? ".zstd" : "")
    }

    var isBaseline: Bool { !direct }
    var records: Int { corpus.count }
    /// The records' pages on disk, a record.
    private(set) var bytesPerRecord: Double?

    func setUp() throws {
        let readStore = try compressed ? corpus.compressedReadStore() : corpus.readStore()
        self.readStore = readStore
        let stored = try readStore.store.storeStatistics().collections.first { $0.name == readStore.collection.name }
        bytesPerRecord = stored.map { Double($0.bytes) / Double(max(1, $0.records)) }
    }

    func run() throws -> Int {
        guard let readStore else { throw BenchError("no store") }
        let name = readStore.collection.name
        let direct = self.direct
        return try readStore.store.read { snapshot in
            var bytes = 0
            var count = 0
            if direct {
                try snapshot.forEachJSONBytes(inCollectionNamed: name) { _, json in
                    bytes += json.count
                    count += 1
                    return true
                }
            } else {
                try snapshot.forEachGeneric(inCollectionNamed: name) { _, value in
                    bytes += value.jsonBytes().count
                    count += 1
                    return true
                }
            }
            precondition(count == corpus.count, "dumped \(count) of \(corpus.count)")
            return bytes
        }
    }
}
