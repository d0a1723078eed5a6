import QuireHTTP

/// An API key: a secret that never shows in a description, a dump or a debugger summary.
///
/// `"\(key)"`, `String(describing:)`, `dump` and `debugPrint` all give `<api key>`; only
/// ``value`` reveals it, and only the URL builder reads that.
public struct APIKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret itself.
    public let value: String

    /// Wraps `value`.
    public init(_ value: String) { self.value = value }

    public var description: String { "<api key>" }
    public var debugDescription: String { "<api key>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// Keeps `QuireHTTP` out of `FetchSource.swift`'s public surface.
enum URLRedactionBridge {
    static func redact(_ text: String) -> String { URLRedaction.redact(text) }
}

/// Percent-encodes a query value (everything but RFC 3986 unreserved characters).
func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            out += "%" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    return out
}

extension APIKey {
    /// `text` with this key replaced by `REDACTED` in every form a server or a document could
    /// carry it: literal, either letter case, percent-encoded (once or twice), `+` for spaces,
    /// JSON `\u00XX` escapes, or a mix.
    package func scrub(_ text: String) -> String { URLRedaction.scrubSecret(value, from: text) }

    /// Raw bytes (a document kept for remapping, a response body) scrubbed like ``scrub(_:)``.
    package func scrub(bytes: [UInt8]) -> [UInt8] { URLRedaction.scrubSecret(value, fromBytes: bytes) }
}
