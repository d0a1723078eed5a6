import QuireNews

/// Blanks an API key out of bytes and text that came back from a server (raw documents kept for
/// remapping, rejects, messages), in every form a server may echo it: as sent, percent-encoded,
/// lower- and upper-cased.
struct SecretScrubber: Sendable {
    private let forms: [[UInt8]]
    private static let placeholder = Array("REDACTED".utf8)

    init(_ key: APIKey?) {
        guard let value = key?.value, !value.isEmpty else {
            forms = []
            return
        }
        var all: Set<[UInt8]> = []
        for text in [value, percentEncoded(value)] {
            all.insert(Array(text.utf8))
            all.insert(Array(text.lowercased().utf8))
            all.insert(Array(text.uppercased().utf8))
        }
        // Longest first, so a form never leaves a tail of a longer one behind.
        forms = all.sorted { $0.count > $1.count }
    }

    func scrub(_ bytes: [UInt8]) -> [UInt8] {
        guard !forms.isEmpty else { return bytes }
        var current = bytes
        for form in forms where current.count >= form.count {
            current = Self.replacing(form, in: current)
        }
        return current
    }

    func scrub(_ text: String) -> String {
        guard !forms.isEmpty else { return text }
        return String(decoding: scrub(Array(text.utf8)), as: UTF8.self)
    }

    func scrub(_ reject: DocumentReject) -> DocumentReject {
        guard !forms.isEmpty else { return reject }
        var copy = reject
        copy.rawDocument = scrub(reject.rawDocument)
        return copy
    }

    private static func replacing(_ needle: [UInt8], in haystack: [UInt8]) -> [UInt8] {
        guard let first = needle.first else { return haystack }
        var out: [UInt8] = []
        out.reserveCapacity(haystack.count)
        var i = 0
        let last = haystack.count - needle.count
        while i < haystack.count {
            if i <= last, haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) {
                out += placeholder
                i += needle.count
            } else {
                out.append(haystack[i])
                i += 1
            }
        }
        return out
    }
}
