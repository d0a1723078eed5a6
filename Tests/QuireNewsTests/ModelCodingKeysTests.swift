import Foundation
import QuireNews
import Testing

/// `Article` and `Media` spell out their coding keys (the compact positions are their raw values).
/// Their JSON must carry every stored property under its own name, and nothing else.
@Suite struct ModelCodingKeysTests {
    let media = Media(url: "https://example.com/a.jpg", width: 600, height: 400, caption: "c", credit: "k", kind: "wide")
    var article: Article {
        Article(
            id: "i", url: "https://example.com/a", headline: "h", kicker: "k", abstract: "a", snippet: "s",
            leadParagraph: "l", source: "src", sourceURL: "https://example.com", publishedAt: Date(timeIntervalSince1970: 86_400),
            section: "se", subsection: "su", newsDesk: "n", printSection: "ps", printPage: "pp", documentType: "d",
            typeOfMaterial: "t", wordCount: 7, byline: "b", authors: ["x"], keywords: [Keyword(name: "n", value: "v", rank: 1)],
            multimedia: [media])
    }

    func jsonKeys<T: Encodable>(_ value: T) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
        return Set(try #require(object as? [String: Any]).keys)
    }

    /// Every stored property, by reflection, so a property added later is covered too.
    func propertyNames(_ value: Any) -> Set<String> {
        Set(Mirror(reflecting: value).children.compactMap(\.label))
    }

    @Test func articleJSONHasEveryPropertyAndNothingElse() throws {
        #expect(try jsonKeys(article) == propertyNames(article))
        #expect(propertyNames(article).count == 22)
        let data = try JSONEncoder().encode(article)
        #expect(try JSONDecoder().decode(Article.self, from: data) == article)
    }

    @Test func mediaJSONHasEveryPropertyAndNothingElse() throws {
        #expect(try jsonKeys(media) == propertyNames(media))
        #expect(propertyNames(media).count == 6)
        #expect(try JSONDecoder().decode(Media.self, from: JSONEncoder().encode(media)) == media)
    }
}
