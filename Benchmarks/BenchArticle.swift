import Foundation

/// A NYT-shaped article for the comparisons that do not need the Quire store: the same fields
/// and sizes as Article Search docs (≈1.2 KB of compact JSON).
struct BenchArticle: Codable, Equatable, Sendable {
    struct Keyword: Codable, Equatable, Sendable {
        var name: String
        var value: String
        var rank: Int
    }

    var id: String
    var webURL: String
    var headline: String
    var kicker: String?
    var abstract: String?
    var snippet: String
    var leadParagraph: String?
    var source: String
    var section: String
    var subsection: String?
    var byline: String?
    var documentType: String
    var newsDesk: String
    var typeOfMaterial: String
    var publishedAt: Date
    var wordCount: Int
    var keywords: [Keyword]

    enum CodingKeys: String, CodingKey {
        case id = "_id"
        case webURL = "web_url"
        case headline, kicker, abstract, snippet
        case leadParagraph = "lead_paragraph"
        case source
        case section = "section_name"
        case subsection = "subsection_name"
        case byline
        case documentType = "document_type"
        case newsDesk = "news_desk"
        case typeOfMaterial = "type_of_material"
        case publishedAt = "pub_date"
        case wordCount = "word_count"
        case keywords
    }
}

/// A deterministic pseudo-random source (SplitMix64): the same seed gives the same corpus on
/// every machine, so runs compare.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// Generates `BenchArticle`s with realistic text lengths and some non-ASCII text.
enum BenchArticleGenerator {
    private static let words = """
        the city council voted on a plan to rebuild bridges after storm season while residents \
        asked about costs schools budget election senator governor market shares rose fell economy \
        inflation rates report study scientists found climate ocean warming policy court ruling \
        justice appeal museum exhibit artist film festival review season team coach players victory \
        defeat championship league health hospital doctors patients vaccine research university \
        students protest police officials investigation company chief executive merger technology \
        software privacy data security café résumé naïve — “quoted” ’s über 東京 Zürich São Paulo
        """.split(separator: " ").map(String.init)
    private static let sections = ["U.S.", "World", "Opinion", "Business Day", "Arts", "Sports", "Science",
        "Health", "Technology", "N.Y. / Region"]
    private static let desks = ["National", "Foreign", "OpEd", "Business", "Culture", "Sports", "Science", "Metro"]
    private static let materials = ["News", "Op-Ed", "Review", "Blog", "Obituary"]
    private static let keywordNames = ["subject", "persons", "glocations", "organizations"]

    /// `count` articles; ids are 24 random hex digits (unsorted), publication dates spread over 2000–2024.
    static func make(count: Int, seed: UInt64 = 0x5155_4952_4521) -> [BenchArticle] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in article(&random) }
    }

    private static func sentence(_ random: inout SplitMix64, words count: Int) -> String {
        var text = ""
        text.reserveCapacity(count * 7)
        for index in 0..<count {
            if index > 0 { text.append(" ") }
            text.append(random.pick(words))
        }
        return text
    }

    private static func hexID(_ random: inout SplitMix64) -> String {
        let digits = Array("0123456789abcdef")
        var id = ""
        let high = random.next()
        let low = random.next()
        for shift in stride(from: 60, through: 0, by: -4) { id.append(digits[Int(high >> UInt64(shift) & 0xF)]) }
        for shift in stride(from: 28, through: 0, by: -4) { id.append(digits[Int(low >> UInt64(shift) & 0xF)]) }
        return id
    }

    private static func article(_ random: inout SplitMix64) -> BenchArticle {
        let id = hexID(&random)
        let section = random.pick(sections)
        let seconds = 946_684_800 + Double(random.below(25 * 365 * 86_400))
        let slug = sentence(&random, words: 6).lowercased().split(separator: " ").joined(separator: "-")
        let keywords = (0..<(3 + random.below(4))).map { rank in
            BenchArticle.Keyword(
                name: random.pick(keywordNames), value: sentence(&random, words: 2 + random.below(3)), rank: rank + 1)
        }
        return BenchArticle(
            id: id,
            webURL: "https://www.nytimes.com/2016/07/04/\(section.lowercased().prefix(8))/\(slug).html",
            headline: sentence(&random, words: 8 + random.below(6)),
            kicker: random.below(3) == 0 ? sentence(&random, words: 2) : nil,
            abstract: random.below(5) == 0 ? nil : sentence(&random, words: 20 + random.below(15)),
            snippet: sentence(&random, words: 18 + random.below(10)),
            leadParagraph: random.below(8) == 0 ? nil : sentence(&random, words: 35 + random.below(25)),
            source: "The New York Times",
            section: section,
            subsection: random.below(2) == 0 ? nil : sentence(&random, words: 1),
            byline: random.below(6) == 0 ? nil : "By " + sentence(&random, words: 2).capitalized,
            documentType: "article",
            newsDesk: random.pick(desks),
            typeOfMaterial: random.pick(materials),
            publishedAt: Date(timeIntervalSince1970: seconds),
            wordCount: 100 + random.below(3000),
            keywords: keywords)
    }
}
