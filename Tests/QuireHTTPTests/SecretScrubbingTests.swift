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
        "Ab3+key\\/Zz",  // a slash JSON escapes
        "&#65;&#98;&#51;&#43;&#107;&#101;&#121;&#47;&#90;&#122;",  // HTML character references, decimal
        "Ab3&#x2b;key&#X2F;Zz",  // hexadecimal
        "&#x41;b3&#0043;KEY/zZ",  // mixed with case and leading zeros
        "&#0000000065;b3+key&#x000002f;Zz",  // as many digits as mapping decodes
        "\\u0026#65;b3+key\\u0026#X2F\\u003bZz",  // references whose characters are JSON escapes
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

    /// A key holding `%` sent percent-encoded is `%25…`: the `%` may be the key's own or start an
    /// encoding, and only one reading goes on to match (the first one tried was kept, and the
    /// echo was stored whole).
    @Test(arguments: ["Sk3y%2B%2F%3D%26x%2520", "sk3y%2b%2f%3d%26X%2520", "Sk3y+/=&amp;x%20", "Sk3y%2B/=&x%20"])
    func aKeyHoldingAPercentSignIsFoundInEveryEncoding(form: String) {
        let secret = "Sk3y+/=&x%20"
        #expect(URLRedaction.scrubSecret(secret, from: "echo: \(form) end") == "echo: REDACTED end")
    }

    /// A key holding a quote or a backslash, echoed inside a JSON string, is escaped there
    /// (`\"`, `\\`): found in that form too, and in the `\u0022` one.
    @Test func aKeyHoldingAQuoteOrABackslashIsFoundJSONEscaped() {
        let secret = #"abc"def\ghij"#
        for echoed in [#"abc\"def\\ghij"#, #"abc\u0022def\u005cghij"#, secret] {
            let body = Array(#"{"abstract":"The key was "#.utf8) + Array(echoed.utf8) + Array(#"."}"#.utf8)
            #expect(
                URLRedaction.scrubSecret(secret, fromBytes: body) == Array(#"{"abstract":"The key was REDACTED."}"#.utf8),
                "\(echoed)")
        }
    }

    /// A key with a character outside ASCII, echoed as JSON writes it (`\u00e9`), as a character
    /// reference, in the other letter case or percent-encoded: every form is found (the scan read
    /// `\u00e9` as the byte E9, never as é's two bytes, and such a key was stored and shown).
    @Test(arguments: [
        "clé-SECRET123", #"cl\u00e9-SECRET123"#, #"CL\u00C9-secret123"#, "cl&#233;-SECRET123", "cl&#xE9;-SECRET123",
        "CLÉ-SECRET123", "cl%C3%A9-SECRET123", #"cl\u00e9-SECRET\u0031\u00323"#,
    ])
    func aKeyOutsideASCIIIsFoundInEveryForm(form: String) {
        #expect(URLRedaction.scrubSecret("clé-SECRET123", from: "bad key \(form).") == "bad key REDACTED.")
    }

    /// Above U+FFFF JSON writes a surrogate pair; a tab or a line break is a letter escape.
    @Test func surrogatePairsAndControlEscapesAreFound() {
        #expect(URLRedaction.scrubSecret("k😀y9", from: #"echo k\ud83d\ude00y9 end"#) == "echo REDACTED end")
        #expect(URLRedaction.scrubSecret("ab\tcd\n9", from: #"{"m":"ab\tcd\n9"}"#) == #"{"m":"REDACTED"}"#)
        // Another character is not the key.
        #expect(URLRedaction.scrubSecret("clé-SECRET123", from: #"cl\u00e8-SECRET123"#) == #"cl\u00e8-SECRET123"#)
    }

    @Test func spacesAsPlusAndOtherTextAreKept() {
        #expect(URLRedaction.scrubSecret("my key", from: "q=my+key&x=my%20key") == "q=REDACTED&x=REDACTED")
        #expect(URLRedaction.scrubSecret("secret", from: "no secre t here") == "no secre t here")
        #expect(URLRedaction.scrubSecret("", from: "anything") == "anything")
        // Non-ASCII text around a match stays intact.
        #expect(URLRedaction.scrubSecret("k3y", from: "ünïcode K3Y façade") == "ünïcode REDACTED façade")
    }

    /// A key is cut out as a whole token only, so a short one leaves words, numbers and JSON
    /// names that merely contain it alone.
    @Test func aKeyIsCutOutAsAWholeTokenOnly() {
        #expect(URLRedaction.scrubSecret("e", from: "search response: required value") == "search response: required value")
        #expect(URLRedaction.scrubSecret("doe", from: "does doe Doe") == "does REDACTED REDACTED")
        let body = Array(#"{"byline":"By Jane Does","n":"+00001","xlarge":"doe","u":"x?api-key=DOE&y"}"#.utf8)
        #expect(URLRedaction.scrubSecret("x", fromBytes: Array(#"{"kind":"xlarge","n":"4x4"}"#.utf8)) == Array(#"{"kind":"xlarge","n":"4x4"}"#.utf8))
        #expect(URLRedaction.scrubSecret("doe", fromBytes: body) == Array(#"{"byline":"By Jane Does","n":"+00001","xlarge":"REDACTED","u":"x?api-key=REDACTED&y"}"#.utf8))
        // Encoded neighbours are read as what they spell: `%3D` is `=`, `%41` is a letter.
        #expect(URLRedaction.scrubSecret("k3y", from: "a%3Dk3y%26b %253Dk3y %41k3y k3y%41") == "a%3DREDACTED%26b %253DREDACTED %41k3y k3y%41")
        // After a JSON escape (a line break, a quote mark, a typographic apostrophe) a key still
        // starts a token; after an escaped backslash, the letter is a letter.
        #expect(URLRedaction.scrubSecret("k3y", fromBytes: Array(#""a\nk3y \u2019k3y \"k3y \u0041k3y \\nk3y""#.utf8))
            == Array(#""a\nREDACTED \u2019REDACTED \"REDACTED \u0041k3y \\nk3y""#.utf8))
        // A slash the JSON escapes.
        #expect(URLRedaction.scrubSecret("Zk3y+/=&xQ", fromBytes: Array(#""a Zk3y+\/=&xQ b""#.utf8)) == Array(#""a REDACTED b""#.utf8))
    }
}
