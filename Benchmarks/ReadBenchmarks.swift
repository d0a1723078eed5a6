import Dispatch
import Quire
import QuireNews
import Synchronization

/// Runs `body(thread)` on `threads` threads at once and sums what they return.
func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) throws -> Int) throws -> Int {
    let results = Mutex<[Result<Int, any Error>]>([])
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        let result = Result { try body(thread) }
        results.withLock { $0.append(result) }
    }
    var total = 0
    for result in results.withLock({ $0 }) { total &+= try result.get() }
    return total
}

/// `read.get.1t` / `read.get.2t`: T threads each look up every article by key, one
/// `store.read { $0.get(key, from:) }` (a snapshot and a full decode) per lookup.
/// `records` counts the lookups of all threads together.
final class PointGetBenchmark: Benchmark {
    let threads: Int
    private let corpus: Corpus
    private var readStore: ReadStore?

    init(corpus: Corpus, threads: Int) {
        self.corpus = corpus
        self.threads = threads
    }

    var name: String { "read.get.\(threads)t" }
    var group: String { "read.get" }
    var isBaseline: Bool { threads == 1 }
    var records: Int { corpus.count * threads }
    var bytesPerRecord: Double? { corpus.meanValueBytes }

    func setUp() throws { readStore = try corpus.readStore() }

    func run() throws -> Int {
        guard let readStore else { throw BenchError("not set up") }
        let (store, collection, keys, threads) = (readStore.store, readStore.collection, corpus.keys, threads)
        return try onThreads(threads) { thread in
            var sum = 0
            // Each thread starts elsewhere in the (random) key order.
            let offset = thread * keys.count / threads
            for position in keys.indices {
                let key = StoreKey(bytes: keys[(position + offset) % keys.count])
                guard let article = try store.read({ try $0.get(key, from: collection) }) else {
                    throw BenchError("read.get: a stored article is missing")
                }
                sum &+= article.wordCount ?? 1
            }
            return sum
        }
    }
}

/// `read.scan.quire.1t` / `.2t`: T threads each decode every article of the store in key order
/// (`snapshot.forEach`), each in its own snapshot. `records` counts all threads' records.
final class QuireScanBenchmark: Benchmark {
    let threads: Int
    private let corpus: Corpus
    private var readStore: ReadStore?

    init(corpus: Corpus, threads: Int) {
        self.corpus = corpus
        self.threads = threads
    }

    var name: String { "read.scan.quire.\(threads)t" }
    var group: String { "read.scan.quire" }
    var isBaseline: Bool { threads == 1 }
    /// Full passes per thread and sample: at least 50,000 records, so a sample lasts long enough.
    var passes: Int { max(1, 50_000 / max(1, corpus.count)) }
    var records: Int { corpus.count * threads * passes }
    var bytesPerRecord: Double? { corpus.meanValueBytes }

    func setUp() throws { readStore = try corpus.readStore() }

    func run() throws -> Int {
        guard let readStore else { throw BenchError("not set up") }
        let (store, collection, passes) = (readStore.store, readStore.collection, passes)
        return try onThreads(threads) { _ in
            var sum = 0
            for _ in 0..<passes {
                try store.read { snapshot in
                    for record in snapshot.records(in: collection) {
                        sum &+= try record.get().value.wordCount ?? 1
                    }
                }
            }
            return sum
        }
    }
}

/// `read.field.lazy` / `read.field.decode`: every article's headline by key in one snapshot,
/// read lazily (`snapshot.field("headline", …)`, skipping the rest of the record) or by decoding
/// the whole article.
final class FieldReadBenchmark: Benchmark {
    let lazy: Bool
    private let corpus: Corpus
    private var readStore: ReadStore?

    init(corpus: Corpus, lazy: Bool) {
        self.corpus = corpus
        self.lazy = lazy
    }

    var name: String { lazy ? "read.field.lazy" : "read.field.decode" }
    var group: String { "read.field" }
    var isBaseline: Bool { !lazy }
    var records: Int { corpus.count }
    var bytesPerRecord: Double? { corpus.meanValueBytes }

    func setUp() throws { readStore = try corpus.readStore() }

    func run() throws -> Int {
        guard let readStore else { throw BenchError("not set up") }
        let (collection, keys, lazy) = (readStore.collection, corpus.keys, lazy)
        return try readStore.store.read { snapshot in
            var sum = 0
            for key in keys {
                let storeKey = StoreKey(bytes: key)
                if lazy {
                    guard case .string(let headline) = try snapshot.field("headline", of: storeKey, in: collection)
                    else { continue }
                    sum &+= headline.utf8.count
                } else {
                    sum &+= try snapshot.get(storeKey, from: collection)?.headline?.utf8.count ?? 0
                }
            }
            return sum
        }
    }
}
