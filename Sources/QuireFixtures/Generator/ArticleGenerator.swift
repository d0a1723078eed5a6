import Foundation
public import QuireNews

/// A deterministic generator of realistic articles.
///
/// The same seed and index always give the same article, whatever the call order. Articles have
/// NYT-like sizes (≈1.6 KB as compact JSON), whole-second publication dates between 2012 and
/// mid-2025, and ids that are either 24 hex digits or `nyt://article/<uuid>`. Optional fields are
/// sometimes absent, never `""`.
///
/// The text has news-like statistics: words are drawn from a fixed 60,000-word vocabulary with a
/// Zipf–Mandelbrot law (``vocabulary``; a handful of function words make up a large share of the
/// tokens, most words are rare), sentences have 6–41 words (mean ≈ 19, right-skewed), a lead
/// paragraph has one to three sentences, with commas, quotations, numbers (years, decimals,
/// thousands, money, percentages) and hyphenated compounds; about one token in 25 is from the
/// corpus' other scripts (accented Latin names, Cyrillic, Arabic, Chinese, Japanese, Korean, emoji,
/// curly quotes, dashes).
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
    static let flavour = [
        "café", "naïve", "São Paulo", "Zürich", "Kraków", "Brontë", "Ibáñez", "Malmö", "Noël", "façade", "Ørsted",
        "東京", "北京", "上海", "経済", "新闻", "日本語", "서울", "시장", "Москва", "правительство", "выборы",
        "Санкт-Петербург", "القاهرة", "الحكومة", "الأخبار", "🎉", "🌍", "📈", "⚽️", "—", "…", "½", "“quoted”", "‘single’",
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

        let vocabulary = Vocabulary.shared
        /// Appends one word (or number, compound or foreign token) to `out`.
        func word(_ out: inout String, first: Bool, content: Bool = false) {
            let roll = rng.below(1000)
            if roll < 40 {
                out += rng.pick(Self.flavour)
                return
            }
            if roll < 60 {
                switch rng.below(6) {
                case 0: out += String(1950 + rng.below(76))
                case 1: out += "\(1 + rng.below(99)).\(rng.below(10))"
                case 2: out += "\(1 + rng.below(999)),\(pad(rng.below(1000), 3))"
                case 3: out += "$\(1 + rng.below(500)) million"
                case 4: out += "\(1 + rng.below(99))%"
                default: out += String(2 + rng.below(40))
                }
                return
            }
            var rank = vocabulary.rank(&rng)
            // Content positions (keywords, headline starts) skip the function words.
            while content && rank < 60 { rank = vocabulary.rank(&rng) }
            out += first || vocabulary.isName[rank] ? vocabulary.capitalized[rank] : vocabulary.words[rank]
            if roll < 80 {
                out += "-"
                out += vocabulary.words[vocabulary.rank(&rng)]
            }
        }
        /// A sentence of `count` words (first word capitalized), ending in a period unless `period` is false.
        func sentence(_ count: Int, period: Bool = true, content: Bool = false) -> String {
            var out = ""
            out.reserveCapacity(count * 8)
            let quoted = count > 6 && rng.chance(6)
            if quoted { out += "“" }
            for position in 0..<count {
                if position > 0 { out += rng.chance(7) && position < count - 1 ? ", " : " " }
                word(&out, first: position == 0, content: content && position == 0)
            }
            if period { out += "." }
            if quoted { out += "”" }
            return out
        }
        /// A news sentence length: 6–41 words, mean ≈ 19, right-skewed.
        func length() -> Int { 6 + rng.below(8) + rng.below(8) + rng.below(8) + (rng.chance(15) ? rng.below(15) : 0) }

        var headline = sentence(5 + rng.below(8), period: false, content: true)
        if rng.chance(10) { headline = "The <strong>\(vocabulary.words[60 + rng.below(5_000)])</strong> " + headline }
        var slug: [String] = []
        while slug.count < 4 {
            let rank = vocabulary.rank(&rng)
            if rank >= 60, vocabulary.isSlug[rank] { slug.append(vocabulary.words[rank]) }
        }
        let slugWords = slug.joined(separator: "-")
        let url = "https://www.nytimes.com/\(pad(day.year, 4))/\(pad(day.month, 2))/"
            + "\(pad(day.day, 2))/\(section.slug)/\(slugWords)-\(index).html"
        let abstract = (0..<(rng.chance(60) ? 1 : 2)).map { _ in sentence(length()) }.joined(separator: " ")
        let leadSentences = rng.chance(45) ? 1 : rng.chance(64) ? 2 : 3
        let lead = (0..<leadSentences).map { _ in sentence(length() + 6) }.joined(separator: " ")

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
                    name: rng.pick(Self.keywordNames), value: sentence(1 + rng.below(3), period: false, content: true),
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
                    caption: rng.chance(70) ? sentence(length()) : nil,
                    credit: rng.chance(70) ? "\(rng.pick(Self.firstNames)) \(rng.pick(Self.lastNames)) for The New York Times" : nil,
                    kind: kind))
        }

        return Article(
            id: id, url: url, headline: headline,
            kicker: rng.chance(25) ? sentence(2, period: false, content: true) : nil,
            abstract: abstract,
            snippet: rng.chance(50) ? abstract : sentence(length()),
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

    /// The vocabulary the text is drawn from, most frequent first (60,000 distinct words; the same
    /// for every seed).
    public static var vocabulary: [String] { Vocabulary.shared.words }

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
