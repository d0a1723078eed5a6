import Foundation
import Quire
import QuireFetch
import QuireNews
import QuireTestSupport
import Synchronization
import Testing

/// `ArticleLoader` reads its input off the loop that submits: what it read is committed even
/// when the next read ends the load.
@Suite struct ArticleLoaderTests {
    /// A slow producer (a pipe that stays open) and an interrupt while the loader waits for more:
    /// the block read before the wait is committed, and the error counts it. When the loop itself
    /// read the next block before submitting the one it had, the interrupt dropped that block.
    @Test func anInterruptWhileWaitingForInputKeepsTheBlockReadBeforeIt() async throws {
        try await withTemporaryDirectory("loader") { dir in
            let fifo = dir + "/input"
            try #require(mkfifo(fifo, 0o600) == 0)
            // Opened for reading and writing, so that neither side's open waits for the other.
            let writer = open(fifo, O_RDWR)
            try #require(writer >= 0)
            defer { close(writer) }
            let lines = try generatedJSONL(count: 10, seed: 7)
            let written = lines.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            #expect(written == lines.count)

            let interrupted = Atomic<Bool>(false)
            let polls = Atomic<Int>(0)  // the reader asks before each wait for input
            let reader = try LineBlockReader(path: fifo) {
                polls.add(1, ordering: .relaxed)
                return interrupted.load(ordering: .acquiring)
            }
            var loader = ArticleLoader()
            loader.blockBytes = 1_024  // the ten lines come as one block, then the read waits
            loader.isInterrupted = { interrupted.load(ordering: .acquiring) }
            let store = try Store(path: dir + "/store")
            defer { store.close() }
            try NewsSchema.register(in: store)
            let load = Task { try await loader.run(from: reader, into: store) }
            // Interrupt once the reader has waited for the next block a few times.
            let deadline = ContinuousClock.now + .seconds(600)
            while polls.load(ordering: .relaxed) < 4 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            interrupted.store(true, ordering: .releasing)
            let error = await #expect(throws: LoadError.self) { try await load.value }
            #expect(error?.kind == .interrupted)
            #expect(error?.recordsBefore == 10)
            let stored = try store.read { try $0.count(of: NewsSchema.articles) }
            #expect(stored == 10)
        }
    }

