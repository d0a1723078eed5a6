import Foundation

/// Hides secrets carried in URLs before they reach an error, a description or a log line.
///
/// API keys travel as query parameters (`api-key=…` for the NYT API), so any URL that leaves the
/// HTTP layer in text form goes through ``redact(_:)`` first.
public enum URLRedaction {
    /// The text that replaces a secret value.
    public static let placeholder = "REDACTED"

    /// Query parameter names whose values are secrets, compared case-insensitively.
    public static let secretParameterNames: Set<String> = [
        "api-key", "apikey", "api_key", "key", "token", "access_token", "password", "secret",
    ]

    /// Returns `url` with the values of secret query parameters and any `user:password@`
    /// credentials replaced by ``placeholder``.
    ///
    /// Works on any text, not only a well-formed URL: every `?name=value` or `&name=value`
    /// whose name is secret is rewritten, so a URL quoted inside a longer message is covered too.
    public static func redact(_ url: String) -> String {
        redactCredentials(in: redactParameters(in: url))
    }

    /// Rewrites `name=value` pairs that follow `?`, `&` or `;`.
    private static func redactParameters(in text: String) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            output.append(byte)
            index += 1
            guard byte == UInt8(ascii: "?") || byte == UInt8(ascii: "&") || byte == UInt8(ascii: ";") else {
                continue
            }
            // Find the parameter name.
            var nameEnd = index
            while nameEnd < bytes.count, bytes[nameEnd] != UInt8(ascii: "="), !isValueTerminator(bytes[nameEnd]) {
                nameEnd += 1
            }
            guard nameEnd < bytes.count, bytes[nameEnd] == UInt8(ascii: "=") else { continue }
            let name = String(decoding: bytes[index..<nameEnd], as: UTF8.self)
            guard secretParameterNames.contains(percentDecodedLowercased(name)) else { continue }
            output.append(contentsOf: bytes[index...nameEnd])
            output.append(contentsOf: placeholder.utf8)
            index = nameEnd + 1
            while index < bytes.count, !isValueTerminator(bytes[index]) { index += 1 }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Replaces `user:password@` after `scheme://` with the placeholder.
    private static func redactCredentials(in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let schemeEnd = rest.range(of: "://") {
            result += rest[..<schemeEnd.upperBound]
            rest = rest[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex(where: { "/?#& \t\r\n\"'<>".contains($0) }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                result += placeholder
                rest = rest[at...]
            }
        }
        return result + rest
    }

    private static func isValueTerminator(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "#"), UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "\t"),
            UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "<"),
            UInt8(ascii: ">"):
            return true
        default:
            return false
        }
    }

    /// `api%2Dkey` and `API-KEY` must be recognised as `api-key`.
    private static func percentDecodedLowercased(_ name: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(name.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self).lowercased()
    }
}
