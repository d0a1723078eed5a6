import Foundation

extension CompactValue {
    /// Appends the JSON of an encoded record to `out`, read straight from its bytes: the same
    /// text as `CompactValue.decode(from:fields:options:).jsonBytes()`, without building the
    /// value tree (no enum per value, no array per object, no string for a plain stored string).
    ///
    /// What `quire get` and `quire serve` use for a record, where the tree would be thrown away
    /// at once (`quire dump` keeps one such writer a core for its batches). Stored strings are
    /// checked as UTF-8 before they are copied out.
    /// - Throws: ``CompactDecodingError`` for malformed bytes or field ids missing from `fields`.
    public static func appendJSON(
        from bytes: UnsafeRawBufferPointer, fields: FieldTable, options: CompactDecoder.Options = .init(),
        to out: inout [UInt8]
    ) throws {
        var writer = RecordJSONWriter(fields: fields, options: options, capacity: bytes.count * 2, keepsKeys: false)
        try writer.append(record: bytes)
        out.append(contentsOf: writer.bytes)
    }
}

/// Writes the JSON of records that share one field table straight from their bytes, one after
/// the other into its own buffer (what a dump's batch does on each core).
///
/// Each field's `"name":` is written once and copied for every record after, and pieces go into
/// a ``ByteSink`` that reserves room once a piece: a dump spent a third of its time on keys'
/// strings and array appends.
package struct RecordJSONWriter: ~Copyable {
    private let fields: FieldTable
    private let options: CompactDecoder.Options
    private let keepsKeys: Bool
    /// The `"name":` of each field id met so far, back to back (written at its first use).
    private var keyBytes: [UInt8] = []
    private var keyStarts: [Int]
    /// 0 for an id whose key is not written yet (a written one takes at least 3 bytes).
    private var keyLengths: [Int]
    private var sink: ByteSink

    /// `keepsKeys` false for a writer of one record, which would write each key once anyway.
    package init(fields: FieldTable, options: CompactDecoder.Options = .init(), capacity: Int = 4096, keepsKeys: Bool = true) {
        self.fields = fields
        self.options = options
        self.keepsKeys = keepsKeys
        keyStarts = keepsKeys ? Array(repeating: 0, count: fields.names.count) : []
        keyLengths = keepsKeys ? Array(repeating: 0, count: fields.names.count) : []
        sink = ByteSink(capacity: capacity)
    }

    /// How many bytes the records written so far take.
    package var count: Int { sink.count }

    /// The records' JSON back to back; valid until the next write.
    package var bytes: UnsafeBufferPointer<UInt8> { sink.bytes }

    /// Forgets the records written, keeping the buffer (unless one huge record grew it) and the keys.
    package mutating func removeAll() { sink.removeAll(shrinkingAbove: 4 << 20) }

    /// Appends the JSON of the record `bytes`; when it throws, nothing of that record stays.
    /// - Throws: ``CompactDecodingError`` for malformed bytes or field ids missing from the table.
    package mutating func append(record bytes: UnsafeRawBufferPointer) throws {
        let before = sink.count
        // A standalone payload names its fields itself: its ids are not the table's.
        let keysFromTable = bytes.first.map { $0 & FormatHeader.standalone == 0 } ?? false
        do {
            try CompactValue.withGenericReader(bytes, fields: fields, options: options) { generic, start, end in
                try write(generic, at: start, end: end, depth: 0, keysFromTable: keysFromTable)
            }
        } catch {
            sink.truncate(to: before)
            throw error
        }
    }

    private mutating func write(
        _ generic: GenericReader, at position: Int, end: Int, depth: Int, keysFromTable: Bool
    ) throws(CompactDecodingError) {
        let reader = generic.reader
        let tag = try reader.byte(at: position, end: end)
        guard let kind = ValueKind.of(tag) else { throw CompactDecodingError(.badKind(tag), offset: position) }
        var cursor = position + 1
        switch kind {
        case .shortString:
            let length = Int(tag & 0x7F)
            guard length <= end - cursor else { throw CompactDecodingError(.truncated, offset: cursor) }
            try writeStoredString(reader, at: cursor, length: length)
        case .string, .url:
            let length = try reader.length(&cursor, end: end)
            try writeStoredString(reader, at: cursor, length: length)
        case .stringRef, .stringPrefixRef, .internedString:
            sink.appendJSONString(try generic.strings.read(kind, at: position, end: end))
        case .null: sink.appendLiteral("null")
        case .trueValue: sink.appendLiteral("true")
        case .falseValue: sink.appendLiteral("false")
        case .smallInt: sink.appendDecimal(unzigzag(UInt64(tag & 0x3F)))
        case .int: sink.appendDecimal(unzigzag(try reader.varint(&cursor, end: end)))
        case .uint: sink.appendDecimal(magnitude: try reader.varint(&cursor, end: end), negative: false)
        case .array:
            guard depth < generic.depthLimit else { throw CompactDecodingError(.depthLimitExceeded, offset: position) }
            let length = try reader.length(&cursor, end: end)
            let bodyEnd = cursor + length
            sink.append(UInt8(ascii: "["))
            var first = true
            while cursor < bodyEnd {
                if !first { sink.append(UInt8(ascii: ",")) }
                first = false
                let next = try reader.skip(cursor, end: bodyEnd)
                try write(generic, at: cursor, end: next, depth: depth + 1, keysFromTable: keysFromTable)
                cursor = next
            }
            sink.append(UInt8(ascii: "]"))
        case .object, .map:
            guard depth < generic.depthLimit else { throw CompactDecodingError(.depthLimitExceeded, offset: position) }
            let length = try reader.length(&cursor, end: end)
            let bodyEnd = cursor + length
            sink.append(UInt8(ascii: "{"))
            var first = true
            while cursor < bodyEnd {
                if !first { sink.append(UInt8(ascii: ",")) }
                first = false
                if kind == .object && keysFromTable {
                    try writeTableKey(reader, &cursor, end: bodyEnd)
                } else {
                    sink.appendJSONString(try generic.readKey(&cursor, end: bodyEnd, isMap: kind == .map))
                    sink.append(UInt8(ascii: ":"))
                }
                let next = try reader.skip(cursor, end: bodyEnd)
                try write(generic, at: cursor, end: next, depth: depth + 1, keysFromTable: keysFromTable)
                cursor = next
            }
            sink.append(UInt8(ascii: "}"))
        default:
            // Doubles, dates and bytes: through the value, as `jsonBytes` writes them.
            try generic.read(at: position, end: end, depth: depth).write(into: &sink)
        }
    }

    /// Writes `"name":` of the object field id at `cursor`, from the keys written before.
    private mutating func writeTableKey(_ reader: ByteReader, _ cursor: inout Int, end: Int) throws(CompactDecodingError) {
        let at = cursor
        let raw = try reader.varint(&cursor, end: end)
        guard raw < UInt64(fields.names.count) else {
            throw CompactDecodingError(.unknownFieldID(UInt32(truncatingIfNeeded: raw)), offset: at)
        }
        let id = Int(raw)
        guard keepsKeys else {
            sink.appendJSONString(fields.names[id])
            sink.append(UInt8(ascii: ":"))
            return
        }
        if keyLengths[id] == 0 {
            // Written into the sink once, then kept: the sink's own writer does the escaping.
            let mark = sink.count
            sink.appendJSONString(fields.names[id])
            sink.append(UInt8(ascii: ":"))
            keyStarts[id] = keyBytes.count
            keyLengths[id] = sink.count - mark
            keyBytes.append(contentsOf: UnsafeBufferPointer(rebasing: sink.bytes[mark...]))
            return
        }
        let start = keyStarts[id]
        let length = keyLengths[id]
        keyBytes.withUnsafeBufferPointer { keys in
            sink.append(UnsafeBufferPointer(rebasing: keys[start..<start + length]))
        }
    }

    /// A string stored inline, checked and escaped from its bytes without making a `String`.
    private mutating func writeStoredString(_ reader: ByteReader, at position: Int, length: Int) throws(CompactDecodingError) {
        let start = (reader.base + position).assumingMemoryBound(to: UInt8.self)
        guard UTF8Validation.validate(start, count: length).isValid else {
            throw CompactDecodingError(.invalidUTF8, offset: position)
        }
        sink.appendJSONString(UnsafeBufferPointer(start: start, count: length))
    }
}
