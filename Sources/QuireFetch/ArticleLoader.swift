import Foundation
import Synchronization
import Quire
import QuireNews

/// Loads articles from JSON Lines (what `quire dump --format jsonl` or `--format json` writes)
/// into a store, at the speed of the bulk path.
///
/// Blocks of lines are read whole, parsed into articles on every core at once
/// (`Article(jsonLine:)`, no `JSONDecoder`), and submitted as chunks to one `BulkLoader`,
/// which encodes each chunk in parallel and commits it on the writer; the next block is read
/// and parses meanwhile. Memory stays bounded by a few blocks and the sort window, whatever the
/// input's size.
///
/// A line that is not a storable article stops the load before anything of it is written: the
/// error names the line and the field, and every record before that line is committed. So do a
/// bracket or a comma in JSON Lines, an array whose records are not separated by exactly one
/// comma (or with one after its last), and an array that is not closed or is followed by more. An
/// interrupt (the `isInterrupted` check of the reader, of `run` and of the bulk loader) stops at
/// the next transaction with the chunks before it committed, in seconds whatever the input's
/// size: records read but not committed are written only when they are all in memory (no sort
/// window went to the temporary file). Records are upserted by id, so loading a file twice
/// leaves each record once.
public struct ArticleLoader: Sendable {
    /// What a load did.
    public struct Report: Sendable, Hashable {
        /// Records committed (a line for an id seen before replaces it and counts again).
        public var records: Int
        /// Records committed, an id read twice counted once (the last line for it is kept);
        /// see `BulkInsertReport.distinctRecords`.
        public var distinctRecords: Int
        /// Transactions committed.
        public var chunks: Int
        /// Seconds from the first read to the last commit.
        public var seconds: Double
    }

    /// Bytes of input parsed and committed as one chunk (about 11,000 news articles).
    public var blockBytes = 16 << 20
    /// How the chunks commit. The sort window is smaller than `bulkInsert`'s default: two
    /// blocks of parsed articles are alive beside it, and the full-text index's transactions
    /// hold a dirty copy of every posting page they touch.
    public var bulkOptions = BulkInsertOptions(chunkSize: 12_000, sortWindow: 48 << 20)
    /// Parallel parsers (the machine's cores by default).
    public var parsers = ProcessInfo.processInfo.activeProcessorCount
    /// Checked after each block and before each transaction: true stops the load
    /// (``LoadError/Kind/interrupted``).
    public var isInterrupted: @Sendable () -> Bool = { false }
    /// Called after each committed chunk, after each sort window written to the temporary
    /// file, and as the load's end begins each of its phases, with the bulk loader's progress:
    /// the records committed, those sorted and waiting for the final merge
    /// (`BulkInsertOptions.externalSort`), and the phase.
    public var progress: (@Sendable (BulkInsertProgress) -> Void)?

    /// A loader with the default settings.
    public init() {}

