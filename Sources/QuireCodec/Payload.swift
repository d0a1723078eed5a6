/// What a payload's ids resolve against: field names, and interned values (nil for names), by id.
struct IDTable {
    let names: [String]
    let values: [String?]
}

/// The framing around a root value: the version/flags byte, optional zstd frame, optional embedded names.
enum Payload {
    /// Checks the header, decompresses when flagged, reads embedded names when flagged, and calls
    /// `body` with the bytes of the root value and the table to resolve field ids and interned values with.
    ///
    /// Version 2 payloads carry a CRC-32C; `verifyChecksum` checks it first (``CompactDecodingError/Kind/checksumMismatch``).
    static func open<R>(
        _ bytes: UnsafeRawBufferPointer, fields: FieldTable?, maxDecompressedSize: Int,
        decompressor: ZstdDecompressor?, verifyChecksum: Bool = false,
        _ body: (ByteReader, Int, IDTable) throws -> R
    ) throws -> R {
        let reader = ByteReader(bytes)
        let bodyStart = try checkHeader(bytes, verifyChecksum: verifyChecksum)
        let header = bytes[0]
        let standalone = header & FormatHeader.standalone != 0
        guard header & FormatHeader.compressed != 0 else {
            return try openBody(reader, at: bodyStart, standalone: standalone, fields: fields, body)
        }
        var position = bodyStart
        let size = try reader.varint(&position, end: reader.count)
        guard size <= UInt64(max(0, maxDecompressedSize)) else { throw CompactDecodingError(.lengthTooLarge, offset: 1) }
        let frame = UnsafeRawBufferPointer(rebasing: bytes[position...])
        // Decompressed into temporary memory (on the stack when small enough): the body reads it
        // in place and copies out what it keeps.
        return try withUnsafeTemporaryAllocation(byteCount: Int(size), alignment: 8) { inflated in
            try (decompressor ?? ZstdDecompressor.plain).decompress(
                frame, into: inflated, needsDictionary: header & FormatHeader.dictionary != 0)
            return try openBody(
                ByteReader(UnsafeRawBufferPointer(inflated)), at: 0, standalone: standalone, fields: fields, body)
        }
    }

    /// The body of a payload (everything after its header and checksum) as the compressor
    /// sees it: decompressed when the payload is compressed. What dictionaries train on.
    static func plainBody(_ bytes: UnsafeRawBufferPointer, options: CompactDecoder.Options) throws -> [UInt8] {
        let bodyStart = try checkHeader(bytes, verifyChecksum: options.verifyChecksums)
        let header = bytes[0]
        guard header & FormatHeader.compressed != 0 else { return Array(bytes[bodyStart...]) }
        let reader = ByteReader(bytes)
        var position = bodyStart
        let size = try reader.varint(&position, end: reader.count)
        guard size <= UInt64(max(0, options.maxDecompressedSize)) else { throw CompactDecodingError(.lengthTooLarge, offset: 1) }
        return try (options.decompressor ?? ZstdDecompressor.plain).decompress(
            UnsafeRawBufferPointer(rebasing: bytes[position...]), expectedSize: Int(size),
            needsDictionary: header & FormatHeader.dictionary != 0)
    }

    /// Checks the header byte (and, when asked, a version 2 checksum); returns where the body starts.
    static func checkHeader(_ bytes: UnsafeRawBufferPointer, verifyChecksum: Bool) throws(CompactDecodingError) -> Int {
        let reader = ByteReader(bytes)
        let header = try reader.byte(at: 0, end: reader.count)
        let version = header & FormatHeader.versionMask
        guard version == FormatHeader.version || version == FormatHeader.checkedVersion,
            header & FormatHeader.reserved == 0,
            header & FormatHeader.dictionary == 0 || header & FormatHeader.compressed != 0
        else { throw CompactDecodingError(.unsupportedVersion(header)) }
        guard version == FormatHeader.checkedVersion else { return 1 }
        guard bytes.count > FormatHeader.checkedBodyStart else { throw CompactDecodingError(.truncated, offset: bytes.count) }
        if verifyChecksum {
            let stored = Checksum.stored(in: bytes)
            let computed = Checksum.payloadChecksum(bytes)
            guard stored == computed else {
                throw CompactDecodingError(.checksumMismatch(stored: stored, computed: computed), offset: 1)
            }
        }
        return FormatHeader.checkedBodyStart
    }

    private static func openBody<R>(
        _ reader: ByteReader, at start: Int, standalone: Bool, fields: FieldTable?,
        _ body: (ByteReader, Int, IDTable) throws -> R
    ) throws -> R {
        guard standalone else { return try body(reader, start, IDTable(names: fields?.names ?? [], values: fields?.values ?? [])) }
        var position = start
        let end = reader.count
        let count = try reader.varint(&position, end: end)
        // Each name takes at least one byte, so the count is bounded by what remains.
        guard count <= UInt64(end - position) else { throw CompactDecodingError(.lengthTooLarge, offset: start) }
        var names: [String] = []
        names.reserveCapacity(Int(count))
        for _ in 0..<Int(count) {
            let length = try reader.length(&position, end: end)
            names.append(try reader.string(at: position, length: length))
            position += length
        }
        return try body(reader, position, IDTable(names: names, values: FieldTable.values(of: names)))
    }
}

extension CompactDecoder {
    /// The body of a stored payload as the compressor sees it (decompressed when compressed):
    /// what dictionaries are trained on.
    package func plainBody(_ payload: UnsafeRawBufferPointer) throws -> [UInt8] {
        try Payload.plainBody(payload, options: options)
    }
}
