import Foundation
public import QuireNews

/// A deterministic generator of realistic articles.
///
/// The same seed and index always give the same article, whatever the call order. Articles have
/// NYT-like sizes (≈1.2 KB as compact JSON), mixed unicode (accents, CJK, emoji, curly quotes,
/// dashes), whole-second publication dates between 2012 and mid-2025, and ids that are either 24 hex
/// digits or `nyt://article/<uuid>`. Optional fields are sometimes absent, never `""`.
public struct ArticleGenerator: Sendable {
    /// The seed.
    public let seed: UInt64

    /// A generator for `seed`.
    public init(seed: UInt64) { self.seed = seed }

    static let firstDate = 1_325_376_000  // 2012-01-01T00:00:00Z
    static let lastDate = 1_751_328_000  // 2025-07-01T00:00:00Z

    static let sections: [(name: String, slug: String, desk: String, subsections: [String])] = [
        ("World", "world", "Foreign", ["Europe", "Asia Pacific", "Africa", "Americas"]),
        ("U.S.", "us", "National", ["Politics", "Elections"]),
        ("Business Day", "business", "Business", ["DealBook", "Economy"]),
        ("Arts", "arts", "Culture", ["Music", "Television", "Design"]),
        ("Opinion", "opinion", "OpEd", ["Sunday Review"]),
        ("Sports", "sports", "Sports", ["Soccer", "Tennis"]),
        ("Science", "science", "Science", []),
        ("Food", "dining", "Dining", []),
        ("Front Page; U.S.", "us", "National Desk", []),
    ]
    static let words = [
        "city", "council", "budget", "river", "election", "market", "energy", "school", "museum", "harbor",
        "minister", "festival", "climate", "court", "village", "orchestra", "startup", "strike", "garden", "bridge",
        "league", "vaccine", "satellite", "archive", "novel", "kitchen", "railway", "summit", "island", "studio",
    ]
    static let flavour = [
        "café", "naïve", "São Paulo", "Zürich", "Kraków", "Brontë", "Ibáñez", "Malmö", "東京", "北京", "서울",
        "Москва", "القاهرة", "🎉", "🌍", "📈", "“quoted”", "‘single’", "—", "…", "½", "Noël", "façade",
    ]
    static let firstNames = ["Jane", "Kenji", "María", "Olu", "Zoë", "Søren", "Amélie", "Li", "David", "Chloé", "Ana"]
    static let middleNames = ["M.", "J.", "de la", "R."]
    static let lastNames = ["Doe", "Tanaka", "García", "Okafor", "Björk", "Nguyễn", "Dupont", "Chen", "Müller", "O’Brien"]
    static let keywordNames = ["subject", "persons", "glocations", "organizations", "creative_works"]
    static let materials = ["News", "Op-Ed", "Review", "Blog", "Interview", "Obituary (Obit)"]
    static let kinds = ["xlarge", "wide", "articleLarge", "superJumbo"]

