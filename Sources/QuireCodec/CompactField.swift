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
        try value(at: components(of: path), in: bytes, fields: fields, options: options)
    }

    /// The value at `path`, or nil when the path is absent.
    public static func value(
        at path: [CompactPathComponent], in bytes: UnsafeRawBufferPointer, fields: FieldTable,
        options: CompactDecoder.Options = .init()
    ) throws -> CompactValue? {
        try values(at: [path], in: bytes, fields: fields, options: options)[0]
    }

    /// The values at several paths of one payload (nil where a path is absent), opening it
    /// once: a compressed record is decompressed once, not once a path.
    public static func values(
        at paths: [[CompactPathComponent]], in bytes: UnsafeRawBufferPointer, fields: FieldTable,
        options: CompactDecoder.Options = .init()
    ) throws -> [CompactValue?] {
        try Payload.open(
            bytes, fields: fields, maxDecompressedSize: options.maxDecompressedSize,
            decompressor: options.decompressor, verifyChecksum: options.verifyChecksums
        ) { reader, start, table in
            let rootEnd = try reader.skip(start, end: reader.count)
            guard rootEnd == reader.count else { throw CompactDecodingError(.trailingBytes, offset: rootEnd) }
            let strings = StringTable(reader: reader, rootStart: start, rootEnd: rootEnd, depthLimit: options.depthLimit, values: table.values)
            let generic = GenericReader(reader: reader, names: table.names, depthLimit: options.depthLimit, strings: strings)
            return try paths.map { path throws -> CompactValue? in
                var (position, end) = (start, rootEnd)
                for (depth, component) in path.enumerated() {
                    guard depth < options.depthLimit else { throw CompactDecodingError(.depthLimitExceeded, offset: position) }
                    guard let next = try step(generic, at: position, end: end, component) else { return nil }
                    (position, end) = next
                }
                return try generic.read(at: position, end: end, depth: path.count)
            }
        }
    }

    /// A dotted path (`keywords.0.value`) as components: a numeric part is an index.
    public static func components(of path: String) -> [CompactPathComponent] {
        guard !path.isEmpty else { return [] }
        return path.split(separator: ".", omittingEmptySubsequences: false).map { part in
            if let index = Int(part), index >= 0 { return .index(index) }
            return .key(String(part))
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