    /// The commas of a `--format json` array are checked between lines that fall in different
    /// pieces of a block and in different blocks too (each piece is parsed on its own core):
    /// a comma missing after any record, or one after the last, stops the load at its line with
    /// the records before it committed. Arrays without commas were loaded whole.
    @Test func anArraysCommasAreCheckedAcrossPiecesAndBlocks() async throws {
        try await withTemporaryDirectory("commas") { dir in
            let records = try String(decoding: generatedJSONL(count: 12, seed: 3), as: UTF8.self)
                .split(separator: "\n").map(String.init)
            // Line 1 is '[', record i is on line i + 2, ']' on line 14.
            func array(commaAfter: (Int) -> Bool) -> String {
                "[\n" + records.indices.map { records[$0] + (commaAfter($0) ? "," : "") + "\n" }.joined() + "]\n"
            }
            var cases = records.indices.dropLast().map { missing in
                (array { $0 != missing && $0 != records.count - 1 }, missing + 3, missing + 1, "no comma between")
            }
            cases.append((array { _ in true }, records.count + 2, records.count, "a comma after the JSON array's last record"))
            for (index, (input, line, stored, message)) in cases.enumerated() {
                let path = dir + "/input\(index).json"
                try Data(input.utf8).write(to: URL(fileURLWithPath: path))
                var loader = ArticleLoader()
                loader.blockBytes = 1_500  // a few records a block
                loader.parsers = 3
                let store = try Store(path: dir + "/store\(index)")
                defer { store.close() }
                try NewsSchema.register(in: store)
                let error = await #expect(throws: LoadError.self) {
                    try await loader.run(from: try LineBlockReader(path: path), into: store)
                }
                #expect(error?.line == line, "\(index): \(String(describing: error))")
                #expect(error.map { "\($0)" }?.contains(message) == true, "\(index): \(String(describing: error))")
                #expect(try store.read { try $0.count(of: NewsSchema.articles) } == stored, "\(index)")
            }
            // The same records with their commas in place load whole.
            let path = dir + "/whole.json"
            try Data(array { $0 != records.count - 1 }.utf8).write(to: URL(fileURLWithPath: path))
            var loader = ArticleLoader()
            (loader.blockBytes, loader.parsers) = (1_500, 3)
            let store = try Store(path: dir + "/whole")
            defer { store.close() }
            try NewsSchema.register(in: store)
            let report = try await loader.run(from: try LineBlockReader(path: path), into: store)
            #expect(report.records == records.count)
        }
    }

    /// A block of `.max` bytes ("no limit": the whole input) overflowed reserving its buffer.
    @Test func aBlockOfNoLimitReadsTheWholeInput() throws {
        try withTemporaryDirectory("block") { dir in
            let path = dir + "/lines.jsonl"
            try Data("{\"id\":\"a\"}\n{\"id\":\"b\"}\n".utf8).write(to: URL(fileURLWithPath: path))
            let block = try #require(try LineBlockReader(path: path).next(targetBytes: .max))
            #expect(block.bytes.count == 22 && block.firstLine == 1)
        }
    }

    /// A load stopped while it merges its sorted runs had parsed every record and committed few
    /// or none: the error counts what the store holds (it counted what was parsed: 150,000
    /// reported, none stored).
    @Test func aLoadStoppedWhileMergingCountsWhatIsCommitted() async throws {
        try await withTemporaryDirectory("merging") { dir in
            let path = dir + "/input.jsonl"
            // Random ids, windows of a few records: the load spills sorted runs and merges them last.
            try generatedJSONL(count: 600, seed: 11).write(to: URL(fileURLWithPath: path))
            let interrupted = Atomic<Bool>(false)
            var loader = ArticleLoader()
            loader.bulkOptions = BulkInsertOptions(chunkSize: 50, sortWindow: 16 << 10)
            loader.isInterrupted = { interrupted.load(ordering: .acquiring) }
            loader.progress = { state in
                if state.phase == .mergingSortedRuns { interrupted.store(true, ordering: .releasing) }
            }
            let store = try Store(path: dir + "/store")
            defer { store.close() }
            try NewsSchema.register(in: store)
            let error = await #expect(throws: LoadError.self) {
                try await loader.run(from: try LineBlockReader(path: path), into: store)
            }
            #expect(error?.kind == .interrupted)
            let stored = try store.read { try $0.count(of: NewsSchema.articles) }
            #expect(stored < 600, "the merge was not stopped")
            #expect(error?.recordsBefore == stored)
        }
    }

    /// A line over the limit names its line as a field of the error (`--json` gave `"line":null`
    /// with the number only in the message), and the records before it count.
    @Test func aLineTooLongIsNamedByItsLineNumber() async throws {
        try await withTemporaryDirectory("loader") { dir in
            let path = dir + "/input.jsonl"
            var input = try generatedJSONL(count: 3, seed: 5)
            input += Data(#"{"id":"long","abstract":""#.utf8) + Data(repeating: UInt8(ascii: "a"), count: LineBlockReader.maximumLineLength + (4 << 20))
            input += Data(#""}"#.utf8 + [10])
            try input.write(to: URL(fileURLWithPath: path))
            let store = try Store(path: dir + "/store")
            defer { store.close() }
            try NewsSchema.register(in: store)
            let error = await #expect(throws: LoadError.self) {
                try await ArticleLoader().run(from: try LineBlockReader(path: path), into: store)
            }
            #expect(error?.kind == .input && error?.line == 4, "\(String(describing: error))")
            #expect(error?.description == "line 4: the line is longer than 64 MiB (3 records loaded before it)")
            #expect(try store.read { try $0.count(of: NewsSchema.articles) } == 3)
        }
    }
}
