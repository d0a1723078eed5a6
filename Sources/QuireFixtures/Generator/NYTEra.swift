public import QuireNews

/// The shapes of NYT Article Search responses over the years (see API_NOTES §2–3).
///
/// What each era's body cannot carry, and so loses in a generate → render → parse round trip
/// (``nytRoundTrip(_:era:)`` gives the expected result):
/// - `era2012`: `print_section`, `subsection_name`, author names (bylines list persons without
///   names), image captions and credits.
/// - `era2016`: `print_section`, image captions and credits.
/// - `era2019`: image captions and credits.
/// - `era2025`: author names (`byline` is `{original}` only); images collapse to one `default`
///   rendition (the first non-thumbnail image, with its caption and credit) and one `thumbnail`.
/// Image kinds missing from an article come back as `"image"` (the `type`) in the array eras.
public enum NYTEra: String, CaseIterable, Sendable {
    /// 2012–13: 24-hex `_id`, `…Z` dates, `word_count` a number, `rank` a string, `legacy` numbers.
    case era2012
    /// 2014–17: `word_count` a string, `byline` `[]` when empty, `abstract` null, `\/` and `\uXXXX`
    /// escapes, `legacy` sizes as strings.
    case era2016
    /// 2018–early 2025: `uri` beside `_id` (`nyt://article/…`), `+0000` dates, `legacy` `{}` or `[]`,
    /// `""` for empty `abstract`/`news_desk`, `\uXXXX` escapes, `subtype` and `subType`.
    case era2019
    /// Since April 2025: `response.metadata`, `docs: null` when empty, the multimedia object with
    /// absolute urls, `lead_paragraph` missing when empty, dates as `Z` or `+00:00`.
    case era2025
}

/// The article as `era`'s body carries it: what ``NYTArticleSearch/parsePage(_:)`` returns for
/// `article` after ``nytPageBody(articles:hits:page:era:)``.
public func nytRoundTrip(_ article: Article, era: NYTEra) -> Article {
    var expected = article
    // The mapping trims headlines and removes search highlighting from headlines and snippets.
    expected.headline = article.headline.map { NewsText.trimmed(NewsText.removingHighlightTags($0)) }.flatMap { $0.isEmpty ? nil : $0 }
    expected.snippet = article.snippet.map(NewsText.removingHighlightTags).flatMap { $0.isEmpty ? nil : $0 }
    switch era {
    case .era2012:
        expected.printSection = nil
        expected.subsection = nil
        expected.authors = nil
        expected.multimedia = article.multimedia.map { $0.map(withoutCaption) }
    case .era2016:
        expected.printSection = nil
        expected.multimedia = article.multimedia.map { $0.map(withoutCaption) }
    case .era2019:
        expected.multimedia = article.multimedia.map { $0.map(withoutCaption) }
    case .era2025:
        expected.authors = nil
        if let media = article.multimedia {
            let (main, thumbnail) = renditions2025(media)
            var images: [Media] = []
            if let main {
                images.append(Media(url: main.url, width: main.width, height: main.height, caption: main.caption, credit: main.credit, kind: "default"))
            }
            if let thumbnail {
                images.append(Media(url: thumbnail.url, width: thumbnail.width, height: thumbnail.height, kind: "thumbnail"))
            }
            expected.multimedia = images.isEmpty ? nil : images
        }
    }
    return expected
}

private func withoutCaption(_ media: Media) -> Media {
    Media(url: media.url, width: media.width, height: media.height, kind: media.kind ?? "image")
}

/// The 2025 object's `default` and `thumbnail` renditions chosen from an article's images.
func renditions2025(_ media: [Media]) -> (main: Media?, thumbnail: Media?) {
    let main = media.first { $0.kind != "thumbnail" } ?? media.first
    let thumbnail = media.first { $0.kind == "thumbnail" && $0 != main }
    return (main, thumbnail)
}
