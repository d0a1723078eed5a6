import QuireNews

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

    /// A mapped page's text scrubbed again: mapping removes highlight tags and decodes escapes
    /// and character references, which joins a key the body held in pieces
    /// (`ASCIIs<strong>ecretKEY</strong>`) or in a form the byte scan does not read.
    func scrub<Checkpoint>(_ page: inout SourcePage<Checkpoint>) {
        guard let key else { return }
        let clean: (String) -> String = { key.scrub($0) }
        page.articles = page.articles.map { $0.withText(clean) }
        page.lists = page.lists.map { list in
            ArticleList(
                id: clean(list.id), title: list.title.map(clean), url: list.url.map(clean),
                articleDescription: list.articleDescription.map(clean), articleIDs: list.articleIDs.map(clean))
        }
        page.categories = page.categories.map { category in
            QuireNews.Category(
                id: category.id, displayName: category.displayName.map(clean),
                englishName: category.englishName.map(clean), urlName: category.urlName.map(clean))
        }
    }
}

extension Article {
    /// This article with `transform` applied to every text it holds (ids and URLs too).
    fileprivate func withText(_ transform: (String) -> String) -> Article {
        var copy = self
        copy.id = transform(id)
        for path in [\Article.url, \.headline, \.kicker, \.abstract, \.snippet, \.leadParagraph, \.source, \.sourceURL,
            \.section, \.subsection, \.newsDesk, \.printSection, \.printPage, \.documentType, \.typeOfMaterial, \.byline]
        {
            copy[keyPath: path] = self[keyPath: path].map(transform)
        }
        copy.authors = authors?.map(transform)
        copy.keywords = keywords?.map { Keyword(name: transform($0.name), value: transform($0.value), rank: $0.rank) }
        copy.multimedia = multimedia?.map { media in
            var media = media
            media.url = transform(media.url)
            media.caption = media.caption.map(transform)
            media.credit = media.credit.map(transform)
            media.kind = media.kind.map(transform)
            return media
        }
        return copy
    }
}
