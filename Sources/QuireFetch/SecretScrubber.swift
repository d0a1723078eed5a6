/// Blanks an API key out of a response body before it is mapped, so that nothing a page keeps
/// (articles, raw documents for remapping, rejects, their messages) holds it, in every form a
/// server may echo it (``APIKey/scrub(bytes:)``: as a whole token, in any letter case,
/// percent-encoded or JSON-escaped; a word that merely contains the key is left alone).
struct SecretScrubber: Sendable {
    private let key: APIKey?

    init(_ key: APIKey?) {
        self.key = key.flatMap { $0.value.isEmpty ? nil : $0 }
    }

    func scrub(_ bytes: [UInt8]) -> [UInt8] { key?.scrub(bytes: bytes) ?? bytes }
}
