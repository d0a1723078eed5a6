import Foundation
import QuireCodec
internal import QuireLMDB
import Synchronization

/// One bulk load: it owns the chunk being written while the next one encodes, the chunks held
/// back to be sorted together, their arenas and the order they are written in. `bulkInsert` and
/// any loader that produces its values in chunks of its own (`quire load` parses lines into
/// chunks) submit through it; get one from `Store.withBulkLoader(into:options:progress:_:)`.
///
/// Chunks that arrive in key order are written as they come. Once a chunk arrives out of order,
/// it and every chunk after it are held (encoded, each sorted) until they fill the sort window
/// or the input ends, then merged into one sorted run and written in chunks: random keys become
/// one long ascending run instead of one per chunk. Everything after the first held chunk is
/// held too, so that a later value for a key is always written after an earlier one. When the
/// input outgrows the window (``BulkInsertOptions/externalSort``), each full window is written
/// as a sorted run to a temporary file instead, and the runs are merged once, at the end.
public final class BulkLoader<V: Codable & Sendable>: @unchecked Sendable {
    // @unchecked: used by one task at a time: overlapping `submit`s wait for each other instead
    // of racing (see `busy`), and the load's end waits for a submit in progress and makes later
    // ones throw (see `ended`).
    let store: Store
    let collection: StoreCollection<V>
    let options: BulkInsertOptions
    let progress: (@Sendable (BulkInsertProgress) -> Void)?
    /// The transactions being written, oldest first, each with its chunks' input counts.
    private var inFlight: [(task: Task<[Bool], any Error>, chunks: [(inputCount: Int, written: Int, spilled: Bool)])] = []
    /// The field table the previous chunk was encoded with.
    private var lastFields: FieldTable?
    /// In-order pieces smaller than a chunk, gathered until they make one (a sequence is
    /// encoded in pieces of ``pieceSize`` values, so that few of its values are alive at once).
    private var staged: [EncodedChunk] = []
    private var stagedCount = 0
    /// Sorted chunks held back for the merge, and their bytes.
    private var held: [EncodedChunk] = []
    private var heldBytes = 0
    /// Full sort windows written out as sorted runs, waiting for the final merge.
    private var spill: SpillFile?
    /// The full window being written to `spill` while the next one fills: its merge and write
    /// are serial, the encoding of the next chunks is not.
    private var spilling: Task<WindowSpill, Never>?
    /// Input values of the spilled runs not committed yet.
    private var pending = 0
    /// What the load is doing, for the progress reports.
    private var phase = BulkInsertPhase.inserting
    /// The largest key written or staged so far (tracked only when chunks are sorted).
    private var lastKey: [UInt8]?
    /// The largest key written so far (committed or in flight), staged pieces aside.
    private var lastWrittenKey: [UInt8]?
    /// A relaxed load's flush of its committed chunks, running in the background.
    private var backgroundFlush: Task<Void, Never>?
    private var report = BulkInsertReport(records: 0, chunks: 0, appendedChunks: 0, seconds: 0)
    private let start = ContinuousClock.now
    /// The full-text analyses' arrays, reused from chunk to chunk of this load.
    private let searchBuffers = SearchAnalysisBuffers()
    /// Whether the first chunk looked for a compression dictionary to train.
    private var dictionaryChecked = false
    /// `report.records`, for readers on other tasks (`report` is this loader's own).
    private let committed = Atomic<Int>(0)
    /// Set while a `submit` runs: two at once would interleave chunks and corrupt the held state.
    private let busy = Atomic<Bool>(false)
    /// Set when the load finished or was abandoned: a later submit (from a task the caller left
    /// running, or a loader kept past `withBulkLoader`) would stage values nothing writes.
    private let ended = Atomic<Bool>(false)
    /// Polled by the full-text compaction at the end (see ``stopsCompaction(when:)``).
    private var interrupted: @Sendable () -> Bool = { false }
    /// Polled before each transaction of a merged run (see ``stops(when:)``).
    private var stopped: @Sendable () -> Bool = { false }

