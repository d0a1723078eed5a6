import QuireFixtures
import Testing

@testable import QuireNews

@Suite struct JSONParserTests {
    func parse(_ text: String) throws(NewsMappingError) -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    @Test func parsesAllValueKinds() throws {
        let value = try parse(#" {"a": [1, -2, 3.5, 1e3, true, false, null, "x"], "b": {}} "#)
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        #expect(object["a"] == .array([.int(1), .int(-2), .double(3.5), .double(1000), .bool(true), .bool(false), .null, .string("x")]))
        guard case .object(let empty)? = object["b"] else { Issue.record("b"); return }
        #expect(empty.isEmpty && empty.byteRange == 55..<57)
    }

    @Test func decodesEscapesSurrogatePairsAndSlashes() throws {
        let value = try parse(#"["http:\/\/x.com\/a", "caf\u00e9 \u2019 \ud83c\udf89 \"q\" \\ \n\t", "\u6771\u4eac"]"#)
        #expect(value == .array([.string("http://x.com/a"), .string("café ’ 🎉 \"q\" \\ \n\t"), .string("東京")]))
    }

    @Test func keepsRawUTF8ByteExact() throws {
        let text = "Zoë — “Noël” 🎉 <strong>x</strong> &eacute;"
        let value = try parse("\"\(text)\"")
        #expect(value == .string(text))
    }

    @Test(arguments: [
        (#"["\ud83c"]"#, "unpaired surrogate"),
        (#"["\udf89"]"#, "unpaired surrogate"),
        (#"["\x"]"#, "invalid escape"),
        (#"[1,]"#, "unexpected character ']'"),
        (#"{"a" 1}"#, "expected ':' after a member name"),
        (#"[1] 2"#, "unexpected data after the document"),
        (#"[tru]"#, "invalid literal"),
        ("[\"a\u{01}\"]", "control character in a string"),
    ])
    func rejectsMalformedInput(text: String, reason: String) {
        #expect {
            try parse(text)
        } throws: { error in
            guard let error = error as? NewsMappingError, case .malformedJSON(_, let found) = error.kind else { return false }
            return found == reason
        }
    }

    @Test func reportsOffsetAndPathOfMalformedValue() {
        do {
            _ = try parse(#"{"response": {"docs": [{"a": 1}, {"b": tru3}]}}"#)
            Issue.record("no error")
        } catch {
            #expect(error.kind == .malformedJSON(offset: 42, reason: "invalid literal"))
            #expect(error.path == "response.docs[1].b")
        }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: NewsMappingError.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    /// Strings are accepted exactly when the standard library finds their bytes well-formed, and
    /// read as it reads them: short ones and long ones (which the validator checks sixteen bytes a
    /// step), with the odd sequence at the start, in the middle and at the end.
    @Test func acceptsExactlyWellFormedUTF8() throws {
        let sequences: [[UInt8]] = [
            [0xC3, 0xA9], [0xE2, 0x80, 0x94], [0xF0, 0x9F, 0x8E, 0x89], [0xE4, 0xB8, 0xAD],  // é — 🎉 中
            [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0xAF],  // overlong, surrogate
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0x80], [0xBF, 0x41], [0xE2, 0x82], [0xF0, 0x9F, 0x8E],  // past U+10FFFF, stray, cut
            [0xFF], [0xC3, 0x28],
        ]
        let filler = Array("Storm surge reaches the coast ".utf8)
        for odd in sequences {
            for (before, after) in [([], []), (filler, []), ([], filler), (filler, filler), (Array(filler.prefix(3)), [])] {
                let content = before + odd + after
                let expected = String(validating: content, as: UTF8.self)
                let parsed = try? JSONParser.parse([0x22] + content + [0x22])
                #expect(parsed == expected.map { JSONValue.string($0) }, "\(content)")
            }
        }
    }

    @Test func enforcesDepthLimit() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect {
            try parse(deep)
        } throws: { error in
            guard let error = error as? NewsMappingError, case .depthLimitExceeded = error.kind else { return false }
            return true
        }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        _ = try parse(fine)
    }

    @Test func emptyBodyIsItsOwnError() {
        #expect(throws: NewsMappingError(.emptyBody)) { try parse("  \n") }
    }

    /// Every prefix of a real body must throw (never crash, never succeed), and cuts inside the
    /// document are reported as truncation.
    @Test(arguments: NYTEra.allCases)
    func truncatedBodiesAlwaysThrow(era: NYTEra) {
        var generator = ArticleGenerator(seed: 7)
        let body = nytPageBody(articles: generator.articles(count: 3), hits: 3, page: 0, era: era)
        var cut = 0
        while cut < body.count {
            let prefix = Array(body[..<cut])
            do {
                _ = try JSONParser.parse(prefix)
                Issue.record("prefix of \(cut) bytes parsed")
            } catch {
                switch error.kind {
                case .truncated(let offset): #expect(offset == cut)
                case .emptyBody: #expect(cut == 0)
                default: Issue.record("cut \(cut): \(error)")
                }
            }
            do {
                _ = try NYTArticleSearch.parsePage(prefix)
                Issue.record("page prefix of \(cut) bytes parsed")
            } catch {}
            cut += cut < 200 ? 1 : 7
        }
    }

    @Test func objectsRememberTheirBytes() throws {
        let text = #"{"docs":[ {"a":"\u00e9"} , {"b":[1,2]}]}"#
        let bytes = Array(text.utf8)
        guard case .object(let root) = try JSONParser.parse(bytes), case .array(let docs)? = root["docs"],
            case .object(let second) = docs[1]
        else { Issue.record("shape"); return }
        #expect(String(decoding: bytes[second.byteRange], as: UTF8.self) == #"{"b":[1,2]}"#)
    }
}