    /// The article at `index`.
    public mutating func article(index: Int) -> Article {
        var rng = SplitMix64(seed: seed ^ (UInt64(truncatingIfNeeded: index) &* 0xD6E8_FEB8_6659_FD93))
        _ = rng.next()
        let section = rng.pick(Self.sections)
        let seconds = Self.firstDate + rng.below(Self.lastDate - Self.firstDate)
        let published = Date(timeIntervalSince1970: Double(seconds))
        let day = NYTDay(date: published)

        let id: String
        if rng.chance(50) {
            id = (0..<24).map { _ in String(rng.below(16), radix: 16) }.joined()
        } else {
            let hex = (0..<32).map { _ in String(rng.below(16), radix: 16) }
            let uuid = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { hex[$0].joined() }.joined(separator: "-")
            id = "nyt://article/\(uuid)"
        }

        func sentence(_ count: Int) -> String {
            var parts: [String] = []
            for position in 0..<count {
                var word = rng.pick(Self.words)
                if position == 0 { word = word.prefix(1).uppercased() + word.dropFirst() }
                parts.append(word)
                if rng.chance(18) { parts.append(rng.pick(Self.flavour)) }
            }
            return parts.joined(separator: " ") + "."
        }

        var headline = sentence(5 + rng.below(5))
        headline.removeLast()
        if rng.chance(10) { headline = "The <strong>\(rng.pick(Self.words))</strong> " + headline }
        let slugWords = (0..<4).map { _ in rng.pick(Self.words) }.joined(separator: "-")
        let url = "https://www.nytimes.com/\(pad(day.year, 4))/\(pad(day.month, 2))/"
            + "\(pad(day.day, 2))/\(section.slug)/\(slugWords)-\(index).html"
        let abstract = (0..<2).map { _ in sentence(8 + rng.below(6)) }.joined(separator: " ")
        let lead = (0..<3).map { _ in sentence(10 + rng.below(8)) }.joined(separator: " ")

        var authors: [String] = []
        for _ in 0..<rng.below(3) {
            var name = rng.pick(Self.firstNames)
            if rng.chance(20) { name += " " + rng.pick(Self.middleNames).replacingOccurrences(of: " ", with: "\u{00A0}") }
            authors.append(name + " " + rng.pick(Self.lastNames))
        }
        let byline: String? =
            authors.isEmpty ? (rng.chance(30) ? "By The Associated Press" : nil) : "By " + authors.joined(separator: " and ")

        var keywords: [Keyword] = []
        for rank in 0..<rng.below(6) {
            keywords.append(
                Keyword(
                    name: rng.pick(Self.keywordNames), value: sentence(2 + rng.below(3)).dropLast() + "",
                    rank: rng.chance(85) ? rank + 1 : nil))
        }

        var media: [Media] = []
        let imageCount = rng.below(3)
        for position in 0..<imageCount {
            let thumbnail = position == imageCount - 1 && imageCount > 1
            let kind = thumbnail ? "thumbnail" : rng.pick(Self.kinds)
            let stem = "\(pad(day.day, 2))\(slugWords.prefix(8))"
            media.append(
                Media(
                    url: "https://static01.nyt.com/images/\(pad(day.year, 4))/\(pad(day.month, 2))/"
                        + "\(pad(day.day, 2))/\(section.slug)/\(stem)/\(stem)-\(kind).jpg",
                    width: thumbnail ? 75 : 600 + rng.below(1448), height: thumbnail ? 75 : 400 + rng.below(900),
                    caption: rng.chance(70) ? sentence(6 + rng.below(6)) : nil,
                    credit: rng.chance(70) ? "\(rng.pick(Self.firstNames)) \(rng.pick(Self.lastNames)) for The New York Times" : nil,
                    kind: kind))
        }

        return Article(
            id: id, url: url, headline: headline,
            kicker: rng.chance(25) ? sentence(2).dropLast() + "" : nil,
            abstract: abstract,
            snippet: rng.chance(50) ? abstract : sentence(12),
            leadParagraph: rng.chance(85) ? lead : nil,
            source: "The New York Times",
            publishedAt: published,
            section: section.name,
            subsection: section.subsections.isEmpty || rng.chance(40) ? nil : rng.pick(section.subsections),
            newsDesk: rng.chance(90) ? section.desk : nil,
            printSection: rng.chance(60) ? rng.pick(["A", "B", "C", "D"]) : nil,
            printPage: rng.chance(60) ? String(1 + rng.below(32)) : nil,
            documentType: "article",
            typeOfMaterial: rng.pick(Self.materials),
            wordCount: rng.chance(95) ? rng.below(3200) : nil,
            byline: byline,
            authors: authors.isEmpty ? nil : authors,
            keywords: keywords.isEmpty ? nil : keywords,
            multimedia: media.isEmpty ? nil : media)
    }

    /// `count` articles, indices `0..<count`.
    public mutating func articles(count: Int) -> [Article] {
        (0..<count).map { article(index: $0) }
    }

    /// A Feedzilla category; some names are `nil` (written as `""`, as the API does).
    public func category(index: Int) -> Category {
        let names = ["Sports", "Top News", "Science", "Technology", "Business", "Art", "Music", "Travel", "Health"]
        let name = names[index % names.count]
        let id = 1300 + index * 7
        let slug = name.lowercased().replacingOccurrences(of: " ", with: "-")
        return Category(
            id: id, displayName: index % 4 == 3 ? nil : name, englishName: name, urlName: index % 4 == 3 ? nil : slug)
    }
}

/// `value` in decimal, left-padded with zeros to `width` digits.
func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}
