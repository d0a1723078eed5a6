/// The generator's vocabulary: 60,000 distinct words ranked by frequency, drawn with a
/// Zipf–Mandelbrot law, so that generated text has the statistics of news text (a few function words
/// make up a large share of the tokens, most words are rare).
///
/// The words are generated, not read from `/usr/share/dict/words`: the same seed gives the same
/// vocabulary on every machine, with or without Debian's word lists installed (and whatever their
/// version), so fixtures, size figures and search figures are reproducible from a fresh clone. The
/// most frequent ranks are real English function and news words; the rest are pronounceable
/// syllable-built pseudo-words (longer as they get rarer, as in natural language), about 3% of them
/// with a Latin accent (`cafè`-like) and about 8% capitalized as names.
struct Vocabulary: Sendable {
    /// The words by rank (0 is the most frequent).
    let words: [String]
    /// The same words with their first letter upper-cased (for sentence starts and headlines).
    let capitalized: [String]
    /// Whether a word is a name (always written capitalized).
    let isName: [Bool]
    /// Whether a word is ASCII lower-case letters only (usable in URL slugs).
    let isSlug: [Bool]
    /// The law the ranks are drawn with.
    let ranks: ZipfTable

    /// The number of words.
    static let size = 60_000
    /// The Zipf–Mandelbrot exponent and shift: p(r) ∝ 1 / (r + q)^s with s = 1, q = 2.7, as fitted
    /// to English text (Mandelbrot's correction flattens the head).
    static let shift = 2.7

    static let shared = Vocabulary(seed: 0x5155_4952_4557_4F52)  // fixed: the vocabulary never depends on the article seed

    /// English words in rough news-frequency order; they take the top ranks.
    static let common: [String] = [
        "the", "of", "to", "and", "a", "in", "that", "is", "for", "on", "it", "with", "was", "as", "said", "he", "at",
        "by", "his", "be", "from", "have", "are", "has", "but", "not", "an", "they", "its", "who", "their", "were",
        "this", "been", "will", "more", "or", "had", "which", "would", "one", "about", "after", "we", "new", "she",
        "her", "also", "there", "than", "when", "up", "out", "can", "year", "could", "all", "two", "people", "them",
        "last", "other", "into", "some", "over", "state", "first", "years", "if", "city", "what", "government",
        "percent", "so", "no", "just", "like", "many", "time", "president", "our", "most", "officials", "while",
        "before", "even", "only", "now", "against", "week", "because", "three", "those", "any", "told", "since",
        "may", "company", "country", "house", "where", "how", "federal", "million", "did", "through", "world",
        "school", "public", "police", "court", "market", "officials", "report", "national", "under", "between",
        "minister", "election", "climate", "budget", "council", "energy", "museum", "festival", "village", "river",
        "vaccine", "league", "bridge", "harbor", "railway", "summit", "island", "studio", "orchestra", "strike",
    ]

    static let onsets = [
        "", "", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "br", "cr", "dr",
        "fr", "gr", "pr", "tr", "bl", "cl", "fl", "gl", "pl", "sl", "st", "sp", "sc", "sh", "ch", "th", "wh", "qu",
        "str", "z",
    ]
    static let nuclei = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ou", "ai", "ie", "oo", "y", "au"]
    static let codas = ["", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "ck", "rt", "ll", "ss", "x", "nt", "ts", "rn"]
    static let suffixes = ["ing", "ed", "er", "ly", "tion", "ment", "ness", "s", "es", "ity", "al", "ism", "ist"]
    static let accented: [Character: [String]] = [
        "a": ["á", "à", "â", "ä", "ã"], "e": ["é", "è", "ê", "ë"], "i": ["í", "ï", "î"], "o": ["ó", "ô", "ö", "õ"],
        "u": ["ú", "ü", "û"], "n": ["ñ"], "c": ["ç"],
    ]

    init(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var words: [String] = []
        var seen = Set<String>()
        words.reserveCapacity(Self.size)
        var names: [Bool] = []
        for word in Self.common where seen.insert(word).inserted {
            words.append(word)
            names.append(false)
        }
        while words.count < Self.size {
            let rank = words.count
            // Rarer words are longer: 1–2 syllables at the head, up to 4 in the tail.
            let maxSyllables = rank < 2_000 ? 2 : rank < 15_000 ? 3 : 4
            let syllables = 1 + rng.below(maxSyllables)
            var word = ""
            for index in 0..<syllables {
                word += rng.pick(Self.onsets)
                word += rng.pick(Self.nuclei)
                if index == syllables - 1 || rng.chance(40) { word += rng.pick(Self.codas) }
            }
            if rng.chance(22) { word += rng.pick(Self.suffixes) }
            guard word.count >= 2 else { continue }
            if rng.chance(3) {
                // One accented letter (a Latin diacritic that folds back to the ASCII letter).
                let letters = Array(word)
                let candidates = letters.indices.filter { Self.accented[letters[$0]] != nil }
                if let at = candidates.isEmpty ? nil : candidates[rng.below(candidates.count)],
                    let choices = Self.accented[letters[at]]
                {
                    word = String(letters[..<at]) + rng.pick(choices) + String(letters[(at + 1)...])
                }
            }
            guard seen.insert(word).inserted else { continue }
            words.append(word)
            names.append(rng.chance(8))
        }
        self.words = words
        self.isName = names
        self.capitalized = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }
        self.isSlug = words.map { $0.utf8.allSatisfy { (0x61...0x7A).contains($0) } }
        self.ranks = ZipfTable(count: words.count, shift: Self.shift)
    }

    /// A rank drawn from the Zipf–Mandelbrot law.
    @inline(__always)
    func rank(_ rng: inout SplitMix64) -> Int { ranks.rank(&rng) }
}
