import QuireCodec

/// Writes the JSON of a batch of records on a thread of its own, for walks that hand the
/// records out one by one in key order (`forEachJSON`, what `quire dump` runs).
///
/// The walk collects the records' bytes (pointers into the map, valid while its transaction
/// lasts) and gives each full batch to a renderer, which writes its records' JSON one after the
/// other into its own buffer, kept from batch to batch; the walk then hands them out in order.
/// A walk keeps one renderer more than there are cores, so that every core renders a batch
/// while the walk collects the next: a whole batch a core, with no barrier between cores inside
/// a batch (cutting each batch in parts left a core idle whenever one part finished first). A
/// record the renderer cannot write (a field id newer than the table, a damaged record) is left
/// to the walk, which writes it alone with its usual retry and error.
///
/// @unchecked Sendable: a renderer is used by one thread at a time: the thread that renders a
/// batch, then, after waiting for it, the walk that hands the batch out.
final class JSONBatchRenderer: @unchecked Sendable {
    /// Records a batch holds: large enough that starting its thread costs little, small enough
    /// that the first records go out quickly.
    static let batchSize = 1024

    /// What a render wrote: where each record's JSON ends in the buffer.
    struct Output: Sendable {
        var ends: [Int] = []
        /// The index (in the batch) of the first record it could not write; it wrote none after.
        var failedAt: Int?
    }

    /// The writer (its buffer and its fields' keys), kept for the next batch.
    private final class Buffer {
        var writer: RecordJSONWriter
        init(_ writer: consuming RecordJSONWriter) { self.writer = writer }
    }

    private var buffer: Buffer?
    private var fields: FieldTable?

    /// Writes the JSON of each of `records` in order (the previous batch's bytes are gone).
    func render(_ records: MappedRecords, fields: FieldTable, options: CompactDecoder.Options) -> Output {
        let buffer: Buffer
        if let kept = self.buffer, fields == self.fields {
            buffer = kept
        } else {
            buffer = Buffer(RecordJSONWriter(fields: fields, options: options, capacity: Self.batchSize * 1536))
            (self.buffer, self.fields) = (buffer, fields)
        }
        var output = Output()
        output.ends.reserveCapacity(records.records.count)
        buffer.writer.removeAll()
        for (i, record) in records.records.enumerated() {
            do {
                try buffer.writer.append(record: record)
            } catch {
                output.failedAt = i
                break
            }
            output.ends.append(buffer.writer.count)
        }
        return output
    }

    /// The bytes the last render wrote, until the next render.
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        guard let buffer else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(buffer.writer.bytes)
    }
}

/// A batch of a JSON walk: its records' keys and bytes (in the map), the renderer that writes
/// their JSON, and the render in progress.
struct JSONWalkBatch {
    var keys: [StoreKey] = []
    var records: [UnsafeRawBufferPointer] = []
    let renderer = JSONBatchRenderer()
    var rendering: BackgroundWork<JSONBatchRenderer.Output>?

    init() {
        keys.reserveCapacity(JSONBatchRenderer.batchSize)
        records.reserveCapacity(JSONBatchRenderer.batchSize)
    }

    mutating func removeAll() {
        keys.removeAll(keepingCapacity: true)
        records.removeAll(keepingCapacity: true)
    }
}
