import QuireCodec

/// Writes the JSON of a batch of records on several cores at once, for walks that hand the
/// records out one by one in key order (`forEachJSON`, what `quire dump` runs).
///
/// The walk collects the records' bytes (pointers into the map, valid while its transaction
/// lasts), the batch is cut into one part a core, and each part writes its records' JSON one
/// after the other into its own buffer; the walk then hands them out in order. A record a part
/// cannot write (a field id newer than the table, a damaged record) is left to the walk, which
/// writes it alone with its usual retry and error.
struct JSONBatchRenderer {
    /// Records a batch holds: large enough that starting the parts costs little, small enough
    /// that the first records go out quickly.
    static let batchSize = 1024

    /// One part's output: its records' JSON back to back, and where each one ends.
    struct Part {
        /// The records of the batch it covers.
        var range: Range<Int>
        var bytes: [UInt8] = []
        var ends: [Int] = []
        /// The index (in the batch) of the first record it could not write; it wrote none after.
        var failedAt: Int?
    }

    /// The JSON of each of `records`, by parts in batch order.
    static func render(
        _ records: [UnsafeRawBufferPointer], fields: FieldTable, options: CompactDecoder.Options
    ) -> [Part] {
        let mapped = MappedRecords(records: records)
        return Parallelism.inParts(count: records.count) { range in
            var part = Part(range: range)
            part.bytes.reserveCapacity(range.count * 1536)
            part.ends.reserveCapacity(range.count)
            for i in range {
                do {
                    try CompactValue.appendJSON(from: mapped.records[i], fields: fields, options: options, to: &part.bytes)
                } catch {
                    part.failedAt = i
                    break
                }
                part.ends.append(part.bytes.count)
            }
            return part
        }
    }
}