    /// Reads `reader` to its end into `collection` (the news store's articles by default).
    /// - Throws: ``LoadError``; what was committed before it stays.
    @discardableResult
    public func run(
        from reader: LineBlockReader, into store: Store, collection: StoreCollection<Article> = NewsSchema.articles
    ) async throws(LoadError) -> Report {
        let start = ContinuousClock.now
        // What the store acknowledged: a failed or stopped load reports this, not what it parsed
        // (a load stopped while merging its sorted runs had parsed all and committed none).
        let committed = CommittedCount()
        let reportProgress = progress
        let counting: @Sendable (BulkInsertProgress) -> Void = { state in
            committed.records.store(state.distinctRecords, ordering: .relaxed)
            reportProgress?(state)
        }
        do {
            let report = try await store.withBulkLoader(into: collection, options: bulkOptions, progress: counting) {
                loader in
                loader.stops(when: isInterrupted)
                // One block is read and parsed while the one before it encodes and commits: the
                // parse of the next block also fills the time the writer spends on a merged sort
                // window. Reading the block there too keeps both cores busy while it is read (an
                // eighth of a block's time when the loop read it).
                let (parts, blockBytes, input) = (max(1, parsers), blockBytes, ReaderHandle(reader))
                func readingAndParsing(
                    _ layout: Layout?, closed: Bool, after edge: LineEdge?
                ) -> Task<Result<ParsedBlock?, LoadError>, Never> {
                    Task {
                        do throws(LoadError) {
                            return .success(
                                try input.reader.next(targetBytes: blockBytes).map {
                                    Self.parse($0, parts: parts, layout: layout, closed: closed, after: edge)
                                })
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var next: Task<Result<ParsedBlock?, LoadError>, Never>? = readingAndParsing(nil, closed: false, after: nil)
                var (layout, closed, lastLine): (Layout?, Bool, Int) = (nil, false, 0)
                do {
                    while let current = next {
                        guard let result = try await current.value.get() else { break }
                        (layout, closed, lastLine) = (result.layout, result.closed, result.lastLine)
                        next = nil
                        if result.failure == nil { next = readingAndParsing(layout, closed: closed, after: result.lastEdge) }
                        if !result.articles.isEmpty { try await loader.submit(result.articles) }
                        // A stop first: the records before a bad line may not all have been kept
                        // after it, so the line's error would promise what the stop did not do.
                        if isInterrupted() { throw LoadError(.interrupted, "interrupted") }
                        if let failure = result.failure {
                            throw LoadError(.record, failure.message, line: failure.line, field: failure.field)
                        }
                    }
                    if layout == .array, !closed {
                        throw LoadError(
                            .record, "the input ends after line \(lastLine), inside the JSON array: its closing ']' is missing (a cut file?)")
                    }
                } catch {
                    // The reader is the caller's again once `run` returns: no read may still be going on.
                    _ = await next?.value
                    throw error
                }
            }
            let elapsed = ContinuousClock.now - start
            return Report(
                records: report.records, distinctRecords: report.distinctRecords, chunks: report.chunks,
                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        } catch let error as LoadError {
            // Counted here, once the loader has committed what it was going to (the records before
            // a bad line): what the body parsed may not all be committed.
            var error = error
            error.recordsBefore = committed.records.load(ordering: .relaxed)
            throw error
        } catch where isInterrupted() && Self.isCancellation(error) {
            // The loader stopped between the transactions of a merged run (``BulkLoader/stops(when:)``).
            throw LoadError(.interrupted, "interrupted", recordsBefore: committed.records.load(ordering: .relaxed))
        } catch {
            throw LoadError(
                .store, String(describing: error), recordsBefore: committed.records.load(ordering: .relaxed),
                underlying: error)
        }
    }

    /// The records the bulk loader reported committed, an id read twice counted once (as the
    /// summary of a load that ends counts them; a stopped one counted lines).
    private final class CommittedCount: Sendable {
        let records = Atomic<Int>(0)
    }

    /// Whether `error` is a stop rather than a failure: the loader's, or the writer's for it.
    static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? StoreError)?.code == .cancelled
    }

    /// A line that stops the load: its number and why.
    struct LineFailure: Sendable {
        var line: Int
        var message: String
        var field: String?

        init(line: Int, _ error: NewsMappingError) {
            self.line = line
            message = ArticleLoader.message(error)
            field = error.path
        }

        init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
    }

    /// A block's articles up to its first bad line, and that line's error.
    struct ParsedBlock: Sendable {
        var articles: [Article]
        var failure: LineFailure?
        /// The layout, known from the input's first line with something on it.
        var layout: Layout?
        /// Whether the array's `]` has been read (in this block or one before).
        var closed = false
        /// The number of the block's last line.
        var lastLine = 0
        /// The last line with something on it (in this block or one before), for the commas of
        /// the next block's first.
        var lastEdge: LineEdge?
    }

    /// Parses a block in `parts` pieces at once, each a run of whole lines. `layout` is nil
    /// until a block had a line with something on it (the first says which layout the input has);
    /// `edge` is the last such line of the blocks before.
    static func parse(
        _ block: LineBlockReader.Block, parts: Int, layout known: Layout?, closed: Bool, after edge: LineEdge?
    ) -> ParsedBlock {
        let bytes = block.bytes
        let first = known == nil ? firstContent(bytes) : nil
        let layout = known ?? first.map { Layout(firstByte: bytes[$0]) }
        // Piece boundaries just after a line break, so no line is cut.
        var bounds = [0]
        for p in 1..<max(1, parts) {
            var cut = bytes.count * p / parts
            while cut < bytes.count, cut > bounds.last!, bytes[cut - 1] != 10 { cut += 1 }
            bounds.append(max(cut, bounds.last!))
        }
        bounds.append(bytes.count)
        let cuts = bounds
        let pieces = bounds.count - 1
        let results = UnsafeMutableBufferPointer<PieceResult>.allocate(capacity: pieces)
        results.initialize(repeating: PieceResult())
        defer { results.deinitialize().deallocate() }
        let slots = SendableBuffer(results)
        // The piece with the input's `[` checks that it comes first.
        let opening = layout == .array ? first : nil
        bytes.withUnsafeBufferPointer { all in
            let input = SendableBytes(all)
            DispatchQueue.concurrentPerform(iterations: pieces) { piece in
                slots.buffer[piece] = parsePiece(
                    input.buffer, cuts[piece]..<cuts[piece + 1], layout ?? .lines,
                    opening: opening.map { (cuts[piece]..<cuts[piece + 1]).contains($0) } ?? false)
            }
        }
        var out = ParsedBlock(articles: [], layout: layout, closed: closed, lastEdge: edge)
        out.articles.reserveCapacity(results.reduce(0) { $0 + $1.articles.count })
        var line = block.firstLine
        for piece in results {
            if out.closed, let first = piece.firstContentLine {
                out.failure = LineFailure(line: line + first, message: "text after the JSON array's closing ']'")
                break
            }
            // The piece's first line was parsed without the line before it: its commas are checked here.
            if layout == .array, let first = piece.firstContent, let previous = out.lastEdge,
                let problem = separatorProblem(after: previous, first)
            {
                out.failure = LineFailure(line: line + piece.firstContentLine!, message: problem)
                break
            }
            if let last = piece.lastEdge { out.lastEdge = last }
            out.articles += piece.articles
            if var failure = piece.failure {
                failure.line += line
                out.failure = failure
                break
            }
            if piece.closed { out.closed = true }
            line += piece.lines
        }
        out.lastLine = line - 1
        return out
    }

    /// Where the first byte that is not a space or a line break is; nil when `bytes` has none.
    static func firstContent(_ bytes: [UInt8]) -> Int? {
        bytes.firstIndex { !($0 == 32 || $0 == 9 || $0 == 13 || $0 == 10) }
    }

    /// What one piece of a block gave: its articles up to a bad line, the lines it read, and
    /// the bad line's index in the piece.
    struct PieceResult {
        var articles: [Article] = []
        var lines = 0
        var failure: LineFailure?
        /// The index of the piece's first line with something on it, and that line.
        var firstContentLine: Int?
        var firstContent: LineContent?
        /// The piece's last line with something on it.
        var lastEdge: LineEdge?
        /// Whether the piece held the array's `]`.
        var closed = false
    }

    /// Parses the lines of `range`: one article per line holding an object, nothing for blank
    /// lines nor, in an array, for its brackets and commas. `opening`: the piece begins the input,
    /// whose first line with something on it must be the array's `[`.
    static func parsePiece(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ layout: Layout, opening: Bool
    ) -> PieceResult {
        var out = PieceResult()
        out.articles.reserveCapacity(range.count / 1_200 + 1)
        var start = range.lowerBound
        var open = !opening
        while start < range.upperBound {
            var end = start
            while end < range.upperBound, bytes[end] != 10 { end += 1 }
            defer {
                out.lines += 1
                start = end + 1
            }
            guard let line = lineContent(bytes, start..<end) else { continue }
            if out.firstContentLine == nil { (out.firstContentLine, out.firstContent) = (out.lines, line) }
            defer { out.lastEdge = line.edge }
            if let problem = structureProblem(line, layout, open: open, closed: out.closed, after: out.lastEdge) {
                out.failure = LineFailure(line: out.lines, message: problem)
                return out
            }
            switch line.kind {
            case .open: open = true
            case .close: out.closed = true
            case .empty:
                open = true
                out.closed = true
            case .record(let record):
                do throws(NewsMappingError) {
                    out.articles.append(try Article(jsonLine: UnsafeBufferPointer(rebasing: bytes[record])))
                } catch {
                    out.failure = LineFailure(line: out.lines, error)
                    // A record spread over lines: an array pretty-printed, not as dump writes it.
                    if layout == .array, case .truncated = error.kind { out.failure?.message = oneRecordALine }
                    return out
                }
            }
        }
        return out
    }

    /// A bad record's reason, naming the field: `wordCount: expected a whole number written without a fraction or an exponent, found 3.7`.
    package static func message(_ error: NewsMappingError) -> String {
        // A value or name of megabytes is cut: it made a line of megabytes of every error.
        let excerpt = { (text: String) in NewsMappingError.excerpt(text) }
        let field = excerpt(error.path)
        let prefix = field.isEmpty ? "" : "\(field): "
        switch error.kind {
        case .missingField: return "missing field '\(field)'"
        case .missingAll(let keys): return "missing field '\(field)' (and \(keys.dropLast().map { "'\($0)'" }.joined(separator: ", ")))"
        case .typeMismatch(let expected, let found): return "\(prefix)expected \(expected), found \(excerpt(found))"
        case .invalidValue(let text): return prefix + excerpt(text)
        case .invalidDate(let text):
            return "\(prefix)not a date: \"\(excerpt(text))\" (ISO 8601, as dump writes it: 2020-01-02T15:04:05Z, or 2020-01-02)"
        case .malformedJSON(let offset, let reason): return "not valid JSON at byte \(offset + 1)\(field.isEmpty ? "" : " (in \(field))"): \(reason)"
        case .truncated: return "not valid JSON: the line ends inside \(field.isEmpty ? "the record" : field)"
        case .depthLimitExceeded: return "not valid JSON: nested too deeply\(field.isEmpty ? "" : " (in \(field))")"
        case .emptyBody, .html, .apiFault, .apiError, .unknownCategories: return "not a JSON record"
        }
    }
}

/// A block's bytes shared by its parsers, read only while the block is alive (`withUnsafeBufferPointer`).
private struct SendableBytes: @unchecked Sendable {
    let buffer: UnsafeBufferPointer<UInt8>
    init(_ buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }
}

/// The input, read by one task at a time: the task that reads the next block starts only once
/// the one before it has ended.
private struct ReaderHandle: @unchecked Sendable {
    let reader: LineBlockReader
    init(_ reader: LineBlockReader) { self.reader = reader }
}

/// The parsers' result slots: each parser writes only its own index.
private struct SendableBuffer: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<ArticleLoader.PieceResult>
    init(_ buffer: UnsafeMutableBufferPointer<ArticleLoader.PieceResult>) { self.buffer = buffer }
}
