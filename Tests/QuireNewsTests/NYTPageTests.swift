import Foundation
import QuireFixtures
import QuireNews
import Testing

/// Wraps document JSON texts into a page body of the 2012–2024 envelope.
func page(_ docs: [String], meta: String = #""meta":{"hits":42,"offset":10,"time":5}"#) -> [UInt8] {
    Array(#"{"status":"OK","copyright":"c","response":{\#(meta),"docs":[\#(docs.joined(separator: ","))]}}"#.utf8)
}

/// A minimal valid document with `extra` members appended.
func doc(_ extra: String = "", id: String = #""_id":"4fd2ba9a8eb7c8105d8b0a8b""#) -> String {
    #"{\#(id),"web_url":"http://www.nytimes.com/2012/01/01/us/a.html""# + (extra.isEmpty ? "" : "," + extra) + "}"
}

@Suite struct NYTPageTests {
    @Test(arguments: NYTEra.allCases)
    func everyEraRoundTrips(era: NYTEra) throws {
        var generator = ArticleGenerator(seed: 2024)
        let articles = generator.articles(count: 40)
        for start in stride(from: 0, to: 40, by: 10) {
            let slice = Array(articles[start..<start + 10])
            let body = nytPageBody(articles: slice, hits: 40, page: start / 10, era: era)
            let parsed = try NYTArticleSearch.parsePage(body)
            #expect(parsed.hits == 40)
            #expect(parsed.offset == start)
            #expect(parsed.articles.count == 10)
            for (got, original) in zip(parsed.articles, slice) {
                #expect(got == nytRoundTrip(original, era: era))
            }
            // Each raw document is the exact bytes of one doc and maps to the same article.
            #expect(parsed.rawDocuments.count == 10)
            for (raw, article) in zip(parsed.rawDocuments, parsed.articles) {
                #expect(raw.first == UInt8(ascii: "{") && raw.last == UInt8(ascii: "}"))
                #expect(try NYTArticleSearch.articleMapping.decode(raw) == article)
            }
        }
    }

    @Test func erasWriteTheirQuirks() {
        var generator = ArticleGenerator(seed: 5)
        let articles = generator.articles(count: 30)
        func text(_ era: NYTEra) -> String { String(decoding: nytPageBody(articles: articles, hits: 30, page: 0, era: era), as: UTF8.self) }
        let t2016 = text(.era2016), t2019 = text(.era2019), t2025 = text(.era2025), t2012 = text(.era2012)
        #expect(t2016.contains(#"http:\/\/"#) || t2016.contains(#"https:\/\/"#))
        #expect(t2016.contains(#""word_count":""#))
        #expect(t2016.contains(#""byline":[]"#))
        #expect(t2016.contains(#"\u"#) && t2019.contains(#"\u"#))
        #expect(t2019.contains(#""legacy":[]"#) && t2019.contains(#""legacy":{}"#))
        #expect(t2019.contains("+0000\""))
        #expect(t2019.contains(#""url":"images/"#) && t2012.contains(#""url":"images/"#))
        #expect(t2025.contains(#""metadata":{"#) && !t2025.contains(#""meta":"#))
        #expect(t2025.contains(#""url":"https://static01.nyt.com/images/"#))
        #expect(t2012.contains(#""rank":""#))
        let empty = String(decoding: nytPageBody(articles: [], hits: 0, page: 3, era: .era2025), as: UTF8.self)
        #expect(empty.contains(#""docs":null"#))
    }

    @Test func generatedArticlesHaveRealisticSizeAndUnicode() throws {
        var generator = ArticleGenerator(seed: 1)
        let articles = generator.articles(count: 200)
        let encoder = JSONEncoder()
        let total = try articles.reduce(0) { $0 + (try encoder.encode($1)).count }
        let average = total / articles.count
        #expect((900...1700).contains(average), "average \(average) bytes")
        let allText = articles.compactMap(\.headline).joined() + articles.compactMap(\.abstract).joined()
        #expect(allText.unicodeScalars.contains { $0.value > 0xFFFF })  // emoji
        #expect(allText.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) })  // CJK
        #expect(allText.contains("“") || allText.contains("’"))
        #expect(Set(articles.map(\.id)).count == 200)
        #expect(articles.contains { $0.id.hasPrefix("nyt://article/") } && articles.contains { $0.id.count == 24 })
        #expect(articles.allSatisfy { $0.publishedAt.map { $0.timeIntervalSince1970.rounded() == $0.timeIntervalSince1970 } ?? true })
        var again = ArticleGenerator(seed: 1)
        #expect(again.article(index: 117) == articles[117])
        var other = ArticleGenerator(seed: 2)
        #expect(other.article(index: 117) != articles[117])
    }

    @Test func numbersAsStringsAndNumbersAsText() throws {
        let body = page([doc(#""word_count":"282","print_page":12,"keywords":[{"rank":"4","name":"subject","value":"X"},{"rank":2,"name":"persons","value":"Y"}],"multimedia":[{"url":"images/a.jpg","width":"190","height":"126","subtype":"wide","legacy":{"widewidth":"190"}}]"#)])
        let article = try #require(try NYTArticleSearch.parsePage(body).articles.first)
        #expect(article.wordCount == 282)
        #expect(article.printPage == "12")
        #expect(article.keywords == [Keyword(name: "subject", value: "X", rank: 4), Keyword(name: "persons", value: "Y", rank: 2)])
        #expect(article.multimedia == [Media(url: "https://static01.nyt.com/images/a.jpg", width: 190, height: 126, kind: "wide")])
    }

    @Test func nullAndMissingAndEmptyAreAbsent() throws {
        let body = page([
            doc(#""abstract":null,"snippet":"","lead_paragraph":null,"headline":{"main":"M","kicker":null,"seo":null},"news_desk":"","subsection_name":null,"word_count":null,"keywords":[],"multimedia":[],"byline":null,"print_page":null"#),
            doc(),
        ])
        let parsed = try NYTArticleSearch.parsePage(body)
        #expect(parsed.articles[0] == Article(id: "4fd2ba9a8eb7c8105d8b0a8b", url: "http://www.nytimes.com/2012/01/01/us/a.html", headline: "M"))
        #expect(parsed.articles[1] == Article(id: "4fd2ba9a8eb7c8105d8b0a8b", url: "http://www.nytimes.com/2012/01/01/us/a.html"))
        // Absent values are omitted from the dump, never written as "".
        let json = String(decoding: try JSONEncoder().encode(parsed.articles[0]), as: UTF8.self)
        #expect(!json.contains(#""""#) && !json.contains("abstract"))
    }

    @Test func bylineShapes() throws {
        let body = page([
            doc(#""byline":[]"#),
            doc(#""byline":{"person":[{"organization":"","role":"reported","rank":1}],"original":"By JOHN DOE"}"#),
            doc(#""byline":{"original":"By Jane Doe and Li Chen","person":[{"firstname":"Jane","middlename":null,"lastname":"Doe","rank":1},{"firstname":"Li","lastname":"Chen","rank":2}],"organization":null}"#),
            doc(#""byline":{"original":null}"#),
        ])
        let articles = try NYTArticleSearch.parsePage(body).articles
        #expect(articles[0].byline == nil && articles[0].authors == nil)
        #expect(articles[1].byline == "By JOHN DOE" && articles[1].authors == nil)
        #expect(articles[2].byline == "By Jane Doe and Li Chen" && articles[2].authors == ["Jane Doe", "Li Chen"])
        #expect(articles[3].byline == nil)
    }

    @Test func multimediaObjectOf2025AndLegacyShapes() throws {
        let body = page([
            doc(#""multimedia":{"caption":"Cap","credit":"Cred","default":{"url":"https://static01.nyt.com/images/2025/a.jpg","height":400,"width":600},"thumbnail":{"url":"https://static01.nyt.com/images/2025/t.jpg","height":75,"width":75}}"#),
            doc(#""multimedia":{"caption":"","credit":"","default":{"url":"","height":0,"width":0},"thumbnail":{"url":"","height":0,"width":0}}"#),
            doc(#""multimedia":[{"url":"images/x.jpg","legacy":[],"subtype":"xlarge","subType":"xlarge","caption":null},{"url":"/images/y.jpg","legacy":{},"type":"image"},{"legacy":{}}]"#),
            doc(#""multimedia":{}"#),
        ])
        let articles = try NYTArticleSearch.parsePage(body).articles
        #expect(articles[0].multimedia == [
            Media(url: "https://static01.nyt.com/images/2025/a.jpg", width: 600, height: 400, caption: "Cap", credit: "Cred", kind: "default"),
            Media(url: "https://static01.nyt.com/images/2025/t.jpg", width: 75, height: 75, kind: "thumbnail"),
        ])
        #expect(articles[1].multimedia == nil)
        #expect(articles[2].multimedia == [
            Media(url: "https://static01.nyt.com/images/x.jpg", kind: "xlarge"),
            Media(url: "https://static01.nyt.com/images/y.jpg", kind: "image"),
        ])
        #expect(articles[3].multimedia == nil)
    }

    @Test func metaOrMetadataAndNullDocs() throws {
        let modern = Array(#"{"status":"OK","response":{"docs":null,"metadata":{"hits":7,"offset":990,"time":3}}}"#.utf8)
        let parsed = try NYTArticleSearch.parsePage(modern)
        #expect(parsed.articles.isEmpty && parsed.rawDocuments.isEmpty)
        #expect(parsed.hits == 7 && parsed.offset == 990)
        let old = try NYTArticleSearch.parsePage(page([], meta: #""meta":{"hits":"15924121","offset":0}"#))
        #expect(old.hits == 15_924_121 && old.offset == 0)
        // Counters of another type are unknown; the page's documents still map.
        let odd = Array(#"{"status":"OK","response":{"docs":[{"_id":"a1","web_url":"https://x/a"}],"meta":{"hits":{"n":7},"offset":"ten"}}}"#.utf8)
        let mapped = try NYTArticleSearch.parsePage(odd)
        #expect(mapped.articles.map(\.id) == ["a1"] && mapped.hits == nil && mapped.offset == nil)
    }

    @Test func timestampFormsAndTopicPagesWithoutDate() throws {
        let body = page([
            doc(#""pub_date":"2012-01-01T18:46:02Z""#),
            doc(#""pub_date":"2012-01-01T18:46:02+0000""#),
            doc(#""pub_date":"2012-01-01T19:46:02+01:00""#),
            doc(#""pub_date":"2012-01-01T18:46:02.000Z""#),
            doc(#""document_type":"topic","type_of_material":"timestopic""#),
        ])
        let articles = try NYTArticleSearch.parsePage(body).articles
        let expected = Date(timeIntervalSince1970: 1_325_443_562)
        #expect(articles[0..<4].allSatisfy { $0.publishedAt == expected })
        #expect(articles[4].publishedAt == nil && articles[4].documentType == "topic")
    }

    @Test func idPrefersIDThenURIThenWebURLAndKeepsItByteExact() throws {
        let body = page([
            doc(id: #""_id":"nyt://article/0b0f1b5e-aaaa-5bbb-8ccc-0123456789ab","uri":"nyt://article/0b0f1b5e-aaaa-5bbb-8ccc-0123456789ab""#),
            doc(id: #""uri":"nyt://article/X","_id":"other""#),
            doc(id: #""uri":"nyt://article/Y","_id":"""#),
            doc(id: #""uri":"","_id":"5786a15c38f0d80e646b3a0b""#),
        ])
        let ids = try NYTArticleSearch.parsePage(body).articles.map(\.id)
        #expect(ids == ["nyt://article/0b0f1b5e-aaaa-5bbb-8ccc-0123456789ab", "other", "nyt://article/Y", "5786a15c38f0d80e646b3a0b"])
    }

    /// Character references are decoded (API_NOTES §3: `&rsquo;`, `&eacute;` in a 2020 caption):
    /// an entity's name is no word of the article. Unknown ones stay as written.
    @Test func highlightTagsAreRemovedEntitiesDecodedAndSurrogatesAndControlsKept() throws {
        let body = page([doc(#""headline":{"main":"  The <strong>Pulitzer Prize<\/strong> \ud83c\udf89 a < b &amp; c\n"},"snippet":"<strong>caf\u00e9<\/strong> &rsquo; \u2014 \u001b[2J &nosuch;","lead_paragraph":"x\ty\u0007","multimedia":[{"url":"images/a.jpg","caption":"Caf&eacute; &#8217;s","credit":"AT&amp;T"}]"#)])
        let article = try #require(try NYTArticleSearch.parsePage(body).articles.first)
        #expect(article.headline == "The Pulitzer Prize 🎉 a < b & c")
        #expect(article.snippet == "café ’ — \u{1b}[2J &nosuch;")
        #expect(article.leadParagraph == "x\ty\u{07}")
        #expect(article.multimedia?.first?.caption == "Café ’s" && article.multimedia?.first?.credit == "AT&T")
    }
}
