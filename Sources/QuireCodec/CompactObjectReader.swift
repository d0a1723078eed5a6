public import Foundation

/// Reads the fields of one object for a ``CompactDecodable`` type, accepting every form the format
/// allows (string references, short forms, all date forms), like the Codable path.
///
/// ```swift
/// while let key = try reader.next() {
///     switch key {
///     case Keys.id: id = try reader.readString()
///     default: break
///     }
/// }
/// self.id = try reader.require(id, Keys.id)
/// ```
/// ``next()`` skips fields the type does not know and fields whose value is null (a null counts as
/// absent, so an optional reads as nil). Typed reads apply to the field ``next()`` returned; a
/// value of the wrong kind throws `DecodingError.typeMismatch` naming its path. A reader is valid
/// only during the ``CompactDecodable/init(from:)`` call it is passed to, and cannot be copied
/// out of it: it reads the record's bytes and the thread's decoder state, both reused after.
public struct CompactObjectReader: ~Copyable {
    // `@usableFromInline` so that the reads inline into the conforming types' modules.
    // Strong references: an `unowned(unsafe)` one is retained and released around every call made
    // through it, while a strong one held by the (borrowed) reader needs no traffic at all.
    @usableFromInline let state: DecoderState
    /// Unretained (the type's static key set outlives every decode), as is the table (owned by
    /// `state`): a reader per nested object would otherwise retain and release both.
    @usableFromInline unowned(unsafe) let keys: CompactKeySet
    @usableFromInline let table: UnsafeBufferPointer<Int32>
    @usableFromInline var position: Int
    @usableFromInline let end: Int
    /// The current field: its key position and value range.
    @usableFromInline var current = -1
    @usableFromInline var valueStart = 0
    @usableFromInline var valueEnd = 0

    @usableFromInline init(state: DecoderState, keys: CompactKeySet, table: UnsafeBufferPointer<Int32>, start: Int, end: Int) {
        self.state = state
        self.keys = keys
        self.table = table
        self.position = start
        self.end = end
    }

    /// Moves to the next field this type knows, or returns nil after the last one.
    ///
    /// - Throws: ``CompactDecodingError`` for malformed bytes or a field id the field table lacks.
    @inlinable public mutating func next() throws -> CompactKey? {
        do {
            return try nextField()
        } catch {
            throw state.wrap(error, Any.self, nil)
        }
    }

    @inlinable @inline(__always) mutating func nextField() throws(CompactDecodingError) -> CompactKey? {
        let reader = state.reader
        while position < end {
            let at = position
            let id = try reader.varint(&position, end: end)
            guard id < UInt64(table.count) else {
                throw CompactDecodingError(.unknownFieldID(UInt32(truncatingIfNeeded: id)), offset: at)
            }
            let start = position
            position = try reader.skip(position, end: end)
            let index = Int(table[Int(id)])
            if index < 0 || reader.base.load(fromByteOffset: start, as: UInt8.self) == ValueKind.null.rawValue { continue }
            current = index
            valueStart = start
            valueEnd = position
            return CompactKey(index)
        }
        return nil
    }

    /// The current field as a coding key (built only for errors).
    @usableFromInline var codingKey: any CodingKey { NamedKey(current >= 0 ? keys.names[current] : "") }

    @inlinable @inline(__always) func read<R>(_ type: Any.Type, _ body: (Int, Int) throws(CompactDecodingError) -> R) throws -> R {
        do {
            return try body(valueStart, valueEnd)
        } catch {
            throw state.wrap(error, type, codingKey)
        }
    }

    // MARK: Scalars

    /// The current field as a string.
    @inlinable public func readString() throws -> String {
        try read(String.self) { (s, e) throws(CompactDecodingError) in try state.readString(s, e) }
    }

    /// The current field as an integer.
    @inlinable public func readInt() throws -> Int {
        guard let value = try read(Int.self, { (s, e) throws(CompactDecodingError) in try state.readInt64(s, e) })
            .flatMap({ Int(exactly: $0) })
        else { throw state.outOfRange(Int.self, codingKey) }
        return value
    }

    /// The current field as a 64-bit integer.
    @inlinable public func readInt64() throws -> Int64 {
        guard let value = try read(Int64.self, { (s, e) throws(CompactDecodingError) in try state.readInt64(s, e) })
        else { throw state.outOfRange(Int64.self, codingKey) }
        return value
    }

