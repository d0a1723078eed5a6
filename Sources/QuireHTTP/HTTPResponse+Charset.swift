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
    public var utf8Body: [UInt8] {
        guard let charset = declaredCharset, !["utf-8", "utf8", "us-ascii", "ascii"].contains(charset) else { return body }
        if String(validating: body, as: UTF8.self) != nil { return body }
        return Self.transcode(body, from: charset) ?? body
    }

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
