import Foundation
import QuireCodec

/// A deterministic PRNG (SplitMix64) so fuzz and fixtures are reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct Keyword: Codable, Hashable {
    var name: String
    var value: String
    var rank: Int
}

struct Multimedia: Codable, Hashable {
    var url: String
    var subtype: String
    var caption: String?
    var height: Int
    var width: Int
}

struct Headline: Codable, Hashable {
    var main: String
    var kicker: String?
    var printHeadline: String?
}

/// An NYT-shaped article, as the store would keep it.
struct Article: Codable, Hashable {
    var id: String
    var webURL: URL
    var headline: Headline
    var abstract: String?
    var snippet: String
    var leadParagraph: String?
    var source: String
    var keywords: [Keyword]
    var multimedia: [Multimedia]
    var publishedAt: Date
    var documentType: String
    var newsDesk: String?
    var sectionName: String
    var subsectionName: String?
    var byline: String?
    var typeOfMaterial: String
    var wordCount: Int
}

enum Fixtures {
    static let words = [
        "city", "council", "voted", "on", "Tuesday", "to", "approve", "a", "plan", "that", "would", "reshape",
        "the", "waterfront", "after", "years", "of", "debate", "among", "residents", "and", "developers", "—",
        "officials", "said", "café", "budget", "school", "election", "river", "bridge", "housing", "market",
    ]

    static func sentence(_ rng: inout SplitMix64, words count: Int) -> String {
        (0..<count).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ") + "."
    }

    static func article(_ seed: UInt64) -> Article {
        var rng = SplitMix64(seed: seed)
        let id = String(format: "%024llx", rng.next())
        return Article(
            id: "nyt://article/\(id)",
            webURL: URL(string: "https://www.nytimes.com/2019/06/15/nyregion/story-\(seed).html")!,
            headline: Headline(
                main: sentence(&rng, words: 9), kicker: seed % 3 == 0 ? "Metro" : nil,
                printHeadline: sentence(&rng, words: 6)),
            abstract: seed % 4 == 0 ? nil : sentence(&rng, words: 28),
            snippet: sentence(&rng, words: 28),
            leadParagraph: sentence(&rng, words: 60),
            source: "The New York Times",
            keywords: (0..<(3 + Int(rng.next() % 4))).map { rank in
                Keyword(name: ["subject", "persons", "glocations", "organizations"][rank % 4],
                        value: sentence(&rng, words: 2), rank: rank + 1)
            },
            multimedia: (0..<Int(rng.next() % 3)).map { _ in
                Multimedia(
                    url: "images/2019/06/15/nyregion/\(rng.next() % 100_000)-articleLarge.jpg", subtype: "xlarge",
                    caption: nil, height: 400, width: 600)
            },
            publishedAt: Date(timeIntervalSince1970: 1_560_000_000 + Double(rng.next() % 10_000_000)),
            documentType: "article",
            newsDesk: "Metro",
            sectionName: "New York",
            subsectionName: seed % 2 == 0 ? nil : "Politics",
            byline: "By Jane Doe and John Roe",
            typeOfMaterial: "News",
            wordCount: Int(rng.next() % 3000))
    }

    static func encode<T: Encodable>(_ value: T, fields: inout FieldTable) throws -> [UInt8] {
        try CompactEncoder().encode(value, fields: &fields)
    }
}
