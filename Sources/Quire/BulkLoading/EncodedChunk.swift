import QuireCodec
internal import QuireLMDB

/// Where the value behind one record of an encoded chunk is: a slice of the input and a
/// position in it (0 for the slice's first element).
struct ValueOrigin: Sendable {
    var source: Int
    var position: Int
}

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
struct EncodedChunk<V: Codable & Sendable>: Sendable {
    /// The values as given, never copied: slices of the caller's array when the caller gave one.
    /// Kept to encode a record again when the field table it was encoded with has diverged.
    var sources: [ArraySlice<V>]
    /// For each record, its value in `sources`.
    var origins: [ValueOrigin]
    /// Each record's key and bytes.
    var entries: [EncodedEntry]
    /// The memory `entries` point into.
    var arenas: [RecordArena]
    /// For each record, for each of the collection's indexes, its index keys; empty when the
    /// collection has no index.
    var indexKeys: [[[[UInt8]]]]
    /// The field table the records were encoded with.
    var fields: FieldTable
    /// True when the values arrived in ascending key order (nothing had to be sorted).
    var arrivedSorted: Bool
    /// The input values this chunk accounts for: more than its records when a merge dropped
    /// values that a later value for the same key replaces.
    var inputCount: Int
    /// Bytes of keys and records, what holding the chunk costs beyond its values.
    var byteCount: Int
    /// The keys over 510 bytes that the chunk's records and index entries use (empty in the
    /// common case), recorded in `_longkeys` in the chunk's transaction.
    var longKeys: [LongKeyPair] = []

    /// The chunk with its records encoded again, in write order, against `table` (which may grow).
    func reencoded(
        with table: inout FieldTable, _ encode: (borrowing V, inout FieldTable, RecordArena) throws -> ArenaBytes
    ) throws -> EncodedChunk {
        let arena = RecordArena(firstBlock: byteCount)
        var chunk = self
        for (i, origin) in origins.enumerated() {
            chunk.entries[i].record = try sources[origin.source].withUnsafeBufferPointer { buffer in
                try encode(buffer[origin.position], &table, arena)
            }
        }
        chunk.arenas.append(arena)
        chunk.fields = table
        return chunk
    }
}
