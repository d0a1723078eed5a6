import QuireCodec
internal import QuireLMDB

/// Walks that hand out records as JSON written straight from their bytes, a batch a core at a
/// time: what `quire dump` runs, in key order or in an index's order.
extension StoreReading where Self: ~Copyable {
    /// Walks a collection by name as JSON records, in key order, until `body` returns false: the
    /// dump's fast path. Each record's JSON is written straight from its bytes, batches of
    /// records on every core (a batch a core) while the ones before are handed out (`body` is
    /// still called in order, on this thread). Inside a write transaction the records are
    /// written one at a time, each before `body` gets it: `body` may write there, which changes
    /// the pages batches would still point into.
    public func forEachJSON(
        inCollectionNamed name: String, range: StoreKeyRange = .all, reverse: Bool = false,
        _ body: (StoreKey, [UInt8]) throws -> Bool
    ) throws {
        var json: [UInt8] = []
        try forEachJSONBytes(inCollectionNamed: name, range: range, reverse: reverse) { key, bytes in
            try body(key, Self.reusing(&json, bytes))
        }
    }

    /// ``forEachJSON(inCollectionNamed:range:reverse:_:)`` handing out each record's JSON where
    /// it was written (valid only during the call of `body`), without copying it into an array:
    /// what `quire dump` writes out.
    package func forEachJSONBytes(
        inCollectionNamed name: String, range: StoreKeyRange = .all, reverse: Bool = false,
        _ body: (StoreKey, UnsafeBufferPointer<UInt8>) throws -> Bool
    ) throws {
        let c = try store.resolved(name)
        try walkJSON(c, body) { collect in
            try forEachEntry(in: c.records, range: range.lmdb, reverse: reverse) { key, entry in
                try collect(key, entry.value)
            }
        }
    }

    /// ``forEachJSON(inCollectionNamed:range:reverse:_:)`` in the order of one of the
    /// collection's indexes: the record of each entry whose index value is in `range` (the days
    /// of a date index, one section's value), as often as it has entries there.
    ///
    /// - Throws: `StoreError(.corrupted)` at an entry whose record the collection does not hold:
    ///   an index and its records are written in one transaction, so that is a damaged page
    ///   (it was left out, and a `dump --since` lost the record with status 0).
    public func forEachJSON(
        inCollectionNamed name: String, byIndex index: String, range: StoreKeyRange = .all, reverse: Bool = false,
        _ body: (StoreKey, [UInt8]) throws -> Bool
    ) throws {
        var json: [UInt8] = []
        try forEachJSONBytes(inCollectionNamed: name, byIndex: index, range: range, reverse: reverse) { key, bytes in
            try body(key, Self.reusing(&json, bytes))
        }
    }

    /// ``forEachJSON(inCollectionNamed:byIndex:range:reverse:_:)`` handing out each record's
    /// JSON where it was written, as ``forEachJSONBytes(inCollectionNamed:range:reverse:_:)``.
    package func forEachJSONBytes(
        inCollectionNamed name: String, byIndex index: String, range: StoreKeyRange = .all, reverse: Bool = false,
        _ body: (StoreKey, UnsafeBufferPointer<UInt8>) throws -> Bool
    ) throws {
        let c = try store.resolved(name)
        let entries = try store.indexDatabase(name, index)
        try walkJSON(c, body) { collect in
            try forEachEntry(in: entries, range: range.lmdb, reverse: reverse) { _, entry in
                let key = try logicalKey(entry.value)
                if let stored = try storedKey(key), let going = try withValue(forKey: stored, in: c.records, { try collect(key, $0) }) {
                    return going
                }
                throw StoreError(
                    .corrupted,
                    "collection '\(name)': index '\(index)' names record \(key.clippedDescription), which the collection does not hold (a damaged index: run quire verify)")
            }
        }
    }

    /// `bytes` in `array`, whose storage is reused from record to record.
    private static func reusing(_ array: inout [UInt8], _ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        array.removeAll(keepingCapacity: true)
        array.append(contentsOf: bytes)
        return array
    }

