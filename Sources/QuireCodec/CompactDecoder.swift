import Foundation

/// Decodes any `Decodable` value from QuireCodec bytes (see docs/FORMAT.md).
///
/// Decoding never trusts its input: lengths are checked against the remaining bytes, nesting is
/// limited, varints are overflow-checked, and every field id must be in the ``FieldTable``.
/// Fields in the record that the type does not ask for are skipped; optional fields that the
/// record lacks decode as nil; a field of the wrong kind throws `DecodingError.typeMismatch` naming
/// its path. Format damage throws ``CompactDecodingError``.
public struct CompactDecoder: Sendable {
    /// Decoder settings.
    public struct Options: Sendable {
        /// The deepest nesting of containers accepted (the root value is depth 0).
        public var depthLimit: Int
        /// The largest decompressed payload accepted, in bytes.
        public var maxDecompressedSize: Int
        /// The zstd dictionary the records were compressed with, if any; digested once when set,
        /// so every decode with these options shares it (a store sets it from its own metadata).
        package var dictionary: [UInt8]? {
            get { decompressor?.dictionary }
            set { decompressor = newValue.map { ZstdDecompressor(dictionary: $0) } }
        }
        /// The digested dictionary.
        private(set) var decompressor: ZstdDecompressor?
        /// Passed to `Decodable` implementations as `Decoder.userInfo`.
        public var userInfo: [CodingUserInfoKey: any Sendable]
        /// Checks the CRC-32C of version 2 payloads before reading them (version 1 payloads have
        /// none). Off by default: reads skip the check, `Store.verify()` makes it.
        public var verifyChecksums: Bool

        /// The largest body a compressed payload may decompress to, by default: 64 MiB. The
        /// encoder leaves larger bodies uncompressed, so that every record it writes reads back.
        public static let defaultMaxDecompressedSize = 64 << 20

        /// Creates options.
        public init(
            depthLimit: Int = 100, maxDecompressedSize: Int = defaultMaxDecompressedSize,
            userInfo: [CodingUserInfoKey: any Sendable] = [:], verifyChecksums: Bool = false
        ) {
            self.depthLimit = max(1, depthLimit)
            self.maxDecompressedSize = maxDecompressedSize
            self.userInfo = userInfo
            self.verifyChecksums = verifyChecksums
        }

        /// Options for records compressed with `dictionary` (digested here, once).
        package init(
            depthLimit: Int = 100, maxDecompressedSize: Int = defaultMaxDecompressedSize, dictionary: [UInt8]?,
            userInfo: [CodingUserInfoKey: any Sendable] = [:], verifyChecksums: Bool = false
        ) {
            self.init(
                depthLimit: depthLimit, maxDecompressedSize: maxDecompressedSize, userInfo: userInfo,
                verifyChecksums: verifyChecksums)
            self.dictionary = dictionary
        }
    }

    /// The settings this decoder was made with.
    public let options: Options
    private let decompressor: ZstdDecompressor?

    /// Creates a decoder.
    public init(options: Options = .init()) {
        self.options = options
        self.decompressor = options.decompressor
    }

    /// Checks a payload's header byte and, for version 2, its checksum, without decoding it (for
    /// tools that copy records as bytes, such as `quire dump --format mdb`).
    /// - Throws: ``CompactDecodingError`` (`checksumMismatch`, `unsupportedVersion`, `truncated`).
    package static func checkIntegrity(_ bytes: UnsafeRawBufferPointer) throws(CompactDecodingError) {
        _ = try Payload.checkHeader(bytes, verifyChecksum: true)
    }

    /// Decodes a record whose field ids come from `fields`.
    ///
    /// - Throws: ``CompactDecodingError`` for malformed bytes (``CompactDecodingError/unknownFieldID``
    ///   tells that `fields` is older than the record), `DecodingError` for a value of the wrong type.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, fields: FieldTable) throws -> T {
        try decode(type, bytes, fields: fields)
    }

    /// Decodes a record whose field ids come from `fields`.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], fields: FieldTable) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, $0, fields: fields) }
    }

    /// Decodes a record through `T`'s hand-written conformance.
    public func decode<T: CompactDecodable>(_ type: T.Type, from bytes: [UInt8], fields: FieldTable) throws -> T {
        try bytes.withUnsafeBytes { try decodeCompact(type, $0, fields: fields) }
    }

    /// Decodes a record through `T`'s hand-written conformance.
    public func decode<T: CompactDecodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, fields: FieldTable) throws -> T {
        try decodeCompact(type, bytes, fields: fields)
    }

    private func decodeCompact<T: CompactDecodable>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, fields: FieldTable?) throws -> T {
        try withRootState(bytes, fields: fields) { state, start, end in
            try state.decodeCompact(T.self, start, end, step: nil)
        }
    }

    /// Opens the payload (decompressing it if needed), checks that the root value spans it
    /// exactly, and hands a decoder state for the root to `body`.
    private func withRootState<T>(
        _ bytes: UnsafeRawBufferPointer, fields: FieldTable?, _ body: (DecoderState, Int, Int) throws -> T
    ) throws -> T {
        try Payload.open(
            bytes, fields: fields, maxDecompressedSize: options.maxDecompressedSize, decompressor: decompressor,
            verifyChecksum: options.verifyChecksums
        ) { reader, start, table in
            let end = try reader.skip(start, end: reader.count)
            guard end == reader.count else { throw CompactDecodingError(.trailingBytes, offset: end) }
            return try DecoderStateCache.withState(
                reader: reader, names: table.names, values: table.values, start: start, end: end, options: options
            ) { state in try body(state, start, end) }
        }
    }

    /// Decodes bytes made by ``CompactEncoder/encodeStandalone(_:)`` (names embedded in the payload).
    public func decodeStandalone<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, $0, fields: nil) }
    }

    /// Decodes bytes made by ``CompactEncoder/encodeStandalone(_:)`` (names embedded in the payload).
    public func decodeStandalone<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        try decode(type, bytes, fields: nil)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, fields: FieldTable?) throws -> T {
        try withRootState(bytes, fields: fields) { state, start, end in
            if let compact = T.self as? any CompactDecodable.Type {
                return try state.decodeCompact(compact, start, end, step: nil) as! T
            }
            return try state.decodeValue(T.self, start, end, key: nil)
        }
    }
}
