import QuireCodec

/// What a document's `s:<c>:num` entry remembers of how it was indexed (in indexes whose state
/// has ``SearchState/checkedDocuments``), in 4 bytes: the digest of the postings its text made,
/// mixed with a checksum of that text when `verify` can read the text back (every field of the
/// index has a path). `verify` mixes the postings it reads with the text of the record it
/// decodes and compares: a document that agrees is sound, with odds of 2⁻³² against; only one
/// that does not is tokenized again, so a sound index is checked without tokenizing every
/// record a second time.
struct SearchDocumentCheck: Equatable, Sendable {
    /// The low 32 bits of the document's ``SearchPostingDigest/occurrences``: every posting's
    /// term and occurrences (a wrapping sum, so the low bits are the sum of the low bits).
    var postings: UInt32
    /// ``textChecksum(_:)`` of the text it was indexed with.
    var text: UInt32

    static let byteCount = 4

    init(postings: UInt32, text: UInt32) {
        self.postings = postings
        self.text = text
    }

    /// The check of a document whose postings add up to `digest`, indexed from `texts`.
    init(_ digest: SearchPostingDigest, texts: [SearchText]) {
        self.init(postings: UInt32(truncatingIfNeeded: digest.occurrences), text: Self.textChecksum(texts))
    }

    /// The number stored: the postings' digest, mixed with the text's checksum `withText`.
    func stored(withText: Bool) -> UInt32 { withText ? postings ^ text : postings }

    /// Reads a stored number at `offset` (little-endian), nil when the entry is shorter.
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32? {
        guard offset >= 0, bytes.count >= offset + byteCount else { return nil }
        var value: UInt32 = 0
        for i in 0..<byteCount { value |= UInt32(bytes[offset + i]) << (8 * UInt32(i)) }
        return value
    }

    static func append(_ stored: UInt32, to out: inout [UInt8]) {
        withUnsafeBytes(of: stored.littleEndian) { out.append(contentsOf: $0) }
    }

    /// CRC-32C of each field's pieces in their order (each piece's field, length and UTF-8
    /// bytes), summed over the fields: the order of fields does not count, as it does not in
    /// the postings, so a text closure and the fields' paths that list them differently agree.
    static func textChecksum(_ texts: [SearchText]) -> UInt32 {
        var checksum = SearchTextChecksum()
        for piece in texts { checksum.add(field: piece.field, piece.text) }
        return checksum.value
    }
}

/// ``SearchDocumentCheck/textChecksum(_:)`` a piece at a time (verify's record walk adds the
/// pieces as it finds them in a decoded record, without gathering them first).
struct SearchTextChecksum {
    private var fields = InlineArray<16, UInt32>(repeating: 0)
    private var used: UInt16 = 0

    mutating func add(field: UInt8, _ text: String) {
        let f = Int(field & 15)
        let n = UInt32(truncatingIfNeeded: text.utf8.count)
        let header = (
            field, UInt8(truncatingIfNeeded: n), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n >> 16),
            UInt8(truncatingIfNeeded: n >> 24)
        )
        let crc = withUnsafeBytes(of: header) { Checksum.crc32c($0, continuing: fields[f]) }
        var text = text
        fields[f] = text.withUTF8 { Checksum.crc32c(UnsafeRawBufferPointer($0), continuing: crc) }
        used |= 1 << UInt16(f)
    }

    var value: UInt32 {
        var sum: UInt32 = 0
        for f in 0..<16 where used & (1 << UInt16(f)) != 0 { sum &+= fields[f] }
        return sum
    }
}
