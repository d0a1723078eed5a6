import QuireNews

/// Blanks an API key out of what came back from a server before it is kept (raw documents for
/// remapping, rejects, messages), in every form a server may echo it (``APIKey/scrub(bytes:)``:
/// any letter case, percent-encoded, JSON-escaped).
struct SecretScrubber: Sendable {
    private let key: APIKey?

    init(_ key: APIKey?) {
        self.key = key.flatMap { $0.value.isEmpty ? nil : $0 }
    }

    func scrub(_ bytes: [UInt8]) -> [UInt8] { key?.scrub(bytes: bytes) ?? bytes }

    func scrub(_ text: String) -> String { key?.scrub(text) ?? text }

    func scrub(_ reject: DocumentReject) -> DocumentReject {
        guard key != nil else { return reject }
        var copy = reject
        copy.rawDocument = scrub(reject.rawDocument)
        return copy
    }
}
