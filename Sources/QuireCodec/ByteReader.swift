/// Bounds-checked reads from borrowed bytes; the only place bytes are read.
///
/// Every read takes an explicit `end` (the end of the enclosing container), so a value can never
/// reach past its container, and every length is checked against the bytes that remain before
/// anything is allocated.
@usableFromInline struct ByteReader {
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline let count: Int

    init(_ buffer: UnsafeRawBufferPointer) {
        // An empty buffer may have no base address; any non-nil pointer works since nothing is read.
        base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 0x10)!
        count = buffer.count
    }

    @inline(__always) func byte(at position: Int, end: Int) throws(CompactDecodingError) -> UInt8 {
        guard position < end else { throw CompactDecodingError(.truncated, offset: position) }
        return base.load(fromByteOffset: position, as: UInt8.self)
    }

    @inlinable @inline(__always) func varint(_ position: inout Int, end: Int) throws(CompactDecodingError) -> UInt64 {
        // Fast path: one byte.
        if position < end {
            let first = base.load(fromByteOffset: position, as: UInt8.self)
            if first < 0x80 {
                position += 1
                return UInt64(first)
            }
        }
        return try varintSlow(&position, end: end)
    }

    @usableFromInline func varintSlow(_ position: inout Int, end: Int) throws(CompactDecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        let start = position
        while true {
            guard position < end else { throw CompactDecodingError(.truncated, offset: position) }
            let byte = base.load(fromByteOffset: position, as: UInt8.self)
            position += 1
            if shift == 63 && byte > 1 { throw CompactDecodingError(.integerOverflow, offset: start) }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
            if shift > 63 { throw CompactDecodingError(.integerOverflow, offset: start) }
        }
    }

    /// Reads a length and checks that many bytes remain before `end`.
    @inline(__always) func length(_ position: inout Int, end: Int) throws(CompactDecodingError) -> Int {
        let start = position
        let value = try varint(&position, end: end)
        guard value <= UInt64(end - position) else { throw CompactDecodingError(.lengthTooLarge, offset: start) }
        return Int(value)
    }

    @inline(__always) func fixed<I: FixedWidthInteger>(
        _ type: I.Type, _ position: inout Int, end: Int
    ) throws(CompactDecodingError) -> I {
        let size = MemoryLayout<I>.size
        guard end - position >= size else { throw CompactDecodingError(.truncated, offset: position) }
        let value = I(littleEndian: base.loadUnaligned(fromByteOffset: position, as: I.self))
        position += size
        return value
    }

    /// Validated UTF-8 of `length` bytes at `position`.
    @inline(__always) func string(at position: Int, length: Int) throws(CompactDecodingError) -> String {
        let start = (base + position).assumingMemoryBound(to: UInt8.self)
        guard let string = UTF8Validation.string(start, count: length) else {
            throw CompactDecodingError(.invalidUTF8, offset: position)
        }
        return string
    }

    /// Validated UTF-8 made of `prefixLength` bytes at `prefixAt` followed by `suffixLength` bytes at `suffixAt`.
    func joinedString(_ prefixAt: Int, _ prefixLength: Int, _ suffixAt: Int, _ suffixLength: Int) throws(CompactDecodingError) -> String {
        let total = prefixLength + suffixLength
        let string: String? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(total, 1)) { buffer in
            let out = UnsafeMutableRawPointer(buffer.baseAddress!)
            out.copyMemory(from: base + prefixAt, byteCount: prefixLength)
            (out + prefixLength).copyMemory(from: base + suffixAt, byteCount: suffixLength)
            return UTF8Validation.string(buffer.baseAddress!, count: total)
        }
        guard let string else { throw CompactDecodingError(.invalidUTF8, offset: suffixAt) }
        return string
    }

    /// True when the UTF-8 bytes at `position` equal `string` (no allocation).
    @inline(__always) func bytesEqual(at position: Int, length: Int, _ string: String) -> Bool {
        var string = string
        return string.withUTF8 { utf8 in
            utf8.count == length && (length == 0 || memcmp(utf8.baseAddress!, base + position, length) == 0)
        }
    }

    /// The offset just past the value whose tag is at `position`, without looking inside containers.
    @usableFromInline func skip(_ position: Int, end: Int) throws(CompactDecodingError) -> Int {
        let tag = try byte(at: position, end: end)
        var cursor = position + 1
        guard let kind = ValueKind.of(tag) else { throw CompactDecodingError(.badKind(tag), offset: position) }
        switch kind {
        case .null, .falseValue, .trueValue, .smallInt:
            return cursor
        case .int, .uint, .dateMillis, .dateWholeSeconds, .stringRef, .internedString:
            _ = try varint(&cursor, end: end)
            return cursor
        case .shortString:
            let length = Int(tag & 0x7F)
            guard end - cursor >= length else { throw CompactDecodingError(.truncated, offset: cursor) }
            return cursor + length
        case .stringPrefixRef:
            _ = try varint(&cursor, end: end)
            _ = try varint(&cursor, end: end)
            let length = try length(&cursor, end: end)
            return cursor + length
        case .float64, .dateSeconds:
            guard end - cursor >= 8 else { throw CompactDecodingError(.truncated, offset: cursor) }
            return cursor + 8
        case .float32:
            guard end - cursor >= 4 else { throw CompactDecodingError(.truncated, offset: cursor) }
            return cursor + 4
        case .string, .bytes, .url, .array, .object, .map:
            let length = try length(&cursor, end: end)
            return cursor + length
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