    /// Hands out as JSON, in order, the records that `walk` gives to its `collect` (a key and
    /// the record's bytes in the map), until `body` or `collect` returns false.
    private func walkJSON(
        _ c: RegisteredCollection, _ body: (StoreKey, UnsafeBufferPointer<UInt8>) throws -> Bool,
        walk: (_ collect: (StoreKey, UnsafeRawBufferPointer) throws -> Bool) throws -> Void
    ) throws {
        // `collect` calls `body`, so it is passed as escaping; it does not outlive this call.
        try withoutActuallyEscaping(body) { body in try walkJSON(c, escapable: body, walk: walk) }
    }

    private func walkJSON(
        _ c: RegisteredCollection, escapable body: @escaping (StoreKey, UnsafeBufferPointer<UInt8>) throws -> Bool,
        walk: (_ collect: (StoreKey, UnsafeRawBufferPointer) throws -> Bool) throws -> Void
    ) throws {
        let options = c.decoder.options
        var table: FieldTable?  // fetched once for the walk, not per record
        var json: [UInt8] = []  // a record written alone
        if _context.writeState != nil {
            try walk { key, record in
                try withFieldRetry(&table) { table in
                    json.removeAll(keepingCapacity: true)
                    try CompactValue.appendJSON(from: record, fields: table, options: options, to: &json)
                }
                return try json.withUnsafeBufferPointer { try body(key, $0) }
            }
            return
        }
        /// A ring of batches: one filled by the walk while the others render, a core each, and
        /// are handed out in the order they were filled.
        var batches = (0...Parallelism.parts).map { _ in JSONWalkBatch() }
        var filling = 0
        // The renders read the map: none outlives this call (and its transaction).
        defer { for batch in batches { _ = batch.rendering?.wait() } }

        /// Hands out the rendered batch `batches[index]` in order; false when `body` stopped the walk.
        func handOut(_ index: Int, _ output: JSONBatchRenderer.Output) throws -> Bool {
            let batch = batches[index]
            var next = 0
            let stopped = try batch.renderer.withBytes { bytes in
                var start = 0
                for end in output.ends {
                    if try !body(batch.keys[next], UnsafeBufferPointer(rebasing: bytes[start..<end])) { return true }
                    start = end
                    next += 1
                }
                return false
            }
            if stopped { return false }
            guard output.failedAt != nil else { return true }
            // The rest of the batch, one by one: the field table is refreshed when the record
            // has an id it lacks; a damaged record throws here, as in a serial walk.
            while next < batch.records.count {
                try withFieldRetry(&table) { table in
                    json.removeAll(keepingCapacity: true)
                    try CompactValue.appendJSON(from: batch.records[next], fields: table, options: options, to: &json)
                }
                if try !json.withUnsafeBufferPointer({ try body(batch.keys[next], $0) }) { return false }
                next += 1
            }
            return true
        }
        /// Starts rendering the batch the walk filled, moves on to the next in the ring, and
        /// hands that one out first if it is still in flight (the oldest).
        func advance() throws -> Bool {
            if !batches[filling].records.isEmpty {
                let fields = table ?? writingFields ?? store.fields
                table = fields
                let (renderer, records) = (batches[filling].renderer, MappedRecords(records: batches[filling].records))
                batches[filling].rendering = BackgroundWork { renderer.render(records, fields: fields, options: options) }
            }
            filling = (filling + 1) % batches.count
            guard let rendering = batches[filling].rendering else { return true }
            let output = rendering.wait()
            batches[filling].rendering = nil
            defer { batches[filling].removeAll() }
            return try handOut(filling, output)
        }
        var stopped = false
        try walk { key, record in
            batches[filling].keys.append(key)
            batches[filling].records.append(record)
            if batches[filling].records.count == JSONBatchRenderer.batchSize, try !advance() {
                stopped = true
                return false
            }
            return true
        }
        // The last batch, then every one still rendering, in order.
        guard !stopped else { return }
        for _ in batches.indices {
            if try !advance() { return }
        }
    }
}
