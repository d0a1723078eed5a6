import Testing

@testable import QuireHTTP

@Suite struct SecretScrubbingTests {
    static let secret = "Ab3+key/Zz"

    @Test(arguments: [
        "Ab3+key/Zz",  // literal
        "ab3+key/zz",  // lower-cased
        "AB3+KEY/ZZ",  // upper-cased
        "Ab3%2Bkey%2FZz",  // percent-encoded, upper hex
        "ab3%2bkey%2fzz",  // percent-encoded, lower hex, lower-cased
        "%41%62%33%2B%6B%65%79%2F%5A%7A",  // every byte encoded
        "Ab3%252Bkey%252FZz",  // double-encoded
        "Ab3\\u002bkey\\u002FZz",  // JSON escapes
    ])
    func everyFormOfTheKeyIsScrubbed(form: String) {
        let text = "error: bad key \(form) in https://h/p?q=1&k=\(form)\r\n"
        let scrubbed = URLRedaction.scrubSecret(Self.secret, from: text)
        #expect(scrubbed == "error: bad key REDACTED in https://h/p?q=1&k=REDACTED\r\n")
        #expect(URLRedaction.containsSecret(Self.secret, in: text))
        #expect(!URLRedaction.containsSecret(Self.secret, in: scrubbed))
        let bytes = URLRedaction.scrubSecret(Self.secret, fromBytes: Array(text.utf8))
        #expect(bytes == Array(scrubbed.utf8))
    }

    @Test func spacesAsPlusAndOtherTextAreKept() {
        #expect(URLRedaction.scrubSecret("my key", from: "q=my+key&x=my%20key") == "q=REDACTED&x=REDACTED")
        #expect(URLRedaction.scrubSecret("secret", from: "no secre t here") == "no secre t here")
        #expect(URLRedaction.scrubSecret("", from: "anything") == "anything")
        // Non-ASCII text around a match stays intact.
        #expect(URLRedaction.scrubSecret("k3y", from: "ünïcode K3Y façade") == "ünïcode REDACTED façade")
    }
}
