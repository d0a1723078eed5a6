public import Foundation

/// Writes the fields of one object for a ``CompactEncodable`` type, giving exactly the bytes the
/// type's `Encodable` conformance would give through ``CompactEncoder`` — except for the keys its
/// ``CompactKeySet`` declares interned, whose strings become interned strings (read back equal).
///
/// Write fields in the order the `Encodable` conformance does (string references number strings in
/// write order, and new names are interned in first-write order). The `…IfPresent` writes omit nil
/// values, like the Codable path. A writer is valid only during the ``CompactEncodable/encode(to:)``
/// call it is passed to.
public struct CompactObjectWriter {
    /// The record's bytes, moved in from the encoder for the duration of the hand-written encoding,
    /// so that writes touch no class and no reference count.
    /// (The storage is `@usableFromInline` so that the writes inline into the conforming types'
    /// modules and specialise there.)
    @usableFromInline var out: ByteWriter
    @usableFromInline unowned(unsafe) let state: EncoderState
    /// The field ids of the object being written now.
    @usableFromInline unowned(unsafe) var ids: KeySetIDs
    @usableFromInline var idBuffer: UnsafeMutablePointer<UInt32>
    @usableFromInline var internedBuffer: UnsafeMutablePointer<Bool>
    @usableFromInline var keyCount: Int
    @usableFromInline unowned(unsafe) let values: InternedValueCache
    /// What ``warm(_:)`` read, kept so that its reads are not optimised away.
    @usableFromInline var warmth: UInt8 = 0

    init(state: EncoderState, ids: KeySetIDs) {
        self.out = ByteWriter(capacity: 0)
        self.state = state
        self.values = state.keyCaches.values
        self.ids = ids
        self.idBuffer = ids.ids
        self.internedBuffer = ids.interned
        self.keyCount = ids.count
    }

    /// Writes the field id of `key`, resolving (and if new, interning) its name on first use.
    @inlinable @inline(__always) mutating func begin(_ key: CompactKey) {
        precondition(key.index >= 0 && key.index < keyCount, "CompactKey out of its CompactKeySet")
        let id = idBuffer[key.index]
        out.varint(UInt64(id != KeySetIDs.unresolved ? id : resolve(key)))
    }

    @usableFromInline func resolve(_ key: CompactKey) -> UInt32 {
        let id = state.fields.intern(ids.keys.names[key.index])
        idBuffer[key.index] = id
        return id
    }

    /// Writes `value` as an object whose field ids are `objectIDs`, then comes back to this object.
    @inlinable @inline(__always) mutating func object<T: CompactEncodable>(_ value: T, ids objectIDs: KeySetIDs) throws {
        var value = value
        try object(&value, ids: objectIDs)
    }

    /// ``object(_:ids:)`` for a value the caller lends by address, so that it is not copied.
    @inlinable @inline(__always) mutating func object<T: CompactEncodable>(
        _ value: inout T, ids objectIDs: KeySetIDs, warmed: Bool = false
    ) throws {
        if !warmed { value.warm(&self) }
        // Saved unowned, like the property: a strong local would retain it once per object.
        unowned(unsafe) let savedIDs = ids
        let saved = (idBuffer, internedBuffer, keyCount)
        ids = objectIDs
        idBuffer = objectIDs.ids
        internedBuffer = objectIDs.interned
        keyCount = objectIDs.count
        let start = out.openContainer(.object)
        try value.encode(to: &self)
        out.closeContainer(at: start)
        ids = savedIDs
        (idBuffer, internedBuffer, keyCount) = saved
    }

    /// Runs `body` with the bytes moved back into the encoder, for the Codable machinery.
    private mutating func withEncoder(_ body: (EncoderState) throws -> Void) throws {
        swap(&out, &state.writer)
        defer { swap(&out, &state.writer) }
        try body(state)
    }

    // MARK: Scalars

    /// Writes a string field (references to equal or similar earlier strings apply), or, for a key
    /// its set declares interned, an interned string when the value is within the bounds.
    @inlinable public mutating func write(_ value: String, for key: CompactKey) {
        begin(key)
        if internedBuffer[key.index] { return internedString(value) }
        out.string(value)
    }

