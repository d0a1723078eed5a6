import Foundation

extension CompactValue {
    /// Appends the JSON of an encoded record to `out`, read straight from its bytes: the same
    /// text as `CompactValue.decode(from:fields:options:).jsonBytes()`, without building the
    /// value tree (no enum per value, no array per object, no string for a plain stored string).
    ///
    /// What `quire dump` and `quire serve`'s lists use, where the tree would be thrown away at
    /// once. Stored strings are checked as UTF-8 before they are copied out.
    /// - Throws: ``CompactDecodingError`` for malformed bytes or field ids missing from `fields`.
    public static func appendJSON(
        from bytes: UnsafeRawBufferPointer, fields: FieldTable, options: CompactDecoder.Options = .init(),
        to out: inout [UInt8]
    ) throws {
        var writer = RecordJSONWriter(fields: fields, options: options, capacity: bytes.count * 2)
        try writer.append(record: bytes)
        out.append(contentsOf: writer.bytes)
    }
}

/// Writes the JSON of records that share one field table straight from their bytes, one after
/// the other into its own buffer (what a dump's batch does on each core).
///
/// Each field's `"name":` is written once and copied for every record after, and pieces go into
/// a ``ByteSink`` with room reserved for their largest form: a dump spent a third of its time on
/// keys' strings and array appends.
package struct RecordJSONWriter: ~Copyable {
    private let fields: FieldTable
    private let options: CompactDecoder.Options
    /// The `"name":` of each field id met so far, back to back (written at its first use).
    private var keyBytes: [UInt8] = []
    private var keyStarts: [Int]
    /// 0 for an id whose key is not written yet (a written one takes at least 3 bytes).
    private var keyLengths: [Int]
    private var sink: ByteSink
    /// Scalars written by the value tree's writer (dates, doubles, bytes), then copied.
    private var scratch: [UInt8] = []

    package init(fields: FieldTable, options: CompactDecoder.Options = .init(), capacity: Int = 4096) {
        self.fields = fields
        self.options = options
        keyStarts = Array(repeating: 0, count: fields.names.count)
        keyLengths = Array(repeating: 0, count: fields.names.count)
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
            var string = try generic.strings.read(kind, at: position, end: end)
            string.withUTF8 { writeString($0) }
        case .null: writeLiteral("null")
        case .trueValue: writeLiteral("true")
        case .falseValue: writeLiteral("false")
        case .smallInt: writeInteger(unzigzag(UInt64(tag & 0x3F)))
        case .int: writeInteger(unzigzag(try reader.varint(&cursor, end: end)))
        case .uint: writeDigits(of: try reader.varint(&cursor, end: end), negative: false)
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
                    var key = try generic.readKey(&cursor, end: bodyEnd, isMap: kind == .map)
                    key.withUTF8 { writeString($0) }
                    sink.append(UInt8(ascii: ":"))
                }
                let next = try reader.skip(cursor, end: bodyEnd)
                try write(generic, at: cursor, end: next, depth: depth + 1, keysFromTable: keysFromTable)
                cursor = next
            }
            sink.append(UInt8(ascii: "}"))
        default:
            // Doubles, dates and bytes: through the value, as `jsonBytes` writes them.
            scratch.removeAll(keepingCapacity: true)
            try generic.read(at: position, end: end, depth: depth).appendJSON(to: &scratch)
            scratch.withUnsafeBufferPointer { sink.append($0) }
        }
    }

    /// Writes `"name":` of the object field id at `cursor`, from the keys written before.
    private mutating func writeTableKey(_ reader: ByteReader, _ cursor: inout Int, end: Int) throws(CompactDecodingError) {
        let at = cursor
        let raw = try reader.varint(&cursor, end: end)
        guard raw < UInt64(keyLengths.count) else {
            throw CompactDecodingError(.unknownFieldID(UInt32(truncatingIfNeeded: raw)), offset: at)
        }
        let id = Int(raw)
        if keyLengths[id] == 0 {
            // Written into the sink once, then kept: the sink's own writer does the escaping.
            let mark = sink.count
            var name = fields.names[id]
            name.withUTF8 { writeString($0) }
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
        writeString(UnsafeBufferPointer(start: start, count: length))
    }

    /// Writes valid UTF-8 bytes as a JSON string, escaping only `"`, `\` and control characters.
    private mutating func writeString(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Room for the bytes as they are and the quotes; an escape makes room for itself and the
        // rest (reserving for the longest form, six bytes a byte, would ask 6× a huge string).
        sink.reserve(bytes.count + 2)
        sink.appendReserved(UInt8(ascii: "\""))
        var run = 0  // the start of the bytes not copied yet
        var i = 0
        while i < bytes.count {
            if i + 8 <= bytes.count, !JSONEscapes.anyIn(UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self)) {
                i += 8
                continue
            }
            let byte = bytes[i]
            i += 1
            guard JSONEscapes.needsEscape(byte) else { continue }
            sink.appendReserved(UnsafeBufferPointer(rebasing: bytes[run..<i - 1]))
            run = i
            sink.reserve(6 + (bytes.count - i) + 1)
            let (escape, escapeCount) = JSONEscapes.escape(of: byte)
            for index in 0..<escapeCount { sink.appendReserved(UInt8(truncatingIfNeeded: escape >> (8 * index))) }
        }
        sink.appendReserved(UnsafeBufferPointer(rebasing: bytes[run...]))
        sink.appendReserved(UInt8(ascii: "\""))
    }

    private mutating func writeLiteral(_ literal: StaticString) {
        sink.append(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private mutating func writeInteger(_ value: Int64) {
        writeDigits(of: value.magnitude, negative: value < 0)
    }

    /// Decimal digits, as `String(value)` writes them.
    private mutating func writeDigits(of magnitude: UInt64, negative: Bool) {
        sink.reserve(21)
        if negative { sink.appendReserved(UInt8(ascii: "-")) }
        let first = sink.count
        var rest = magnitude
        repeat {
            sink.appendReserved(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        // Written lowest digit first: turned around in place.
        var low = sink.base + first
        var high = sink.base + sink.count - 1
        while low < high {
            swap(&low.pointee, &high.pointee)
            low += 1
            high -= 1
        }
    }
}
