import Foundation

/// A decoded value without its Swift type: what any QuireCodec payload can be read as.
///
/// Objects keep their fields in stored order. Maps (encoded dictionaries) read back as objects
/// whose integer keys become decimal strings.
public enum CompactValue: Sendable, Hashable {
    /// One field of an object.
    public struct Field: Sendable, Hashable {
        /// The field name.
        public var key: String
        /// The field value.
        public var value: CompactValue

        /// Creates a field.
        public init(key: String, value: CompactValue) {
            self.key = key
            self.value = value
        }
    }

    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case date(Date)
    case url(String)
    case array([CompactValue])
    case object([Field])

    /// Decodes a payload into a generic tree.
    ///
    /// - Throws: ``CompactDecodingError`` for malformed bytes or field ids missing from `fields`.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, fields: FieldTable, options: CompactDecoder.Options = .init()
    ) throws -> CompactValue {
        try withGenericReader(bytes, fields: fields, options: options) { generic, start, end in
            try generic.read(at: start, end: end, depth: 0)
        }
    }

    /// Opens a payload (checksum, decompression, field table) and hands `body` a reader over
    /// its root value, which spans `start..<end` and must be the whole payload: what decoding a
    /// tree and writing JSON straight from the bytes both start with.
    static func withGenericReader<R>(
        _ bytes: UnsafeRawBufferPointer, fields: FieldTable, options: CompactDecoder.Options,
        _ body: (GenericReader, _ start: Int, _ end: Int) throws -> R
    ) throws -> R {
        try Payload.open(
            bytes, fields: fields, maxDecompressedSize: options.maxDecompressedSize,
            decompressor: options.decompressor, verifyChecksum: options.verifyChecksums
        ) { reader, start, table in
            let end = try reader.skip(start, end: reader.count)
            guard end == reader.count else { throw CompactDecodingError(.trailingBytes, offset: end) }
            let strings = StringTable(reader: reader, rootStart: start, rootEnd: end, depthLimit: options.depthLimit, values: table.values)
            return try body(GenericReader(reader: reader, names: table.names, depthLimit: options.depthLimit, strings: strings), start, end)
        }
    }

    /// Decodes a payload into a generic tree.
    public static func decode(
        from bytes: [UInt8], fields: FieldTable, options: CompactDecoder.Options = .init()
    ) throws -> CompactValue {
        try bytes.withUnsafeBytes { try decode(from: $0, fields: fields, options: options) }
    }

    /// The value of field `key` when this is an object.
    public subscript(key: String) -> CompactValue? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.key == key }?.value
    }

    /// The element at `index` when this is an array.
    public subscript(index: Int) -> CompactValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }
}

/// Reads generic values; shared by ``CompactValue``, ``CompactField`` and dictionary sorting.
struct GenericReader {
    let reader: ByteReader
    let names: [String]
    let depthLimit: Int
    let strings: StringTable

    func read(at position: Int, end: Int, depth: Int) throws(CompactDecodingError) -> CompactValue {
        let tag = try reader.byte(at: position, end: end)
        guard let kind = ValueKind.of(tag) else { throw CompactDecodingError(.badKind(tag), offset: position) }
        var cursor = position + 1
        switch kind {
        case .null: return .null
        case .smallInt: return .int(unzigzag(UInt64(tag & 0x3F)))
        case .dateWholeSeconds: return .date(Date(timeIntervalSince1970: Double(unzigzag(try reader.varint(&cursor, end: end)))))
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .int: return .int(unzigzag(try reader.varint(&cursor, end: end)))
        case .uint: return .uint(try reader.varint(&cursor, end: end))
        case .float64: return .double(Double(bitPattern: try reader.fixed(UInt64.self, &cursor, end: end)))
        case .float32: return .double(Double(Float(bitPattern: try reader.fixed(UInt32.self, &cursor, end: end))))
        case .dateMillis:
            return .date(Date(timeIntervalSince1970: Double(unzigzag(try reader.varint(&cursor, end: end))) / 1000))
        case .dateSeconds:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed(UInt64.self, &cursor, end: end))))
        case .string, .url, .shortString, .stringRef, .stringPrefixRef, .internedString:
            let string = try strings.read(kind, at: position, end: end)
            return kind == .url ? .url(string) : .string(string)
        case .bytes:
            let length = try reader.length(&cursor, end: end)
            return .bytes(Array(UnsafeRawBufferPointer(start: reader.base + cursor, count: length)))
        case .array, .object, .map:
            guard depth < depthLimit else { throw CompactDecodingError(.depthLimitExceeded, offset: position) }
            let length = try reader.length(&cursor, end: end)
            let bodyEnd = cursor + length
            if kind == .array {
                var items: [CompactValue] = []
                while cursor < bodyEnd {
                    let next = try reader.skip(cursor, end: bodyEnd)
                    items.append(try read(at: cursor, end: next, depth: depth + 1))
                    cursor = next
                }
                return .array(items)
            }
            var fields: [CompactValue.Field] = []
            while cursor < bodyEnd {
                let key = try readKey(&cursor, end: bodyEnd, isMap: kind == .map)
                let next = try reader.skip(cursor, end: bodyEnd)
                fields.append(.init(key: key, value: try read(at: cursor, end: next, depth: depth + 1)))
                cursor = next
            }
            return .object(fields)
        }
    }

    /// Reads an object's field id (resolved to its name) or a map's inline key.
    func readKey(_ cursor: inout Int, end: Int, isMap: Bool) throws(CompactDecodingError) -> String {
        let at = cursor
        guard isMap else {
            let id = try reader.varint(&cursor, end: end)
            guard id < UInt64(names.count) else {
                throw CompactDecodingError(.unknownFieldID(UInt32(truncatingIfNeeded: id)), offset: at)
            }
            return names[Int(id)]
        }
        let tag = try reader.byte(at: cursor, end: end)
        cursor += 1
        switch tag {
        case ValueKind.string.rawValue:
            let length = try reader.length(&cursor, end: end)
            defer { cursor += length }
            return try reader.string(at: cursor, length: length)
        case ValueKind.int.rawValue: return String(unzigzag(try reader.varint(&cursor, end: end)))
        case ValueKind.uint.rawValue: return String(try reader.varint(&cursor, end: end))
        default: throw CompactDecodingError(.badKind(tag), offset: at)
        }
    }
}