    /// The current field as an unsigned 64-bit integer.
    @inlinable public func readUInt64() throws -> UInt64 {
        guard let value = try read(UInt64.self, { (s, e) throws(CompactDecodingError) in try state.readUInt64(s, e) })
        else { throw state.outOfRange(UInt64.self, codingKey) }
        return value
    }

    /// The current field as a Boolean.
    @inlinable public func readBool() throws -> Bool {
        try read(Bool.self) { (s, e) throws(CompactDecodingError) in try state.readBool(s, e) }
    }

    /// The current field as a floating-point number (integers convert).
    @inlinable public func readDouble() throws -> Double {
        try read(Double.self) { (s, e) throws(CompactDecodingError) in try state.readDouble(s, e) }
    }

    /// The current field as a date.
    @inlinable public func readDate() throws -> Date {
        try read(Date.self) { (s, e) throws(CompactDecodingError) in try state.readDate(s, e) }
    }

    /// The current field as a URL.
    public func readURL() throws -> URL {
        try read(URL.self) { (s, e) throws(CompactDecodingError) in try state.readURL(s, e) }
    }

    /// The current field as bytes.
    public func readData() throws -> Data {
        try read(Data.self) { (s, e) throws(CompactDecodingError) in Data(try state.readBytes(s, e)) }
    }

    // MARK: Arrays and nested values

    /// The current field as an array of strings.
    public func readStrings() throws -> [String] {
        let (start, end) = try arrayBody()
        let reader = state.reader
        var values: [String] = []
        values.reserveCapacity(state.elementCount(start, end))
        var position = start
        while position < end {
            let s = position
            do {
                position = try reader.skip(position, end: end)
                values.append(try state.readString(s, position))
            } catch {
                state.steps.append(.key(codingKey))
                defer { state.steps.removeLast() }
                throw state.wrap(error, String.self, IndexKey(values.count))
            }
        }
        return values
    }

    /// The current field as a nested object, through `T`'s hand-written conformance.
    @inlinable public func read<T: CompactDecodable>(_ type: T.Type) throws -> T {
        try state.decodeCompact(T.self, valueStart, valueEnd, step: .key(codingKey))
    }

    /// The current field as an array of objects, through `T`'s hand-written conformance.
    @inlinable public func readArray<T: CompactDecodable>(of type: T.Type) throws -> [T] {
        let (start, end) = try arrayBody()
        var values: [T] = []
        values.reserveCapacity(state.elementCount(start, end))
        var position = start
        state.steps.append(.key(codingKey))
        defer { state.steps.removeLast() }
        while position < end {
            let s = position
            position = try state.skipElement(T.self, at: s, end: end, index: values.count)
            values.append(try state.decodeCompact(T.self, s, position, step: .index(values.count)))
        }
        return values
    }

    /// The current field as any `Decodable` type: through its hand-written conformance when it has
    /// one, else through its `Decodable` conformance.
    public func readDecodable<T: Decodable>(_ type: T.Type) throws -> T {
        if let compact = T.self as? any CompactDecodable.Type {
            return try state.decodeCompact(compact, valueStart, valueEnd, step: .key(codingKey)) as! T
        }
        return try state.decodeValue(T.self, valueStart, valueEnd, key: codingKey)
    }

    /// The body range of the current field's array value.
    @usableFromInline func arrayBody() throws -> (Int, Int) {
        try read([Any].self) { (s, e) throws(CompactDecodingError) in
            let k = try state.kind(at: s, end: e)
            guard k == .array else { throw state.mismatch("array", k) }
            var position = s + 1
            let length = try state.reader.length(&position, end: e)
            return (position, position + length)
        }
    }

    // MARK: Required fields

    /// `value`, or `DecodingError.keyNotFound` naming `key`'s path when the record lacked the field.
    @inlinable public func require<T>(_ value: T?, _ key: CompactKey) throws -> T {
        if let value { return value }
        throw missing(key)
    }

    @usableFromInline func missing(_ key: CompactKey) -> DecodingError {
        let name = NamedKey(keys.names[key.index])
        let codingPath = state.path + [name]
        return DecodingError.keyNotFound(
            name, .init(codingPath: codingPath, debugDescription: "No value for \(pathString(codingPath))."))
    }
}
