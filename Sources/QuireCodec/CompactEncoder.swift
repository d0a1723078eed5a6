/// Encodes any `Encodable` value into QuireCodec's compact, self-describing binary format.
///
/// Records carry field ids from a caller-supplied ``FieldTable`` (`encode(_:fields:)`), or embed
/// their field names (``encodeStandalone(_:)``). The bytes are specified in docs/FORMAT.md.
///
/// Encoding limitations: containers are written as a stream, so a container may not be written to
/// after its parent (or a later sibling) has been written to; such a write throws `EncodingError`.
/// An encoder from `superEncoder()` must encode exactly one value.
public struct CompactEncoder: Sendable {
    /// Optional zstd compression of whole payloads.
    public struct Compression: Sendable {
        /// zstd level (1 fastest … 19 smallest).
        public var level: Int32
        /// Payloads smaller than this many bytes are stored uncompressed.
        public var threshold: Int
        /// A dictionary from ``ZstdDictionary/train(samples:capacity:)``; decoders need the same bytes.
        public var dictionary: [UInt8]?

        /// Creates compression settings.
        public init(level: Int32 = 3, threshold: Int = 128, dictionary: [UInt8]? = nil) {
            self.level = level
            self.threshold = threshold
            self.dictionary = dictionary
        }
    }

    /// Encoder settings.
    public struct Options: Sendable {
        /// Compression of payloads; nil (the default) stores them uncompressed.
        public var compression: Compression?
        /// The initial buffer capacity in bytes (a hint).
        public var initialCapacity: Int
        /// Passed to `Encodable` implementations as `Encoder.userInfo`.
        public var userInfo: [CodingUserInfoKey: any Sendable]
        /// Writes format version 2: a CRC-32C of the payload after its header byte, so that any
        /// changed byte is detected (docs/FORMAT.md, "Checksum"). Off by default (version 1);
        /// the store turns it on for its records.
        public var checksum: Bool

        /// Creates options.
        public init(
            compression: Compression? = nil, initialCapacity: Int = 1024,
            userInfo: [CodingUserInfoKey: any Sendable] = [:], checksum: Bool = false
        ) {
            self.compression = compression
            self.initialCapacity = initialCapacity
            self.userInfo = userInfo
            self.checksum = checksum
        }
    }

    /// The settings this encoder was made with.
    public let options: Options
    private let compressor: ZstdCompressor?
    private let memo = EncoderMemo()

    /// Creates an encoder.
    public init(options: Options = .init()) {
        self.options = options
        self.compressor = options.compression.map { ZstdCompressor(level: $0.level, dictionary: $0.dictionary) }
    }

    /// Encodes `value` with field ids from `fields`, interning names it does not have yet.
    ///
    /// New names are appended to `fields`; the caller must persist them before (or with) the record.
    /// - Throws: `EncodingError` for values this format cannot hold, or errors thrown by `value`.
    ///
    /// A value that is ``CompactEncodable`` takes its hand-written fast path, with the same bytes.
    public func encode<T: Encodable>(_ value: T, fields: inout FieldTable) throws -> [UInt8] {
        if let compact = value as? any CompactEncodable { return try encodeCompact(compact, fields: &fields) }
        let state = EncoderState(
            fields: fields, capacity: memo.capacity(atLeast: options.initialCapacity), userInfo: options.userInfo,
            keyCaches: memo.take(for: fields.names))
        startPayload(&state.writer)
        try state.encodeValue(value)
        state.closeContainers(downTo: 0)
        if let error = state.deferredError { throw error }
        fields = state.fields
        memo.put(state.keyCaches, names: fields.names)
        memo.noteSize(state.writer.bytes.count)
        return finish(state.writer.bytes, headerFlags: 0)
    }

    /// Encodes `value` through its hand-written conformance (the same bytes as its `Encodable` one).
    public func encode<T: CompactEncodable>(_ value: T, fields: inout FieldTable) throws -> [UInt8] {
        try encodeCompact(value, fields: &fields)
    }

    private func encodeCompact<T: CompactEncodable>(_ value: T, fields: inout FieldTable) throws -> [UInt8] {
        let state = EncoderState(
            fields: fields, capacity: memo.capacity(atLeast: options.initialCapacity), userInfo: options.userInfo,
            keyCaches: memo.take(for: fields.names))
        startPayload(&state.writer)
        try state.encodeCompact(value)
        if let error = state.deferredError { throw error }
        fields = state.fields
        memo.put(state.keyCaches, names: fields.names)
        memo.noteSize(state.writer.bytes.count)
        return finish(state.writer.bytes, headerFlags: 0)
    }

    /// Encodes `value` like `encode(_:fields:)` and lends the bytes to `body` instead of
    /// returning them.
    ///
    /// The encoder keeps its buffers from one call to the next, so a caller that copies the bytes
    /// elsewhere (a bulk load into its own memory, a database put) allocates nothing per record.
    /// The bytes are valid only inside `body`. Not public: they are a pooled buffer that an
    /// escaped pointer would show the next record in.
    package func withEncoded<T: Encodable, R>(
        _ value: T, fields: inout FieldTable, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        if let compact = value as? any CompactEncodable { return try withEncodedCompact(compact, fields: &fields, body) }
        if compressor != nil { return try encode(value, fields: &fields).withUnsafeBytes(body) }
        return try withSpareState(fields: &fields, body) { state in
            try state.encodeValue(value)
            state.closeContainers(downTo: 0)
        }
    }

    /// Encodes `value` through its hand-written conformance and lends the bytes to `body`
    /// (see ``withEncoded(_:fields:_:)-(T,_,_)``).
    package func withEncoded<T: CompactEncodable, R>(
        _ value: T, fields: inout FieldTable, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        try withEncodedCompact(value, fields: &fields, body)
    }

