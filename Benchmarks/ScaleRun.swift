import CMalloc
import Foundation
import Quire
import QuireFetch
import QuireFixtures
import QuireNews

/// `quire-bench --scale [--sizes 100000,1000000,10000000] [--search] [--scale-chart FILE] [--scale-json FILE]`:
/// how the cost of the store's main operations grows with its size.
///
/// For each size N it builds a store the way the product declares articles (date and section
/// indexes, compressed, its dictionary trained by the store; with `--search` also the full-text
/// index, as `NewsSchema.articles` has it) from the seeded news corpus streamed from the
/// generator (nothing of size N is held in memory), then times: the bulk insert, random point
/// gets, a full decoding scan and `verify` (which checks the postings too).
/// It prints records/s against N, the 10M/100k ratios the issue states, the bytes on disk
/// against the JSON Lines the corpus would take, and the peak resident memory.
enum ScaleRun {
    struct Row: Codable {
        var records: Int
        /// Whether the articles had the full-text index.
        var search: Bool
        var bulkInsert: Double
        var pointGets: Double
        var scan: Double
        var verify: Double
        var storeBytes: Int
        var jsonLinesBytes: Int
        /// The peak anonymous resident memory during the bulk insert.
        var insertAnonymousBytes: Int
        /// The peak anonymous resident memory during `verify`.
        var verifyAnonymousBytes: Int
        var peakMemoryBytes: Int
        var seconds: Double
    }

    /// Runs and exits when the arguments ask for the scale mode; returns otherwise.
    static func runIfAsked(_ arguments: [String]) {
        guard arguments.first == "--scale" else { return }
        var sizes = [100_000, 1_000_000, 10_000_000]
        var chartPath: String?
        var jsonPath: String?
        var search = false
        var rest = arguments.dropFirst().makeIterator()
        while let argument = rest.next() {
            switch argument {
            case "--sizes":
                guard let list = rest.next(), case let parsed = list.split(separator: ",").compactMap({ Int($0) }),
                    !parsed.isEmpty, parsed.allSatisfy({ $0 >= 1_000 })
                else { fail("--sizes wants a comma-separated list of sizes of at least 1000", status: 64) }
                sizes = parsed
            case "--scale-chart": chartPath = rest.next()
            case "--scale-json": jsonPath = rest.next()
            case "--search": search = true
            default: fail("unknown argument '\(argument)' in --scale mode", status: 64)
            }
        }
        #if DEBUG
            print("WARNING: a debug build; scale figures mean nothing (swift run -c release quire-bench --scale)")
        #endif
        var rows: [Row] = []
        for size in sizes {
            do {
                let row = try measure(size, search: search)
                print(line(row))
                rows.append(row)
            } catch {
                fail("scale \(size): \(error)", status: 1)
            }
        }
        print("")
        print(table(rows), terminator: "")
        do {
            if let jsonPath {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                encoder.keyEncodingStrategy = .convertToSnakeCase
                try encoder.encode(rows).write(to: URL(fileURLWithPath: jsonPath))
                print("wrote \(jsonPath)")
            }
            if let chartPath {
                let what = search ? ", with the full-text index" : ""
                let title = "quire-bench --scale\(what) (\(MachineInfo.current.cores) cores, \(MachineInfo.buildConfiguration))"
                try Data(ScaleChart.svg(rows, title: title).utf8).write(to: URL(fileURLWithPath: chartPath))
                print("wrote \(chartPath)")
            }
        } catch {
            fail("cannot write the output: \(error)", status: 1)
        }
        exit(0)
    }

    /// The product's articles without the full-text index.
    static let plainArticles = StoreCollection<Article>(
        name: "articles", key: { .string($0.id) }, indexes: NewsSchema.articles.indexes, compressed: true)

