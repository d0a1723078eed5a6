/// A failure to read compact bytes, with the place it happened.
///
/// Thrown for malformed input (truncation, bad kinds, invalid UTF-8, lengths past the end, deep
/// nesting, trailing bytes) and for a record whose field ids the caller's ``FieldTable`` lacks.
/// Type mismatches in typed decoding are reported as Swift's `DecodingError` instead.
public struct CompactDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The input ended in the middle of a value.
        case truncated
        /// Bytes remain after the root value.
        case trailingBytes
        /// A string, URL or field name is not valid UTF-8.
        case invalidUTF8
        /// Nesting is deeper than ``CompactDecoder/Options/depthLimit``.
        case depthLimitExceeded
        /// A length is larger than the bytes that remain or than a configured limit.
        case lengthTooLarge
        /// A kind tag that is unknown or not allowed here (such as a map key that is not a string or integer).
        case badKind(UInt8)
        /// A varint longer than 10 bytes or past 64 bits.
        case integerOverflow
        /// The record uses a field id that the field table does not have: reload the table and retry.
        case unknownFieldID(UInt32)
        /// The leading byte names a format version this reader does not know, or reserved flags are set.
        case unsupportedVersion(UInt8)
        /// A value of one kind where another was required (used by lazy reads and generic values).
        case typeMismatch(expected: String, found: String)
        /// A compressed payload could not be decompressed (bad frame, wrong or missing dictionary, size mismatch).
        case decompressionFailed(String)
        /// A version 2 payload's bytes do not match its CRC-32C: the record was changed after it
        /// was written (a damaged disk page, a flipped bit).
        case checksumMismatch(stored: UInt32, computed: UInt32)
    }

    /// What went wrong.
    public var kind: Kind
    /// The path of the value being read, like `keywords[0].rank`; empty at the root.
    public var codingPath: String
    /// The byte offset in the (decompressed) payload where the problem was found.
    public var offset: Int

    /// Creates an error.
    public init(_ kind: Kind, codingPath: String = "", offset: Int = 0) {
        self.kind = kind
        self.codingPath = codingPath
        self.offset = offset
    }

    /// The unknown field id, when that is the failure.
    public var unknownFieldID: UInt32? {
        if case .unknownFieldID(let id) = kind { return id }
        return nil
    }

    public var description: String {
        let what: String
        switch kind {
        case .truncated: what = "input ends in the middle of a value"
        case .trailingBytes: what = "unexpected bytes after the value"
        case .invalidUTF8: what = "invalid UTF-8"
        case .depthLimitExceeded: what = "nesting deeper than the depth limit"
        case .lengthTooLarge: what = "length larger than the remaining input or the limit"
        case .badKind(let tag): what = "unknown or misplaced kind tag 0x\(String(tag, radix: 16))"
        case .integerOverflow: what = "varint overflows 64 bits"
        case .unknownFieldID(let id): what = "field id \(id) is not in the field table"
        case .unsupportedVersion(let byte): what = "unsupported format version/flags byte 0x\(String(byte, radix: 16))"
        case .typeMismatch(let expected, let found): what = "expected \(expected), found \(found)"
        case .decompressionFailed(let reason): what = "decompression failed: \(reason)"
        case .checksumMismatch(let stored, let computed):
            what = "checksum mismatch (stored 0x\(String(stored, radix: 16)), computed 0x\(String(computed, radix: 16))): the record is damaged"
        }
        let place = codingPath.isEmpty ? "<root>" : codingPath
        return "compact decoding error at \(place) (byte \(offset)): \(what)"
    }
}