    private func withEncodedCompact<T: CompactEncodable, R>(
        _ value: T, fields: inout FieldTable, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        if compressor != nil { return try encodeCompact(value, fields: &fields).withUnsafeBytes(body) }
        return try withSpareState(fields: &fields, body) { state in try state.encodeCompact(value) }
    }

    /// Encodes with the memo's spare state (or a new one), lends the bytes, and keeps the state.
    private func withSpareState<R>(
        fields: inout FieldTable, _ body: (UnsafeRawBufferPointer) throws -> R, encode: (EncoderState) throws -> Void
    ) throws -> R {
        let state =
            memo.takeSpare(for: fields)
            ?? EncoderState(
                fields: fields, capacity: memo.capacity(atLeast: options.initialCapacity), userInfo: options.userInfo,
                keyCaches: memo.take(for: fields.names))
        startPayload(&state.writer)
        try encode(state)
        if let error = state.deferredError { throw error }
        fields = state.fields
        memo.noteSize(state.writer.bytes.count)
        defer { memo.putSpare(state, names: fields.names) }
        if options.checksum { Checksum.seal(&state.writer.bytes) }
        return try state.writer.bytes.withUnsafeBytes(body)
    }

    /// Encodes a generic value tree, interning its object keys into `fields`.
    public func encode(_ value: CompactValue, fields: inout FieldTable) throws -> [UInt8] {
        let state = EncoderState(fields: fields, capacity: options.initialCapacity, userInfo: options.userInfo)
        startPayload(&state.writer)
        try state.writeGeneric(value)
        fields = state.fields
        return finish(state.writer.bytes, headerFlags: 0)
    }

    /// Encodes `value` with its field names embedded, readable without a field table.
    public func encodeStandalone<T: Encodable>(_ value: T) throws -> [UInt8] {
        let state = EncoderState(fields: FieldTable(), capacity: options.initialCapacity, userInfo: options.userInfo)
        try state.encodeValue(value)
        state.closeContainers(downTo: 0)
        if let error = state.deferredError { throw error }
        var names = ByteWriter(capacity: state.writer.bytes.count + 64)
        startPayload(&names, flags: FormatHeader.standalone)
        names.varint(UInt64(state.fields.count))
        for name in state.fields.names { names.rawString(name) }
        names.bytes.append(contentsOf: state.writer.bytes)
        return finish(names.bytes, headerFlags: FormatHeader.standalone)
    }

    /// Whether ``recompressed(_:decompressor:)`` may change a payload, from its header byte
    /// alone: it is not compressed the way this encoder compresses (small payloads that stay
    /// uncompressed answer true too).
    package func mayRecompress(_ payload: UnsafeRawBufferPointer) -> Bool {
        guard let compressor, let header = payload.first else { return false }
        return header & FormatHeader.compressed == 0 || (header & FormatHeader.dictionary != 0) != compressor.hasDictionary
    }

    /// A stored payload rewritten the way this encoder writes new ones (compressed, with its
    /// dictionary), or nil when it already is (or this encoder does not compress). The value is
    /// unchanged: only the framing and the compression of the body change.
    ///
    /// - Throws: ``CompactDecodingError`` for a malformed payload.
    package func recompressed(_ payload: UnsafeRawBufferPointer, decompressor: CompactDecoder.Options) throws
        -> [UInt8]?
    {
        guard mayRecompress(payload) else { return nil }
        let header = try ByteReader(payload).byte(at: 0, end: payload.count)
        let body = try Payload.plainBody(payload, options: decompressor)
        var plain = ByteWriter(capacity: body.count + 8)
        let standalone = header & FormatHeader.standalone
        startPayload(&plain, flags: standalone)
        plain.bytes.append(contentsOf: body)
        let rewritten = finish(plain.bytes, headerFlags: standalone)
        return rewritten.elementsEqual(payload) ? nil : rewritten
    }

    /// Writes the header byte (version 1, or 2 with room for the checksum) of a payload.
    private func startPayload(_ writer: inout ByteWriter, flags: UInt8 = 0) {
        writer.byte((options.checksum ? FormatHeader.checkedVersion : FormatHeader.version) | flags)
        if options.checksum { writer.bytes.append(contentsOf: repeatElement(0, count: 4)) }
    }

    /// Compresses the body (everything after the header byte and checksum) when configured and
    /// worthwhile, then fills in the checksum. A body larger than a reader decompresses by
    /// default is left as it is: compressed, a record of 64 MiB of text was written and then
    /// refused by every read (the load that wrote it failed indexing its text).
    private func finish(_ bytes: [UInt8], headerFlags: UInt8) -> [UInt8] {
        let bodyStart = options.checksum ? FormatHeader.checkedBodyStart : 1
        var result = bytes
        if let compressor, let compression = options.compression, bytes.count - bodyStart >= compression.threshold,
            bytes.count - bodyStart <= CompactDecoder.Options.defaultMaxDecompressedSize,
            let compressed = bytes.withUnsafeBytes({ raw in
                compressor.compress(UnsafeRawBufferPointer(rebasing: raw[bodyStart...]))
            })
        {
            var out = ByteWriter(capacity: compressed.count + 16)
            var flags = headerFlags | FormatHeader.compressed
            if compressor.hasDictionary { flags |= FormatHeader.dictionary }
            startPayload(&out, flags: flags)
            out.varint(UInt64(bytes.count - bodyStart))
            out.bytes.append(contentsOf: compressed)
            if out.bytes.count < bytes.count { result = out.bytes }
        }
        if options.checksum { Checksum.seal(&result) }
        return result
    }
}
