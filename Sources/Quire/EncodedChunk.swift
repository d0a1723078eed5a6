import QuireCodec
import QuireLMDB

/// Where the value behind one record of an encoded chunk is: a slice of the input and a
/// position in it (0 for the slice's first element).
struct ValueOrigin: Sendable {
    var source: Int
    var position: Int
}

/// Records encoded off the writer thread, in the order they are to be written.
struct EncodedChunk<V: Codable & Sendable>: Sendable {
    /// The values as given, never copied: slices of the caller's array when the caller gave one.
    /// Kept to encode a record again when the field table it was encoded with has diverged.
    var sources: [ArraySlice<V>]
    /// For each record, its value in `sources`.
    var origins: [ValueOrigin]
    var keys: [[UInt8]]
    var records: [[UInt8]]
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

    var count: Int { keys.count }

    /// The records encoded again, in write order, against `table` (which may grow).
    func recordsEncoded(
        with table: inout FieldTable, _ encode: (borrowing V, inout FieldTable) throws -> [UInt8]
    ) throws -> [[UInt8]] {
        var records: [[UInt8]] = []
        records.reserveCapacity(origins.count)
        for origin in origins {
            try sources[origin.source].withUnsafeBufferPointer { buffer in
                records.append(try encode(buffer[origin.position], &table))
            }
        }
        return records
    }
}