    /// The load's final full-text compaction stops (rolled back: the index stays as the chunks
    /// wrote it) once `interrupted` is true, as it does when the task is cancelled. The chunks
    /// are all written: tests use it to leave a load's segments unmerged.
    package func stopsCompaction(when interrupted: @escaping @Sendable () -> Bool) {
        self.interrupted = interrupted
    }

    /// The load stops at its next transaction once `interrupted` is true, as it does when the
    /// task is cancelled: for a loader that learns of a signal through a flag (`quire load`), so
    /// that the first Ctrl-C takes seconds whatever the input's size. A merged run stops
    /// between its chunks (the chunks committed stay, the rest of the run is dropped with its
    /// temporary file), the compaction rolls back, and when the submitting closure throws, the
    /// chunks held in memory are written only if no sort window went to the temporary file
    /// (``abandon(after:)``).
    package func stops(when interrupted: @escaping @Sendable () -> Bool) {
        self.interrupted = interrupted
        stopped = interrupted
    }

    init(
        store: Store, collection: StoreCollection<V>, options: BulkInsertOptions,
        progress: (@Sendable (BulkInsertProgress) -> Void)?
    ) {
        self.store = store
        self.collection = collection
        self.options = options
        self.progress = progress
    }

    func begin() async throws {
        try store.ensureWritable()
        _ = try store.resolvedForWrite(collection)
        if options.relaxedDurability {
            let store = self.store
            try await store.writer.run { try store.beginRelaxedLoad() }
        }
    }

