import QuireHTTP
import Testing

/// A body in a declared charset other than UTF-8 reaches the parsers as UTF-8: an old API's
/// ISO-8859-1 accents quarantined every document holding one ("invalid UTF-8").
@Suite struct CharsetTests {
    private func response(_ body: [UInt8], contentType: String?) -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: contentType.map { [("Content-Type", $0)] } ?? [], body: body,
            effectiveURL: "http://127.0.0.1/")
    }

    @Test func aDeclaredCharsetIsTranscodedToUTF8() {
        let latin1: [UInt8] = Array(#"{"title":"Caf"#.utf8) + [0xE9] + Array(#""}"#.utf8)
        let declared = response(latin1, contentType: "application/json; charset=ISO-8859-1")
        #expect(declared.declaredCharset == "iso-8859-1")
        #expect(declared.utf8Body == Array(#"{"title":"Café"}"#.utf8))
        let quoted = response([0x93, 0x41, 0x94], contentType: #"text/javascript;Charset="windows-1252""#)
        #expect(quoted.utf8Body == Array("“A”".utf8))
    }

    /// ISO-8859-1 and ASCII labels are read as windows-1252, as browsers read them: 0x80–0x9F
    /// are the euro sign, quotes and dashes, not C1 controls (0x9B stored as U+009B was a CSI
    /// to a terminal). The five bytes cp1252 leaves undefined fall back to Latin-1.
    @Test func latin1AndASCIILabelsAreReadAsWindows1252() {
        let body: [UInt8] = [0x80, 0x20, 0x9B, 0x96, 0xE9]
        for label in ["ISO-8859-1", "latin1", "us-ascii"] {
            #expect(response(body, contentType: "application/json; charset=\(label)").utf8Body == Array("€ ›–é".utf8), "\(label)")
        }
        let undefined = response([0x41, 0x81, 0x93], contentType: "text/plain; charset=iso-8859-1")
        #expect(undefined.utf8Body == Array("A\u{81}\u{93}".utf8))
    }

    /// UTF-16 of ASCII text is valid UTF-8 too, NUL bytes between the letters: it was taken as
    /// UTF-8 mislabelled, so an error body quoting the key escaped the scrubber, one NUL a letter.
    @Test func utf16OfASCIITextIsTranscoded() {
        let text = "Invalid key: ABC"
        let utf16le = text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(response(utf16le, contentType: "text/plain; charset=utf-16le").utf8Body == Array(text.utf8))
    }

    @Test func utf8NoCharsetAndUnknownCharsetsPassUnchanged() {
        let bytes: [UInt8] = [0x7B, 0xE9, 0x7D]
        #expect(response(bytes, contentType: nil).utf8Body == bytes)
        #expect(response(bytes, contentType: "application/json").utf8Body == bytes)
        #expect(response(bytes, contentType: "application/json; charset=utf-8").utf8Body == bytes)
        #expect(response(bytes, contentType: "application/json; charset=no-such-charset").utf8Body == bytes)
        // UTF-8 labelled ISO-8859-1 by a server's default: taken as it is, not turned into mojibake.
        let utf8 = Array(#"{"title":"Café"}"#.utf8)
        #expect(response(utf8, contentType: "application/json; charset=ISO-8859-1").utf8Body == utf8)
        // Bytes that are not in the declared charset: left for the parser to report.
        #expect(response([0xFF, 0xFE, 0x41], contentType: "application/json; charset=shift_jis").utf8Body == [0xFF, 0xFE, 0x41])
    }
}
