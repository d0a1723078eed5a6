import QuireCodec
internal import QuireLMDB

/// A walk that hands out a few fields of each record, read from batches of records on every
/// core: what `quire dump --format table` runs (an id, a date, a section and a headline a row).
extension StoreReading where Self: ~Copyable {
    /// Walks a collection by name in key order, handing out the values at `paths` (dotted, as
    /// ``CompactField/value(at:in:fields:options:)`` takes them; nil where a record has none)
    /// until `body` returns false. Each record is opened once (decompressed once) and only the
    /// fields asked for are read, a batch of records on every core while the batch before is
    /// handed out, in order, on this thread. Inside a write transaction, `body` must not write.
    package func forEachFieldValues(
        inCollectionNamed name: String, paths: [String], _ body: (StoreKey, [CompactValue?]) throws -> Bool
    ) throws {
        let c = try store.resolved(name)
        let components = paths.map(CompactField.components(of:))
        let options = c.decoder.options
        var table: FieldTable? = writingFields ?? store.fields
        // The batch's fields are read on every core while the batch before is handed out; nil for
        // a record that does not read with the table in hand (a field added since, or damage),
        // read again on this thread.
        var batches = EntryBatchPipeline<[[CompactValue?]?]>(entries(in: c.records), batchSize: Self.fieldWalkBatch) {
            batch in
            guard let fields = table else { return nil }
            let records = MappedRecords(records: batch.map(\.value))
            return BackgroundWork {
                Parallelism.inParts(count: records.records.count) { range in
                    range.map { i in try? CompactField.values(at: components, in: records.records[i], fields: fields, options: options) }
                }.flatMap { $0 }
            }
        }
        while let (batch, read) = batches.next() {
            for (i, entry) in batch.enumerated() {
                let values =
                    try read?[i]
                    ?? withFieldRetry(&table) { table in
                        try CompactField.values(at: components, in: entry.value, fields: table, options: options)
                    }
                if try !body(try logicalKey(entry.key), values) { return }
            }
        }
        try checkIntact()
    }

    /// Records a batch of a field walk holds.
    private static var fieldWalkBatch: Int { 2_048 }
}