    /// Writes an interned string: the id of `value`'s entry in the field table, interned when new;
    /// the plain string when the table will not hold it.
    @usableFromInline mutating func internedString(_ value: String) {
        // Native strings lend their UTF-8 without a copy; the cache and state are lent unretained
        // (the writer's unowned references would otherwise be retained for the closures).
        let values = Unmanaged.passUnretained(self.values)
        let state = Unmanaged.passUnretained(self.state)
        let lookup = { (utf8: UnsafeBufferPointer<UInt8>) -> UInt32 in
            values._withUnsafeGuaranteedRef { cache in state._withUnsafeGuaranteedRef { cache.id(of: utf8, in: $0) } }
        }
        let id =
            value.utf8.withContiguousStorageIfAvailable(lookup)
            ?? {
                var copy = value
                return copy.withUTF8(lookup)
            }()
        guard id != InternedValueCache.refused else { return out.string(value) }
        out.kind(.internedString)
        out.varint(UInt64(id))
    }

    /// Writes an integer field.
    @inlinable public mutating func write(_ value: Int, for key: CompactKey) {
        begin(key)
        out.int(Int64(value))
    }

    /// Writes an integer field.
    @inlinable public mutating func write(_ value: Int64, for key: CompactKey) {
        begin(key)
        out.int(value)
    }

    /// Writes an unsigned integer field.
    @inlinable public mutating func write(_ value: UInt64, for key: CompactKey) {
        begin(key)
        out.uint(value)
    }

    /// Writes a Boolean field.
    @inlinable public mutating func write(_ value: Bool, for key: CompactKey) {
        begin(key)
        out.bool(value)
    }

    /// Writes a floating-point field.
    @inlinable public mutating func write(_ value: Double, for key: CompactKey) {
        begin(key)
        out.double(value)
    }

    /// Writes a date field (whole seconds and whole milliseconds in their short forms).
    @inlinable public mutating func write(_ value: Date, for key: CompactKey) {
        begin(key)
        out.date(value)
    }

    /// Writes a URL field (its absolute string).
    @inlinable public mutating func write(_ value: URL, for key: CompactKey) {
        begin(key)
        out.string(value.absoluteString, kind: .url)
    }

    /// Writes a bytes field.
    @inlinable public mutating func write(_ value: Data, for key: CompactKey) {
        begin(key)
        out.data(value)
    }

    /// Writes an array-of-strings field.
    @inlinable public mutating func write(_ values: [String], for key: CompactKey) {
        begin(key)
        let start = out.openContainer(.array)
        if internedBuffer[key.index] {
            for value in values { internedString(value) }
        } else {
            for value in values { out.string(value) }
        }
        out.closeContainer(at: start)
    }

    /// Reads one byte of each cache line of `value`'s UTF-8 storage, and nothing else (no
    /// reference count), for ``CompactEncodable/warm(_:)``.
    ///
    /// The first touch of memory not in cache costs a round trip to memory. Reads with nothing
    /// between them overlap, where the same misses met one field write after another wait in turn.
    @inlinable @inline(__always) public mutating func warm(_ value: String?) {
        guard let value else { return }
        warmth &+= value.utf8.withContiguousStorageIfAvailable { utf8 in
            var sum: UInt8 = 0
            for offset in stride(from: 0, to: utf8.count, by: 64) { sum &+= utf8[offset] }
            return sum
        } ?? 0
    }

    /// ``warm(_:)-(String?)`` for each string of an array.
    @inlinable public mutating func warm(_ values: [String]?) {
        guard let values else { return }
        values.withUnsafeBufferPointer { buffer in
            for index in buffer.indices { warm(buffer[index]) }
        }
    }

    // MARK: Nested values

    /// Writes a nested object through its hand-written conformance.
    @inlinable public mutating func write<T: CompactEncodable>(_ value: T, for key: CompactKey) throws {
        begin(key)
        try object(value, ids: state.keySetIDs(for: T.compactKeys))
    }

