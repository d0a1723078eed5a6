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
        let before = out.count
        do {
            try withGenericReader(bytes, fields: fields, options: options) { generic, start, end in
                try generic.writeJSON(at: start, end: end, depth: 0, into: &out)
            }
        } catch {
            out.removeSubrange(before...)  // nothing half-written
            throw error
        }
    }
}

extension GenericReader {
    /// Writes the value at `position` as JSON, the way `CompactValue.jsonBytes()` writes it.
    func writeJSON(at position: Int, end: Int, depth: Int, into out: inout [UInt8]) throws(CompactDecodingError) {
        let tag = try reader.byte(at: position, end: end)
        guard let kind = ValueKind.of(tag) else { throw CompactDecodingError(.badKind(tag), offset: position) }
        var cursor = position + 1
        switch kind {
        case .shortString:
            let length = Int(tag & 0x7F)
            guard length <= end - cursor else { throw CompactDecodingError(.truncated, offset: cursor) }
            try writeStoredString(at: cursor, length: length, into: &out)
        case .string, .url:
            let length = try reader.length(&cursor, end: end)
            try writeStoredString(at: cursor, length: length, into: &out)
        case .array:
            guard depth < depthLimit else { throw CompactDecodingError(.depthLimitExceeded, offset: position) }
            let length = try reader.length(&cursor, end: end)
            let bodyEnd = cursor + length
            out.append(UInt8(ascii: "["))
            var first = true
            while cursor < bodyEnd {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                let next = try reader.skip(cursor, end: bodyEnd)
                try writeJSON(at: cursor, end: next, depth: depth + 1, into: &out)
                cursor = next
            }
            out.append(UInt8(ascii: "]"))
        case .object, .map:
            guard depth < depthLimit else { throw CompactDecodingError(.depthLimitExceeded, offset: position) }
            let length = try reader.length(&cursor, end: end)
            let bodyEnd = cursor + length
            out.append(UInt8(ascii: "{"))
            var first = true
            while cursor < bodyEnd {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                writeJSONString(try readKey(&cursor, end: bodyEnd, isMap: kind == .map), into: &out)
                out.append(UInt8(ascii: ":"))
                let next = try reader.skip(cursor, end: bodyEnd)
                try writeJSON(at: cursor, end: next, depth: depth + 1, into: &out)
                cursor = next
            }
            out.append(UInt8(ascii: "}"))
        default:
            // Scalars, dates and shared strings: through the value, as `jsonBytes` writes them.
            try read(at: position, end: end, depth: depth).appendJSON(to: &out)
        }
    }

    /// A string stored inline, checked and escaped from its bytes without making a `String`.
    private func writeStoredString(at position: Int, length: Int, into out: inout [UInt8]) throws(CompactDecodingError) {
        let start = (reader.base + position).assumingMemoryBound(to: UInt8.self)
        guard UTF8Validation.validate(start, count: length).isValid else {
            throw CompactDecodingError(.invalidUTF8, offset: position)
        }
        writeJSONString(UnsafeBufferPointer(start: start, count: length), into: &out)
    }
}
