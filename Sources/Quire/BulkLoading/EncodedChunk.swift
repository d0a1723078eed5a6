import QuireCodec
internal import QuireLMDB

/// One record of an encoded chunk: its key and its encoded bytes.
struct EncodedEntry: Sendable {
    var key: ArenaBytes
    var record: ArenaBytes
}

/// A key over 510 bytes and its stored form, to record in `_longkeys` with the chunk.
struct LongKeyPair: Sendable {
    var physical: [UInt8]
    var logical: [UInt8]
}

/// Records encoded off the writer thread, in the order they are to be written.
///
/// A chunk keeps no values, only their bytes: a held chunk costs its encoded size, not the
/// several times larger values (what kept a random-order load of a million articles above 2 GiB).
/// What needs a value again (encoding against a diverged field table, the full-text index's text)
/// decodes it from the record.
struct EncodedChunk: Sendable {
    /// Each record's key and bytes.
    var entries: [EncodedEntry]
    /// The memory `entries` point into.
    var arenas: [RecordArena]
    /// For each record, its keys in each of the collection's indexes; empty when the collection
    /// has no index.
    var indexKeys: [IndexKeyBytes]
    /// The field table the records were encoded with.
    var fields: FieldTable
    /// True when the values arrived in ascending key order (nothing had to be sorted).
    var arrivedSorted: Bool
    /// The input values this chunk accounts for: more than its records when a merge dropped
    /// values that a later value for the same key replaces.
    var inputCount: Int
    /// What holding the chunk costs: the bytes of its keys, records and index keys, and
    /// ``overheadPerRecord`` for each record.
    var byteCount: Int
    /// The keys over 510 bytes that the chunk's records and index entries use (empty in the
    /// common case), recorded in `_longkeys` in the chunk's transaction.
    var longKeys: [LongKeyPair] = []
    /// The records tokenized for the collection's full-text index, when done before the chunk
    /// reaches the writer (``Store/searchAnalysis(of:_:)``); nil: the writer tokenizes them.
    var searchParts: [SearchBatchPart]?
    /// The records the analysis in ``searchParts`` left out, because each was stored already
    /// byte for byte when the chunk was analysed (``Store/recordsStoredAlready(_:_:)``); nil
    /// when it left none out. The writer leaves such records alone; when one of them changed
    /// meanwhile, it tokenizes the chunk again.
    var searchSkipped: [Bool]?

    /// The chunk without its search analysis (one held for a merge: what is merged is tokenized
    /// again, from the merged chunks' records).
    var withoutSearchParts: EncodedChunk {
        var chunk = self
        chunk.searchParts = nil
        chunk.searchSkipped = nil
        return chunk
    }

    /// The memory a record of a chunk takes beside its bytes (its entry and index-key handle).
    static let overheadPerRecord = MemoryLayout<EncodedEntry>.stride + MemoryLayout<IndexKeyBytes>.stride

    /// The chunk with its records encoded again, in write order, against `table` (which may grow):
    /// each record is decoded with the chunk's own table and encoded with `table`.
    func reencoded<V>(with table: inout FieldTable, _ coder: RecordCoder<V>, _ c: RegisteredCollection) throws
        -> EncodedChunk
    {
        let arena = RecordArena(firstBlock: byteCount)
        var chunk = self
        for i in entries.indices {
            let value = try coder.decode(entries[i].record.buffer, c.decoder, fields)
            chunk.entries[i].record = try coder.encodeInto(value, c.encoder, &table, arena)
        }
        chunk.arenas.append(arena)
        chunk.fields = table
        return chunk
    }
}
