#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension HTTPResponse {
    /// The `charset` parameter of `Content-Type`, lowercased (`iso-8859-1`), or nil.
    public var declaredCharset: String? {
        guard let type = header("Content-Type") else { return nil }
        for parameter in type.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces().lowercased() == "charset" else { continue }
            let value = pair[1].trimmingSpaces().lowercased()
            let unquoted = value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 ? String(value.dropFirst().dropLast()) : value
            return unquoted.isEmpty ? nil : unquoted
        }
        return nil
    }

    /// The body as UTF-8: transcoded (with the C library's `iconv`) when `Content-Type` declares
    /// another charset and the body is not valid UTF-8 already (an old API serving ISO-8859-1
    /// text, whose accents would quarantine every document holding one). A body that is valid
    /// UTF-8 is taken as it is whatever the label says: servers and proxies add a default
    /// `charset=ISO-8859-1` to UTF-8 JSON, and transcoding it would turn `é` into `Ã©` unseen.
    /// The body as it is, too, for a charset `iconv` does not know or bytes that are not in it.
    /// ISO-8859-1 and ASCII labels are read as windows-1252, as browsers do (the WHATWG
    /// Encoding Standard): servers label cp1252 text so, and its 0x80–0x9F are curly quotes,
    /// dashes and the euro sign, not C1 controls (0x9B would have become a terminal's CSI).
    public var utf8Body: [UInt8] {
        guard let charset = declaredCharset, !["utf-8", "utf8"].contains(charset) else { return body }
        // Valid UTF-8 under another label is UTF-8 mislabelled, unless it holds NUL bytes: UTF-16
        // of ASCII text is valid UTF-8 too (an error body quoting the key was shown as it came).
        if !body.contains(0), String(validating: body, as: UTF8.self) != nil { return body }
        if Self.windows1252Labels.contains(charset) {
            // The five bytes cp1252 leaves undefined fail iconv's conversion: Latin-1 then.
            return Self.transcode(body, from: "WINDOWS-1252") ?? Self.transcode(body, from: "ISO-8859-1") ?? body
        }
        return Self.transcode(body, from: charset) ?? body
    }

    /// The labels the WHATWG Encoding Standard maps to windows-1252.
    static let windows1252Labels: Set<String> = [
        "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100",
        "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252",
        "x-cp1252",
    ]

    static func transcode(_ input: [UInt8], from charset: String) -> [UInt8]? {
        let converter = iconv_open("UTF-8", charset)
        guard let converter, converter != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(converter) }
        // At most 4 bytes of UTF-8 for each input byte (single-byte and multi-byte charsets alike).
        var output = [UInt8](repeating: 0, count: input.count * 4 + 4)
        var source = input
        let produced: Int? = source.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer = UnsafeMutableRawPointer(inBuffer.baseAddress)?.assumingMemoryBound(to: CChar.self)
                var outPointer = UnsafeMutableRawPointer(outBuffer.baseAddress)?.assumingMemoryBound(to: CChar.self)
                var inLeft = inBuffer.count
                var outLeft = outBuffer.count
                guard iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1, inLeft == 0 else { return nil }
                // A stateful decoder may hold its last character back until told the input ended.
                guard iconv(converter, nil, nil, &outPointer, &outLeft) != -1 else { return nil }
                return outBuffer.count - outLeft
            }
        }
        guard let produced else { return nil }
        output.removeSubrange(produced...)
        return output
    }
}