    static func measure(_ size: Int, search: Bool) throws -> Row {
        let collection = search ? NewsSchema.articles : plainArticles
        let started = Date()
        let scratch = try ScratchStore()
        defer { scratch.close() }
        let store = scratch.store
        try store.register(collection)

        var insertSeconds = 0.0
        // What the size before freed (its verify's buffers) stays in glibc's heap and would count
        // in this insert's peak. (Until the trim's header was mended it did nothing, and a 10M
        // insert after the 1M case read 381–408 MiB, against 218 MiB without it.)
        quire_malloc_trim()
        let insertAnonymous = try AnonymousMemory.peak {
            insertSeconds = try time {
                _ = try blockingAwait {
                    try await store.bulkInsert(ArticleStream(count: size), into: collection)
                }
            }
        }

        // The keys of 200,000 random articles (or all of them), regenerated outside the timing.
        var generator = ArticleGenerator(seed: Corpus.seed)
        var random = SplitMix64(seed: 0x5CA1E)
        let lookups = min(size, 200_000)
        let keys = (0..<lookups).map { _ in StoreKey.string(generator.article(index: Int(random.next() % UInt64(size))).id) }
        let getSeconds = try time {
            for key in keys {
                guard try store.read({ try $0.get(key, from: collection) }) != nil else {
                    throw BenchError("scale: a stored article is missing")
                }
            }
        }

        var scanned = 0
        let scanSeconds = try time {
            try store.read { snapshot in
                for record in snapshot.records(in: collection) {
                    scanned &+= try record.get().value.wordCount ?? 1
                }
            }
        }
        var verifySeconds = 0.0
        quire_malloc_trim()
        let verifyAnonymous = try AnonymousMemory.peak {
            verifySeconds = try time {
                let report = try store.verify()
                guard report.isSound else { throw BenchError("scale: verify found \(report.problems.prefix(3))") }
            }
        }
        let storeBytes = try store.storeStatistics().fileBytes
        return Row(
            records: size, search: search, bulkInsert: Double(size) / insertSeconds, pointGets: Double(lookups) / getSeconds,
            scan: Double(size) / scanSeconds, verify: Double(size) / verifySeconds, storeBytes: storeBytes,
            jsonLinesBytes: Int(meanJSONLineBytes * Double(size)), insertAnonymousBytes: insertAnonymous,
            verifyAnonymousBytes: verifyAnonymous,
            peakMemoryBytes: BenchmarkRunner.peakMemoryBytes(), seconds: Date().timeIntervalSince(started))
    }

    /// The mean size of an article as a `quire dump` JSON line, from the first 5,000 articles.
    static let meanJSONLineBytes: Double = {
        var generator = ArticleGenerator(seed: Corpus.seed)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let sample = 5_000
        let total = (0..<sample).reduce(0) { sum, index in
            sum + ((try? encoder.encode(generator.article(index: index)).count) ?? 0) + 1
        }
        return Double(total) / Double(sample)
    }()

    static func time(_ body: () throws -> Void) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return max(1e-9, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    static func line(_ row: Row) -> String {
        "  \(Report.compact(Double(row.records))) records: insert \(Report.compact(row.bulkInsert))/s, "
            + "gets \(Report.compact(row.pointGets))/s, scan \(Report.compact(row.scan))/s, "
            + "verify \(Report.compact(row.verify))/s (\(Report.fixed(row.seconds, 1)) s)"
    }

    static func table(_ rows: [Row]) -> String {
        var out =
            "records     insert/s    gets/s     scan/s   verify/s  disk/JSONL  insert anon MB  verify anon MB  peak RSS MB  seconds\n"
        for row in rows {
            let ratio = Double(row.storeBytes) / Double(max(1, row.jsonLinesBytes))
            out += [
                pad(Report.compact(Double(row.records)), 7), pad(Report.compact(row.bulkInsert), 11),
                pad(Report.compact(row.pointGets), 9), pad(Report.compact(row.scan), 10),
                pad(Report.compact(row.verify), 10), pad(Report.fixed(ratio, 2) + "×", 11),
                pad(String(row.insertAnonymousBytes >> 20), 15), pad(String(row.verifyAnonymousBytes >> 20), 15),
                pad(String(row.peakMemoryBytes >> 20), 12),
                pad(Report.fixed(row.seconds, 1), 8),
            ].joined(separator: " ") + "\n"
        }
        if let first = rows.first, let last = rows.last, rows.count > 1 {
            let n = Report.compact(Double(last.records))
            let m = Report.compact(Double(first.records))
            out += "at \(n): bulk insert \(Report.fixed(last.bulkInsert / first.bulkInsert, 2))× its \(m) rate, "
                + "point gets \(Report.fixed(last.pointGets / first.pointGets, 2))×, "
                + "scan \(Report.fixed(last.scan / first.scan, 2))×, verify \(Report.fixed(last.verify / first.verify, 2))×\n"
        }
        return out
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}

/// The corpus's articles 0..<count, generated as a bulk insert asks for them.
struct ArticleStream: Sequence, Sendable {
    let count: Int

    func makeIterator() -> Iterator { Iterator(count: count) }

    struct Iterator: IteratorProtocol {
        let count: Int
        var index = 0
        var generator = ArticleGenerator(seed: Corpus.seed)

        mutating func next() -> Article? {
            guard index < count else { return nil }
            defer { index += 1 }
            return generator.article(index: index)
        }
    }
}
