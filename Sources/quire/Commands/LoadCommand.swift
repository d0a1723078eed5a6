internal import CMalloc
import Foundation
import Quire
import QuireFetch

/// What `quire load` does, given valid options (see `LoadOptions.swift`).
///
/// Reads JSON Lines as `quire dump --format jsonl` (or `--format json`) writes them and upserts
/// each article by id through `ArticleLoader`: blocks of lines parsed on every core, committed
/// as chunks while the next block parses. A bad line stops the load with its line number and
/// field, before anything of its chunk is written, and every record before it stays
/// committed; Ctrl-C stops at a chunk boundary, in seconds whatever the input's size
/// (`BulkLoader.stops(when:)`).
enum LoadCommand {
    static func run(_ options: LoadOptions, context: CommandContext) async throws {
        // A load's large buffers (blocks of input, encoded chunks, the sort window) are freed on
        // other threads than the ones that allocated them: mapped on their own, they go back to
        // the system when freed. With glibc's sliding threshold they stayed in per-thread heaps,
        // and a load of 1M articles peaked at 273 MiB of anonymous memory instead of 170 MiB.
        _ = quire_malloc_map_from(4 << 20)
        // And one heap a core (set before the load's threads start): what one thread frees then
        // serves the others' next allocations. The 1M load peaked at 151–258 MiB of anonymous
        // memory with glibc's eight a core and at 139–204 MiB with one a core on two cores, in
        // about as long (14 and 19 runs).
        _ = quire_malloc_heaps(Int32(max(2, ProcessInfo.processInfo.activeProcessorCount)))
        let reader: LineBlockReader
        do {
            reader = try LineBlockReader(path: options.path, isInterrupted: { InterruptFlag.isRaised })
        } catch {
            throw RuntimeError("load", error.message)
        }
        let store = try OpenStore.readWrite(context.storePath, command: "load")
        defer { store.close() }
        let progress = context.progress("loading", quiet: options.quiet)
        let start = ContinuousClock.now
        var loader = ArticleLoader()
        loader.isInterrupted = { InterruptFlag.isRaised }
        // Smaller blocks (more, smaller commits) for tests that need several chunks of little input.
        if let text = context.environment["QUIRE_LOAD_BLOCK_BYTES"], let bytes = Int(text), bytes > 0 {
            loader.blockBytes = bytes
        }
        // And a smaller sort window, for tests whose input must go to the temporary file.
        if let text = context.environment["QUIRE_LOAD_SORT_WINDOW"], let bytes = Int(text), bytes > 0 {
            loader.bulkOptions.sortWindow = bytes
        }
        loader.progress = { [progress] load in progress.show(load) }
        // Records stored, an id read twice counted once, and records read.
        let (records, read): (Int, Int)
        do {
            if let collection = options.collection {
                (records, read) = try await WholeStoreLoad.runCollection(collection, reader, into: store, progress: progress)
            } else if try WholeStoreLoad.isWholeStoreDump(reader) {
                (records, read) = try await WholeStoreLoad.run(reader, into: store, loader: loader, progress: progress)
            } else {
                let report = try await loader.run(from: reader, into: store)
                (records, read) = (report.distinctRecords, report.records)
            }
        } catch let error as LoadError {
            progress.finish(stopped: true)
            // A script reading --json learns what was committed before the failure too.
            if options.json { failureSummary(records: error.recordsBefore, error: error.description, line: error.line, context) }
            switch error.kind {
            case .interrupted: throw InterruptedError.load(committed: error.recordsBefore)
            case .store: throw error.underlying ?? RuntimeError("load", error.description)
            case .input, .record: throw RuntimeError("load", error.description)
            }
        } catch {
            progress.finish(stopped: true)
            throw error
        }
        progress.finish(stopped: InterruptFlag.isRaised)
        // A signal during the load's end (the full-text merge and compaction, which stop for it)
        // still says so: the command did not do all it would have.
        if InterruptFlag.isRaised {
            if options.json { failureSummary(records: records, error: "interrupted", line: nil, context) }
            throw InterruptedError.load(committed: records)
        }
        if options.json {
            try context.output.line(
                JSONSummary.object([
                    ("records", .int(records)), ("read", .int(read)), ("seconds", .seconds(ContinuousClock.now - start)),
                ]))
        } else if !options.quiet {
            let n = ProgressReporter.grouped
            let repeated = read > records ? " (\(n(read)) read: \(n(read - records)) repeated an id read before, the last kept)" : ""
            Diagnostics.write("quire: load: \(n(records)) record\(records == 1 ? "" : "s")\(repeated)\n")
        }
    }

    /// The `--json` answer of a load that did not finish: `{"records":…,"error":…,"line":…}`,
    /// the records committed before it stopped, whatever phase the stop or failure came in.
    private static func failureSummary(records: Int, error: String, line: Int?, _ context: CommandContext) {
        let fields: [(String, JSONSummary.Value)] = [
            ("records", .int(records)), ("error", .string(error)), ("line", line.map { .int($0) } ?? .null),
        ]
        try? context.output.line(JSONSummary.object(fields))
    }
}
