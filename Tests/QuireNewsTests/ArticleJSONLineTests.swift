import Foundation
import QuireFixtures
import QuireNews
import Testing

/// `Article(jsonLine:)`, the reader `quire load` parses dump lines with.
@Suite struct ArticleJSONLineTests {
    private func read(_ text: String) throws(NewsMappingError) -> Article {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { (buffer) throws(NewsMappingError) in try Article(jsonLine: buffer) }
    }

    private func failure(_ text: String) -> NewsMappingError? {
        do {
            _ = try read(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsWhatJSONEncoderWritesInAnyMemberOrder() throws {
        var generator = ArticleGenerator(seed: 77)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]  // not the declaration order the fast path expects
        for index in 0..<300 {
            var article = generator.article(index: index)
            // Whole seconds: .iso8601 writes no fraction.
            article.publishedAt = article.publishedAt.map { Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down)) }
            let line = String(decoding: try encoder.encode(article), as: UTF8.self)
            #expect(try read(line) == article, "line \(index)")
        }
    }

    @Test func escapesWhitespaceAndNullsAreRead() throws {
        let line = #" { "id" : "a\/b" , "headline": "caf\u00e9 \ud83c\udf89 \"q\"", "kicker": null, "wordCount": 12, "#
            + #""keywords": [ {"name":"subject","value":"x","rank":2} ], "authors": [], "publishedAt": "2019-06-15T19:18:14+0000" } "#
        let article = try read(line)
        #expect(article.id == "a/b")
        #expect(article.headline == "café 🎉 \"q\"")
        #expect(article.kicker == nil)
        #expect(article.wordCount == 12)
        #expect(article.keywords == [Keyword(name: "subject", value: "x", rank: 2)])
        #expect(article.authors == [])
        #expect(article.publishedAt == Date(timeIntervalSince1970: 1_560_626_294))
    }

    @Test func badFieldsAreNamedWithTheirPath() {
        let cases: [(String, String, String)] = [
            (#"{"id":"x","wordCount":3.7}"#, "wordCount", "expected a whole number written without a fraction or an exponent, found 3.7"),
            (#"{"id":"x","wordCount":1e3}"#, "wordCount", "without a fraction or an exponent, found 1e3"),
            (#"{"id":"x","wordCount":99999999999999999999}"#, "wordCount", "99999999999999999999 is out of range"),
            (#"{"id":"x","headline":5}"#, "headline", "the number 5"),
            (#"{"id":""}"#, "id", "empty"),
            (#"{"id":7}"#, "id", "the number 7"),
            (#"{"id":"x","keywords":[{"name":"a","value":"b"},{"name":"a","value":"b","rank":2.5}]}"#, "keywords[1].rank", "2.5"),
            (#"{"id":"x","publishedAt":"yesterday"}"#, "publishedAt", "yesterday"),
            (#"{"id":"x","articleIDs":["a"]}"#, "articleIDs", "another collection"),
            (#"{"id":"x","multimedia":[{"width":3}]}"#, "multimedia[0].url", "missing"),
            (#"{"url":"y"}"#, "id", "missing"),
        ]
        for (line, path, text) in cases {
            let error = failure(line)
            #expect(error?.path == path, "\(line): \(String(describing: error))")
            #expect(error.map { "\($0)".contains(text) } == true, "\(line): \(String(describing: error))")
        }
    }

    /// The 64-bit edges are whole numbers: Int.min was "out of range (at most 19 digits)".
    @Test func theSixtyFourBitEdgesAreWholeNumbers() throws {
        for value in [Int.min, Int.max, -Int.max, 0] {
            let line = #"{"id":"x","wordCount":\#(value)}"#
            let article = try read(line)
            #expect(article.wordCount == value)
        }
        #expect(failure(#"{"id":"x","wordCount":-9223372036854775809}"#).map { "\($0)".contains("out of range") } == true)
        #expect(try JSONParser.parse(Array("-9223372036854775808".utf8)) == .int(Int.min))
        #expect(try JSONParser.parse(Array("-9223372036854775809".utf8)) == .double(-9_223_372_036_854_775_808.0))
    }

    @Test func brokenJSONIsAnErrorNotAPartialArticle() {
        for line in [#"{"id":"x""#, #"{"id":"x"} trailing"#, #"{"id":"x",}"#, "[1]", "", #"{"id":"x","headline":"a\qb"}"#] {
            #expect(failure(line) != nil, "\(line)")
        }
    }
}
