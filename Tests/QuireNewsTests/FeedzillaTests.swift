import Foundation
import QuireFixtures
import QuireNews
import Testing

@Suite struct FeedzillaTests {
    @Test func categoriesRoundTripWithEmptyNamesAsNil() throws {
        let generator = ArticleGenerator(seed: 1)
        let categories = (0..<9).map { generator.category(index: $0) }
        #expect(categories.contains { $0.displayName == nil })
        #expect(try Feedzilla.parseCategories(feedzillaCategoriesBody(categories)) == categories)
        let documented = Array(#"[{"category_id":1314,"display_category_name":"","english_category_name":"Sports","url_category_name":""}]"#.utf8)
        #expect(try Feedzilla.parseCategories(documented) == [Category(id: 1314, englishName: "Sports")])
    }

    /// A summary of markup alone is no summary: it was stored as `"abstract": ""`.
    @Test func aSummaryOfMarkupAloneIsNone() throws {
        let stories = ["&lt;p&gt;&lt;/p&gt;", "&lt;br/&gt; ", "kept &lt;br/&gt;"].enumerated().map { i, summary in
            #"{"title":"t","summary":"\#(summary)","publish_date":"Tue, 05 Oct 2010 14:11:00 +0100","url":"http://news.feedzilla.com/en_us/stories/a/\#(1000 + i)"}"#
        }
        let page = try Feedzilla.parseArticleList(Array((#"{"articles":["# + stories.joined(separator: ",") + "]}").utf8), categoryID: 1)
        #expect(page.articles.map(\.abstract) == [nil, nil, "kept "])
    }

    @Test func categoryErrorsNameTheirPath() {
        #expect(throws: NewsMappingError(.missingField, at: [.index(1), .key("category_id")])) {
            try Feedzilla.parseCategories(Array(#"[{"category_id":1},{"english_category_name":"x"}]"#.utf8))
        }
        #expect(throws: NewsMappingError(.html)) { try Feedzilla.parseCategories(Array("<error><statuscode>400</statuscode></error>".utf8)) }
    }

    @Test func articleListRoundTrips() throws {
        var generator = ArticleGenerator(seed: 99)
        let articles = generator.articles(count: 20)
        let body = feedzillaArticleListBody(categoryID: 1314, articles: articles, requestQuery: "count=20&client_source=api&format=json")
        #expect(String(decoding: body, as: UTF8.self).contains(#"http:\/\/news.feedzilla.com\/en_us\/stories\/"#))
        #expect(String(decoding: body, as: UTF8.self).contains(" +0100\""))
        let page = try Feedzilla.parseArticleList(body, categoryID: 1314)
        let (list, parsed) = (page.list, page.articles)
        #expect(parsed == articles.map { feedzillaRoundTrip($0, categoryID: 1314) })
        #expect(list == feedzillaExpectedList(categoryID: 1314, articles: articles))
        #expect(list.articleIDs == parsed.map(\.id))
        #expect(parsed.allSatisfy { !($0.url ?? "?").contains("?") })
    }

    @Test func identityIgnoresQueryStringAndCategory() throws {
        var generator = ArticleGenerator(seed: 4)
        let articles = generator.articles(count: 5)
        let first = try Feedzilla.parseArticleList(
            feedzillaArticleListBody(categoryID: 26, articles: articles, requestQuery: "count=5&client_source=api&format=json"), categoryID: 26)
        let second = try Feedzilla.parseArticleList(
            feedzillaArticleListBody(categoryID: 1314, articles: articles.reversed(), requestQuery: "q=michael&client_source=api&format=json"),
            categoryID: 1314)
        #expect(Set(first.articles.map(\.id)) == Set(second.articles.map(\.id)))
        #expect(first.list.id != second.list.id)
        #expect(Feedzilla.storyID(forURL: "http://news.feedzilla.com/en_us/stories/top-news/162318929?count=2&client_source=api&format=json")
            == "feedzilla:162318929")
        #expect(Feedzilla.storyID(forURL: "http://news.feedzilla.com/en_us/stories/sports/162318929?q=x") == "feedzilla:162318929")
        #expect(Feedzilla.storyID(forURL: "https://Example.com/a/b/#f") == "feedzilla:example.com/a/b")
        // A URL that ends at the category has no story: not the category's one story.
        #expect(Feedzilla.storyID(forURL: "http://news.feedzilla.com/en_us/stories/sports/") == "feedzilla:news.feedzilla.com/en_us/stories/sports")
    }

    /// Only a Feedzilla story URL's query echoes the request: elsewhere it names the story.
    @Test func storiesWhoseURLsDifferOnlyInTheirQueryAreTwoArticles() throws {
        let text = #"{"articles":[{"url":"http://example.com/story.php?id=1","title":"One"},{"url":"http://example.com/story.php?id=2#top","title":"Two"},{"url":"https://www.youtube.com/watch?v=abc","title":"Video"}]}"#
        let page = try Feedzilla.parseArticleList(Array(text.utf8), categoryID: 3)
        #expect(page.articles.map(\.id) == ["feedzilla:example.com/story.php?id=1", "feedzilla:example.com/story.php?id=2", "feedzilla:www.youtube.com/watch?v=abc"])
        #expect(page.articles.map(\.url) == ["http://example.com/story.php?id=1", "http://example.com/story.php?id=2", "https://www.youtube.com/watch?v=abc"])
        #expect(page.rejects.isEmpty)
    }

    /// A story listed twice appears once, in its first place, as its last copy (the last seen
    /// wins, as everywhere else).
    @Test func duplicateStoriesInOneListAppearOnce() throws {
        let text = #"{"articles":[{"url":"http:\/\/news.feedzilla.com\/en_us\/stories\/a\/1?x=1","title":"T"},{"url":"http://x/stories/a/2","title":"Other"},{"url":"http://news.feedzilla.com/en_us/stories/b/1?x=2","title":"T2"}],"title":"L"}"#
        let page = try Feedzilla.parseArticleList(Array(text.utf8), categoryID: 3)
        let (list, articles) = (page.list, page.articles)
        #expect(articles.map(\.headline) == ["T2", "Other"])
        #expect(page.rawDocuments.count == 2 && String(decoding: page.rawDocuments[0], as: UTF8.self).contains("T2"))
        #expect(list.articleIDs == ["feedzilla:1", "feedzilla:2"] && list.title == "L" && list.url == nil)
    }

    /// Stories whose URLs differ only in how an accent is written are two stories, as the store
    /// tells their ids apart: the list's dedup compared `String`s and kept one.
    @Test func storiesWhoseURLsAreCanonicallyEquivalentAreTwo() throws {
        let text = #"{"articles":[{"url":"http://x.example/caf\u00e9","title":"A"},{"url":"http://x.example/cafe\u0301","title":"B"}]}"#
        let page = try Feedzilla.parseArticleList(Array(text.utf8), categoryID: 1)
        #expect(page.articles.map(\.headline) == ["A", "B"])
        #expect(Set(page.articles.map { Array($0.id.utf8) }).count == 2)
    }

    @Test func rfc822OffsetIsHonouredAndBadDateIsQuarantinedWithItsPath() throws {
        let text = #"{"articles":[{"url":"http://x/stories/a/1","publish_date":"Tue, 05 Oct 2010 14:11:00 +0100"},{"url":"http://x/stories/a/2","publish_date":"Tue, 05 Oct 2010 14:11"}]}"#
        let mixed = try Feedzilla.parseArticleList(Array(text.utf8), categoryID: 1)
        #expect(mixed.articles.map(\.id) == ["feedzilla:1"])
        #expect(mixed.rejects.map(\.error) == [
            NewsMappingError(.invalidDate("Tue, 05 Oct 2010 14:11"), at: [.key("articles"), .index(1), .key("publish_date")])
        ])
        #expect(mixed.rejects.first?.rawDocument == Array(#"{"url":"http://x/stories/a/2","publish_date":"Tue, 05 Oct 2010 14:11"}"#.utf8))
        // A url of white space only names no story: a reject, not an article under "feedzilla:".
        let blank = try Feedzilla.parseArticleList(Array(#"{"articles":[{"url":"  \n"},{"url":"http://x/stories/a/3"}]}"#.utf8), categoryID: 1)
        #expect(blank.articles.map(\.id) == ["feedzilla:3"])
        #expect(blank.rejects.map(\.error.path) == ["articles[0].url"])
        let good = #"{"articles":[{"url":"http://x/stories/a/1","publish_date":"Tue, 05 Oct 2010 14:11:00 +0100"}]}"#
        let article = try #require(try Feedzilla.parseArticleList(Array(good.utf8), categoryID: 1).articles.first)
        #expect(article.publishedAt == Date(timeIntervalSince1970: 1_286_284_260))
    }

    /// Entity-encoded HTML becomes text whose words stay apart at line breaks and block edges,
    /// without a script's or a style's content; highlighting tags alone are removed in place.
    @Test func encodedHTMLBecomesTextWithItsWordsApart() {
        let summary = "&lt;p&gt;para&lt;br/&gt;two&lt;/p&gt;&lt;script&gt;evil()&lt;/script&gt;&lt;div&gt;three&lt;/div&gt;"
        #expect(NewsText.plainTextFromEncodedHTML(summary) == "para two three")
        #expect(NewsText.removingAllTags("a<b>bold</b>c<STYLE>p { x: 1 }</style><br>d") == "aboldc d")
        #expect(NewsText.removingAllTags("5 < 6 and <script>never closed") == "5 < 6 and ")
        #expect(NewsText.removingHighlightTags("<strong>Storm</strong><br>s") == "Storm<br>s")
        #expect(NewsText.plainTextFromEncodedHTML("Hi &amp; bye") == "Hi & bye")
        // &#128;–&#159; are windows-1252's characters, as HTML reads them, not C1 controls.
        #expect(NewsText.decodingEntities("&#x9b;&#150;&#x80;&#x81;") == "›–€\u{81}")
        // Digits only, as HTML reads them: a sign is no reference (the key scrubber reads them so).
        #expect(NewsText.decodingEntities("&#+75;&#x+4b;&#-1;&#75;") == "&#+75;&#x+4b;&#-1;K")
    }

    /// A stray closing `</script>` or `</style>` is a tag, not the start of content to drop (the
    /// rest of the text was lost); removing a tag does not leave a new one made of the text on
    /// either side of it.
    @Test func strayClosingTagsAndTagsMadeByRemovalAreText() {
        #expect(NewsText.plainTextFromEncodedHTML("before &lt;/style&gt; after") == "before  after")
        #expect(NewsText.removingAllTags("one</script>two</STYLE>three") == "onetwothree")
        let crafted = "&lt;scr&lt;b&gt;ipt&gt;alert(1)&lt;/scr&lt;i&gt;ipt&gt; done"
        #expect(NewsText.plainTextFromEncodedHTML(crafted) == " done")
        #expect(NewsText.removingAllTags("<<b>b>x<</b>/b>") == "x")
        // Nesting past the passes' bound is left as text, never more work than the bound.
        let deep = String(repeating: "<", count: 20) + "b>" + String(repeating: "b>", count: 19) + "y"
        #expect(NewsText.removingAllTags(deep).hasSuffix("y"))
    }
}
