import QuireCodec

/// Writes the JSON of a batch of records on several cores at once, for walks that hand the
/// records out one by one in key order (`forEachJSON`, what `quire dump` runs).
///
/// The walk collects the records' bytes (pointers into the map, valid while its transaction
/// lasts), the batch is cut into one part a core, and each part writes its records' JSON one
/// after the other into its own buffer, kept from batch to batch; the walk then hands them out
/// in order. A record a part cannot write (a field id newer than the table, a damaged record) is
/// left to the walk, which writes it alone with its usual retry and error.
///
/// @unchecked Sendable: a renderer is used by one thread at a time: the thread that renders a
/// batch (each part's buffer by its own core), then, after waiting for it, the walk that hands
/// the batch out. A walk keeps two, so that one batch renders while the other is handed out.
final class JSONBatchRenderer: @unchecked Sendable {
    /// Records a batch holds: large enough that starting the parts costs little, small enough
    /// that the first records go out quickly.
    static let batchSize = 1024

    /// One part's output: where each of its records' JSON ends in its buffer.
    struct Part: Sendable {
        /// The records of the batch it covers.
        var range: Range<Int>
        var number: Int
        var ends: [Int] = []
        /// The index (in the batch) of the first record it could not write; it wrote none after.
        var failedAt: Int?
    }

    /// A part's writer, kept for the next batch (its buffer and its fields' keys).
    /// @unchecked Sendable: only its own part's thread uses it during a render.
    private final class PartBuffer: @unchecked Sendable {
        var writer: RecordJSONWriter
        init(_ writer: consuming RecordJSONWriter) { self.writer = writer }
    }

    private var buffers: [PartBuffer] = []
    private var fields: FieldTable?

    /// Writes the JSON of each of `records`, by parts in batch order (the previous batch's bytes
    /// are gone).
    func render(_ records: MappedRecords, fields: FieldTable, options: CompactDecoder.Options) -> [Part] {
        if fields != self.fields {
            let capacity = Self.batchSize / Parallelism.parts * 1536
            buffers = (0..<Parallelism.parts).map { _ in
                PartBuffer(RecordJSONWriter(fields: fields, options: options, capacity: capacity))
            }
            self.fields = fields
        }
        let buffers = self.buffers
        return Parallelism.inNumberedParts(count: records.records.count) { number, range in
            var part = Part(range: range, number: number)
            let buffer = buffers[number]
            buffer.writer.removeAll()
            part.ends.reserveCapacity(range.count)
            for i in range {
                do {
                    try buffer.writer.append(record: records.records[i])
                } catch {
                    part.failedAt = i
                    break
                }
                part.ends.append(buffer.writer.count)
            }
            return part
        }
    }

    /// The bytes `part` wrote, until the next render.
    func withBytes<R>(of part: Part, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(buffers[part.number].writer.bytes)
    }
}

/// A batch of a JSON walk: its records' keys and bytes (in the map), and the renderer that
/// writes their JSON.
struct JSONWalkBatch {
    var keys: [StoreKey] = []
    var records: [UnsafeRawBufferPointer] = []
    let renderer = JSONBatchRenderer()

    init() {
        keys.reserveCapacity(JSONBatchRenderer.batchSize)
        records.reserveCapacity(JSONBatchRenderer.batchSize)
    }

    mutating func removeAll() {
        keys.removeAll(keepingCapacity: true)
        records.removeAll(keepingCapacity: true)
    }
}