    /// Writes an array of objects through their hand-written conformance.
    @inlinable public mutating func write<T: CompactEncodable>(_ values: [T], for key: CompactKey) throws {
        begin(key)
        let start = out.openContainer(.array)
        if !values.isEmpty {
            let elementIDs = state.keySetIDs(for: T.compactKeys)
            // Each element by address, `inout` (nothing writes to it): iterating, or indexing the
            // buffer, copies each element first, retaining all of its strings.
            try values.withUnsafeBufferPointer { buffer in
                let elements = UnsafeMutablePointer(mutating: buffer.baseAddress!)
                for index in 0..<buffer.count { elements[index].warm(&self) }  // all before any is written
                for index in 0..<buffer.count { try object(&elements[index], ids: elementIDs, warmed: true) }
            }
        }
        out.closeContainer(at: start)
    }

    /// Writes any `Encodable` value: through its hand-written conformance when it has one, else
    /// through its `Encodable` conformance (the Codable path, with the same bytes as always).
    public mutating func writeEncodable<T: Encodable>(_ value: T, for key: CompactKey) throws {
        begin(key)
        if let compact = value as? any CompactEncodable {
            return try writeCompact(compact)
        }
        let name = NamedKey(ids.keys.names[key.index])
        try withEncoder { state in
            state.path.append(name)
            defer { state.path.removeLast() }
            try state.encodeValue(value)
            if let error = state.deferredError { throw error }
        }
    }

    private mutating func writeCompact<T: CompactEncodable>(_ value: T) throws {
        try object(value, ids: state.keySetIDs(for: T.compactKeys))
    }

    // MARK: Optionals (nil is omitted)

    /// Writes a string field unless `value` is nil.
    @inlinable public mutating func writeIfPresent(_ value: String?, for key: CompactKey) {
        if let value { write(value, for: key) }
    }

    /// Writes an integer field unless `value` is nil.
    @inlinable public mutating func writeIfPresent(_ value: Int?, for key: CompactKey) {
        if let value { write(value, for: key) }
    }

    /// Writes an integer field unless `value` is nil.
    @inlinable public mutating func writeIfPresent(_ value: Int64?, for key: CompactKey) {
        if let value { write(value, for: key) }
    }

    /// Writes an unsigned integer field unless `value` is nil.
    @inlinable public mutating func writeIfPresent(_ value: UInt64?, for key: CompactKey) {
        if let value { write(value, for: key) }
    }

    /// Writes a Boolean field unless `value` is nil.
    @inlinable public mutating func writeIfPresent(_ value: Bool?, for key: CompactKey) {
        if let value { write(value, for: key) }
    }

    /// Writes a floating-point field unless `value` is nil.
    @inlinable public mutating func writeIfPresent(_ value: Double?, for key: CompactKey) {
        if let value { write(value, for: key) }
    }

    /// Writes a date field unless `value` is nil.
    @inlinable public mutating func writeIfPresent(_ value: Date?, for key: CompactKey) {
        if let value { write(value, for: key) }
    }

    /// Writes a URL field unless `value` is nil.
    @inlinable public mutating func writeIfPresent(_ value: URL?, for key: CompactKey) {
        if let value { write(value, for: key) }
    }

    /// Writes a bytes field unless `value` is nil.
    @inlinable public mutating func writeIfPresent(_ value: Data?, for key: CompactKey) {
        if let value { write(value, for: key) }
    }

    /// Writes an array-of-strings field unless `values` is nil.
    @inlinable public mutating func writeIfPresent(_ values: [String]?, for key: CompactKey) {
        if let values { write(values, for: key) }
    }

    /// Writes a nested object unless `value` is nil.
    @inlinable public mutating func writeIfPresent<T: CompactEncodable>(_ value: T?, for key: CompactKey) throws {
        if let value { try write(value, for: key) }
    }

    /// Writes an array of objects unless `values` is nil.
    @inlinable public mutating func writeIfPresent<T: CompactEncodable>(_ values: [T]?, for key: CompactKey) throws {
        if let values { try write(values, for: key) }
    }

    /// Writes any `Encodable` value unless it is nil.
    public mutating func writeEncodableIfPresent<T: Encodable>(_ value: T?, for key: CompactKey) throws {
        if let value { try writeEncodable(value, for: key) }
    }
}
