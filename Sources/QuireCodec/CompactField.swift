/// One step of a path into a value: a field name or an array index.
public enum CompactPathComponent: Sendable, Hashable {
    /// An object field or a map key.
    case key(String)
    /// An array element.
    case index(Int)
}

/// Lazy reads: one field or path from a payload, skipping everything else.
///
/// Container lengths let the reader jump over values it does not need, so reading `headline.main`
/// from an article costs about as much as finding it, not as much as decoding the article.
public enum CompactField {
    /// The value at a dotted path like `keywords.0.value`, or nil when the path is absent.
    ///
    /// A numeric component indexes an array, or names a key when the value there is an object.
    /// - Throws: ``CompactDecodingError`` for malformed bytes or field ids missing from `fields`.
    public static func value(
        at path: String, in bytes: UnsafeRawBufferPointer, fields: FieldTable, options: CompactDecoder.Options = .init()
    ) throws -> CompactValue? {
        let components: [CompactPathComponent] =
            path.isEmpty
            ? []
            : path.split(separator: ".", omittingEmptySubsequences: false).map { part in
                if let index = Int(part), index >= 0 { return .index(index) }
                return .key(String(part))
            }
        return try value(at: components, in: bytes, fields: fields, options: options)
    }

    /// The value at `path`, or nil when the path is absent.
    public static func value(
        at path: [CompactPathComponent], in bytes: UnsafeRawBufferPointer, fields: FieldTable,
        options: CompactDecoder.Options = .init()
    ) throws -> CompactValue? {
        try Payload.open(
            bytes, fields: fields, maxDecompressedSize: options.maxDecompressedSize,
            decompressor: options.decompressor, verifyChecksum: options.verifyChecksums
        ) { reader, start, table in
            var position = start
            var end = try reader.skip(start, end: reader.count)
            guard end == reader.count else { throw CompactDecodingError(.trailingBytes, offset: end) }
            let strings = StringTable(reader: reader, rootStart: start, rootEnd: end, depthLimit: options.depthLimit, values: table.values)
            let generic = GenericReader(reader: reader, names: table.names, depthLimit: options.depthLimit, strings: strings)
            for (depth, component) in path.enumerated() {
                guard depth < options.depthLimit else { throw CompactDecodingError(.depthLimitExceeded, offset: position) }
                guard let next = try step(generic, at: position, end: end, component) else { return nil }
                (position, end) = next
            }
            return try generic.read(at: position, end: end, depth: path.count)
        }
    }

    /// The range of the child `component` of the container at `position`, or nil.
    private static func step(
        _ generic: GenericReader, at position: Int, end: Int, _ component: CompactPathComponent
    ) throws(CompactDecodingError) -> (Int, Int)? {
        let reader = generic.reader
        let tag = try reader.byte(at: position, end: end)
        guard tag == ValueKind.array.rawValue || tag == ValueKind.object.rawValue || tag == ValueKind.map.rawValue
        else { return nil }
        var cursor = position + 1
        let length = try reader.length(&cursor, end: end)
        let bodyEnd = cursor + length
        if tag == ValueKind.array.rawValue {
            guard case .index(let wanted) = component else { return nil }
            var index = 0
            while cursor < bodyEnd {
                let next = try reader.skip(cursor, end: bodyEnd)
                if index == wanted { return (cursor, next) }
                index += 1
                cursor = next
            }
            return nil
        }
        let name: String
        switch component {
        case .key(let key): name = key
        case .index(let index): name = String(index)
        }
        while cursor < bodyEnd {
            let key = try generic.readKey(&cursor, end: bodyEnd, isMap: tag == ValueKind.map.rawValue)
            let next = try reader.skip(cursor, end: bodyEnd)
            if key == name { return (cursor, next) }
            cursor = next
        }
        return nil
    }
}