    /// Encodes `values` (in parallel over the cores) and writes them once the chunk before is
    /// committed; returns while they commit, so the caller can prepare the next ones. Values
    /// that continue in key order and make less than `options.chunkSize` records are gathered
    /// with the next ones into one chunk; values out of order wait in the sort window.
    ///
    /// Values are committed in the order submitted; a key given again replaces the earlier value.
    /// Overlapping calls (from tasks of their own) run one after the other, in no set order.
    /// - Throws: `StoreError` when a value cannot be encoded or a commit fails; nothing of the
    ///   failing chunk is written, the chunks before it stay committed. `StoreError.Code.cancelled`
    ///   once the load has ended (`withBulkLoader` returned or threw): nothing is written then.
    public func submit(_ values: ArraySlice<V>) async throws {
        let endedError = StoreError(
            .cancelled, "\(store.path): a bulk load of '\(collection.name)' ended before this submit: nothing of it is written")
        while !busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            // The load's end holding the flag, or another submit running: this one waits its turn.
            if ended.load(ordering: .acquiring) { throw endedError }
            try await Task.sleep(for: .milliseconds(1))
        }
        defer { busy.store(false, ordering: .releasing) }
        guard !ended.load(ordering: .acquiring) else { throw endedError }
        // After a stop, values are kept only when they are a trickle's (the few lines a pipe's
        // reader hands over at the stop) and what is held stays within a chunk; a file's block
        // is dropped unwritten, and no dictionary is trained: training, encoding and writing a
        // first block held the first Ctrl-C of a new store's load back for a second.
        if stopped() && !keepsAfterAStop(values.count) { return }
        if !dictionaryChecked && !stopped() {
            dictionaryChecked = true
            try await store.trainDictionaryBeforeLoad(values, collection, previous: lastFields)
        }
        let encoded = try store.encodeChunk(
            values, collection, sort: options.sortChunks, previous: lastFields, searchBuffers: searchBuffers)
        if stopped() && !keepsAfterAStop(encoded.entries.count) { return }
        lastFields = encoded.fields
        if held.isEmpty && (options.sortWindow == 0 || !options.sortChunks) {
            try await write(encoded)
            return
        }
        if held.isEmpty && spill == nil && continuesInOrder(encoded) {
            raise(&lastKey, to: encoded)
            staged.append(encoded)
            stagedCount += encoded.entries.count
            if stagedCount >= options.chunkSize { try await writeStaged() }
            return
        }
        // Out of order: what is staged came first, so it joins the merge. Merged chunks are
        // tokenized again from their records: analyses made when encoding would only be held.
        for piece in staged { heldBytes += piece.byteCount }
        held += staged.map(\.withoutSearchParts)
        staged = []
        stagedCount = 0
        held.append(encoded.withoutSearchParts)
        heldBytes += encoded.byteCount
        if heldBytes >= options.sortWindow {
            if options.externalSort { try await spillHeld() } else { try await writeHeld() }
        }
    }

    /// Values a sequence's bulk insert encodes at a time (at most a chunk).
    static var pieceSize: Int { 4_096 }

    /// `submit` of a whole array.
    public func submit(_ values: [V]) async throws { try await submit(values[...]) }

    /// Input values committed so far (a key given twice counts twice). Safe to read from any
    /// task while a `submit` runs.
    public var committedRecords: Int { committed.load(ordering: .acquiring) }

    /// True when the chunk arrived sorted and begins above every key written or staged before it.
    private func continuesInOrder(_ chunk: EncodedChunk) -> Bool {
        guard chunk.arrivedSorted, let first = chunk.entries.first?.key else { return false }
        return KeyOrdering.follows(first, lastKey)
    }

    /// Raises `key` to the chunk's last key when that is greater.
    private func raise(_ key: inout [UInt8]?, to chunk: EncodedChunk) {
        if options.sortChunks, let last = chunk.entries.last?.key, KeyOrdering.follows(last, key) {
            key = last.array
        }
    }

    /// Writes the staged pieces as one chunk (they follow one another, so merging them
    /// concatenates them).
    private func writeStaged() async throws {
        guard !staged.isEmpty else { return }
        var pieces = staged
        staged = []
        stagedCount = 0
        if pieces.count == 1 { return try await write(pieces[0]) }
        let fields = try store.harmonizeFields(&pieces, collection)
        let searchParts = SearchBatchPart.joined(pieces.map(\.searchParts), counts: pieces.map(\.entries.count))
        let searchSkipped = pieces.allSatisfy { $0.searchSkipped == nil }
            ? nil : pieces.flatMap { $0.searchSkipped ?? [Bool](repeating: false, count: $0.entries.count) }
        let total = pieces.reduce(0) { $0 + $1.entries.count }
        var merger = SortedRunMerger(pieces, fields: fields)
        while var chunk = merger.next(maxCount: Int.max) {
            // One chunk, the pieces end to end: their texts' analyses still hold.
            if chunk.entries.count == total, let searchParts {
                chunk.searchParts = searchParts
                chunk.searchSkipped = searchSkipped
            }
            try await write(chunk)
        }
    }

    /// Merges the held chunks into one sorted run and writes it, in chunks. When a chunk fails,
    /// the ones before it that committed are reported before the error goes up.
    private func writeHeld(stoppable: Bool = true) async throws {
        guard !held.isEmpty else { return }
        let fields = try store.harmonizeFields(&held, collection)
        let size = try mergedChunkSize(smallestKey: held.compactMap { $0.entries.first?.key.array }.min(by: KeyOrdering.precedes))
        var merger = SortedRunMerger(held, fields: fields)
        held = []
        heldBytes = 0
        try await writeAll(spilled: false, stoppable: stoppable) { merger.next(maxCount: size) }
    }

    /// Starts merging the held chunks into one sorted run in the spill file, in a task of its own
    /// while the next chunks encode, once the run before is written (each run's field table
    /// extends the one before). When it fails (a full disk), its chunks are held again: a
    /// failed load still writes them.
    private func spillHeld() async throws {
        guard !held.isEmpty else { return }
        try await finishSpill()
        let file = try spill ?? SpillFile(directory: store.path)
        spill = file
        let window = WindowSpill(file: file, chunks: held)
        held = []
        heldBytes = 0
        let (store, collection) = (self.store, self.collection)
        spilling = Task.detached {
            do {
                let fields = try store.harmonizeFields(&window.chunks, extending: file.runs.last?.fields, collection)
                var merger = SortedRunMerger(window.chunks, fields: fields)
                try file.appendRun(&merger)
                window.chunks = []
                // The window's arrays go back to the system: freed on this thread after other
                // threads allocated them, they otherwise stayed in those threads' heaps.
                returnFreedMemory()
            } catch {
                window.failure = error
            }
            return window
        }
    }

    /// Waits for the window being spilled. When it failed, its chunks are held again, before
    /// the ones held since, and its error is thrown.
    private func finishSpill() async throws {
        guard let task = spilling else { return }
        spilling = nil
        let window = await task.value
        if let failure = window.failure {
            held = window.chunks + held
            heldBytes = held.reduce(0) { $0 + $1.byteCount }
            throw failure
        }
        pending += window.file.runs.last?.inputCount ?? 0
        reportProgress()
    }

    /// Merges the spilled runs into one ascending run and writes it, in chunks.
    private func writeSpilled() async throws {
        try await finishSpill()
        guard let file = spill, !file.runs.isEmpty else { return }
        spill = nil
        // The chunks still committing are counted first: the merge's total is what is
        // committed and what the runs hold, and it went past its total by their records.
        while !inFlight.isEmpty { try await settleOldest() }
        phase = .mergingSortedRuns
        reportProgress()
        returnFreedMemory()  // the sort windows' arrays: the writing phase has no use for them
        let size = try mergedChunkSize(smallestKey: file.runs.map(\.firstKey).min(by: KeyOrdering.precedes))
        var merger = try SpilledRunMerger(file, indexed: !collection.indexes.isEmpty)
        try await writeAll(spilled: true) { merger.next(maxCount: size) }
    }

    /// Writes every chunk `next` gives, then waits for the last; when `stoppable`, a
    /// cancellation or a stop (``stops(when:)``) ends it before the next chunk.
    /// When a chunk fails, the ones before it that committed are reported before the error goes up.
    private func writeAll(spilled: Bool, stoppable: Bool = true, _ next: () -> EncodedChunk?) async throws {
        do {
            while let chunk = next() {
                if stoppable, Task.isCancelled || stopped() { throw CancellationError() }
                try await write(chunk, spilled: spilled)
            }
            try await settle()
        } catch {
            try? await settle()
            throw error
        }
    }

    /// Records a transaction of the held run writes: the chunk size when the run lands beyond
    /// every stored key (appended), at most ``scatteredChunkSize`` when it lands among them. A
    /// transaction that inserts between stored keys touches a page per record or so, and LMDB
    /// keeps a dirty copy of each page it touched in memory until the commit.
    private func mergedChunkSize(smallestKey: [UInt8]?) throws -> Int {
        guard options.chunkSize > Self.scatteredChunkSize, let smallest = smallestKey else { return options.chunkSize }
        // The committed last key, and this load's own (a chunk of it may still be committing;
        // staged pieces are part of this run).
        func isAfter(_ last: [UInt8]?) -> Bool { last.map { KeyOrdering.precedes($0, smallest) } ?? true }
        let appends = isAfter(try store.lastRecordKey(collection)) && isAfter(lastWrittenKey)
        return appends ? options.chunkSize : Self.scatteredChunkSize
    }

    /// The largest transaction of a held run that lands among stored keys.
    static var scatteredChunkSize: Int { 12_000 }

    /// Hands a chunk to the writer as a transaction of its own, once the transaction before it
    /// has committed (and is reported); the chunk is tokenized meanwhile (unless it was when
    /// encoded), so the writer's transaction only merges.
    ///
    /// One chunk a transaction, one transaction in flight. A chunk's date index entries (and
    /// document entries keyed by hashes) land on pages all over their trees, and LMDB keeps a copy
    /// of each page a transaction touches until it commits (and its allocations after, for the
    /// next one): two chunks a transaction wrote fewer pages a record, but their copies grow with
    /// the trees. `quire load` of 1M articles peaked at 220 MiB of anonymous memory in 49 s,
    /// against 267 MiB in 51 s with pairs of chunks and two transactions queued.
    private func write(_ encoded: EncodedChunk, spilled: Bool = false) async throws {
        var analysed = encoded
        if analysed.searchParts == nil, let analysis = try store.searchAnalysis(of: encoded, collection, buffers: searchBuffers) {
            (analysed.searchParts, analysed.searchSkipped) = analysis
        }
        let written = Self.distinctKeys(analysed.entries, after: lastWrittenKey)
        raise(&lastKey, to: analysed)
        raise(&lastWrittenKey, to: analysed)
        while !inFlight.isEmpty { try await settleOldest() }
        let (store, collection, chunk) = (self.store, self.collection, analysed)
        let relaxed = options.relaxedDurability
        let task = Task { try await store.writer.run { try store.writeChunks([chunk], collection, relaxed: relaxed) } }
        inFlight.append((task, [(chunk.inputCount, written, spilled)]))
    }

    /// The chunk's records, a key given twice counted once: the mergers write each key once,
    /// but a chunk that arrived in order may hold a key twice in a row (the second replaces the
    /// first), or begin with the key the chunk before it ended with.
    private static func distinctKeys(_ entries: [EncodedEntry], after previous: [UInt8]?) -> Int {
        var count = 0
        var before: ArenaBytes?
        for entry in entries {
            let repeated =
                if let before { KeyOrdering.equal(before.buffer, entry.key.buffer) } else {
                    previous?.withUnsafeBytes { KeyOrdering.equal($0, entry.key.buffer) } ?? false
                }
            if !repeated { count += 1 }
            before = entry.key
        }
        return count
    }

    /// Waits for every transaction, reporting them oldest first.
    private func settle() async throws {
        while !inFlight.isEmpty { try await settleOldest() }
    }

    /// Waits for the oldest transaction in flight and reports its chunks.
    private func settleOldest() async throws {
        let (task, chunks) = inFlight.removeFirst()
        let appended = try await task.value
        report.transactions += 1
        for (chunk, appended) in zip(chunks, appended) {
            report.records += chunk.inputCount
            committed.store(report.records, ordering: .releasing)
            report.distinctRecords += chunk.written
            report.chunks += 1
            if appended { report.appendedChunks += 1 }
            if chunk.spilled { pending = max(0, pending - chunk.inputCount) }
        }
        reportProgress()
        await flushInBackground()
    }

    /// In a relaxed load, starts flushing what is committed so far on a thread of its own (after
    /// the previous flush ends), so that the disk writes while the next chunks encode instead of
    /// all at the end. Durability is unchanged: the load's end still syncs before it returns.
    private func flushInBackground() async {
        guard options.relaxedDurability else { return }
        await backgroundFlush?.value
        let environment = store.environment
        backgroundFlush = Task {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                // Not on the cooperative pool: an fsync blocks its thread.
                DispatchQueue.global(qos: .utility).async {
                    try? environment.sync()  // a failure shows in the final sync
                    done.resume()
                }
            }
        }
    }

    /// Tells the caller's progress closure where the insert stands.
    private func reportProgress() {
        progress?(
            BulkInsertProgress(
                records: report.records, chunks: report.chunks, elapsed: elapsed, pending: pending, phase: phase,
                distinctRecords: report.distinctRecords))
    }

    private var elapsed: Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// Ends the loader for submits: waits for one in progress (a task the caller did not await),
    /// so that what it staged is written by `finish`, and makes every later one throw.
    private func end() async {
        ended.store(true, ordering: .releasing)  // first: a submit starting now throws
        while !busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            try? await Task.sleep(for: .milliseconds(1))
        }
        busy.store(false, ordering: .releasing)
    }

    func finish() async throws -> BulkInsertReport {
        await end()
        try await writeStaged()
        if spill != nil {
            try await spillHeld()  // the last window joins the runs: one pass over the stored tree
            try await writeSpilled()
        }
        try await writeHeld()
        try await settle()
        // The compaction's pages take the analyses' place in memory, not a place beside them.
        searchBuffers.release()
        returnFreedMemory()
        await compactSearchIndex()
        await backgroundFlush?.value
        try await restoreDurability()
        store.counters.withLock { $0.bulkRecords += report.records }
        report.seconds = elapsed
        return report
    }

    /// Packs the full-text index's posting blocks when this load split most of their pages
    /// (``SearchCompaction``). A compaction that fails (a full disk) leaves the index as it was
    /// and the load's records committed: it is not the load's error, so it is not thrown. So
    /// is a compaction that the load's cancellation or interruption stops part way: it is rolled back.
    private func compactSearchIndex() async {
        guard collection.search != nil, report.records > 0, !Task.isCancelled, !interrupted() else { return }
        phase = .compactingSearchIndex
        reportProgress()
        let (store, collection, written) = (self.store, self.collection, report.records)
        let (stopped, interrupted) = (Locked(false), self.interrupted)  // read on the writer's thread
        let outcome = await withTaskCancellationHandler {
            try? await store.writer.run {
                try store.compactSearchIndexAfterLoad(collection, written: written) {
                    stopped.withLock { $0 } || interrupted()
                }
            }
        } onCancel: {
            stopped.withLock { $0 = true }
        }
        if let outcome = outcome ?? nil, outcome.rewritten {
            report.searchCompaction = .init(bytesBefore: outcome.bytesBefore, bytesAfter: outcome.bytesAfter)
        }
    }

    /// Ends a run that `error` stopped: waits for the transactions in flight and writes the
    /// staged, spilled and held chunks (input from before the failure, in input order) as far as
    /// it can; a cancelled task drops them. After a stop (``stops(when:)``) the spilled runs are
    /// not written (their merge would take as long as the load so far), nor the window held
    /// after them: what a stop writes is at most a window in memory, in a few seconds.
    func abandon(after error: any Error) async {
        await end()
        try? await finishSpill()
        // After a stop (a signal), what is held is written only when it is at most a chunk (what
        // a pipe's trickle gathers before it is written): a sort window of tens of thousands,
        // merged, tokenized and indexed, held the first Ctrl-C back for seconds. More is dropped.
        let writesHeld = !stopped() || keepsAfterAStop(0)
        if !(error is CancellationError || Task.isCancelled), writesHeld {
            try? await writeStaged()
            // The held chunks came after the runs: not written when the runs stopped.
            do {
                try await writeSpilled()
                try await writeHeld(stoppable: false)
            } catch {}
        }
        spill = nil
        while !inFlight.isEmpty { try? await settleOldest() }  // counted when they committed
        if pending > 0 {
            // The runs not written are dropped: the last report says what is committed.
            pending = 0
            reportProgress()
        }
        await backgroundFlush?.value
        try? await restoreDurability()
    }

    /// Whether, after a stop, `count` more values may join what is held: a trickle's few, at
    /// most a chunk together with what is held, and no window gone to the temporary file.
    private func keepsAfterAStop(_ count: Int) -> Bool {
        let heldRecords = stagedCount + held.reduce(0) { $0 + $1.entries.count }
        return count <= Self.trickle && spill == nil && heldRecords + count <= options.chunkSize
    }

    /// The most values a submit after a stop may bring and still be kept: what a pipe that
    /// went quiet hands over, not a file's block of thousands.
    static var trickle: Int { 2_048 }

    private func restoreDurability() async throws {
        guard options.relaxedDurability else { return }
        let store = self.store
        try await store.writer.run { try store.endRelaxedLoad() }
    }
}

/// A full sort window handed to a task that writes it to the spill file as a run.
/// @unchecked: the task alone uses it until the loader awaits its value.
private final class WindowSpill: @unchecked Sendable {
    let file: SpillFile
    var chunks: [EncodedChunk]
    var failure: (any Error)?

    init(file: SpillFile, chunks: [EncodedChunk]) {
        self.file = file
        self.chunks = chunks
    }
}
