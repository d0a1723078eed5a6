import Foundation
import Testing
import QuireText

private func terms(_ text: String, _ options: TokenizerOptions = TokenizerOptions()) -> [String] {
    var tokenizer = Tokenizer(options: options)
    return tokenizer.terms(text)
}

@Suite struct TokenizerTests {
    @Test func wordsAreLowercasedAndSplitAtPunctuation() {
        #expect(terms("The Storm, at 3.5 m/s; Hits!") == ["the", "storm", "at", "3", "5", "m", "s", "hits"])
        #expect(terms("") == [])
        #expect(terms("  ...  —  ") == [])
    }

    @Test func diacriticsFoldForLatinLettersOnly() {
        #expect(terms("Café naïve Ibáñez Kraków Nguyễn İstanbul Ǖber") == ["cafe", "naive", "ibanez", "krakow", "nguyen", "istanbul", "uber"])
        // Letters that do not decompose stay, as in FTS5's remove_diacritics 2; `ß` is `ss` since
        // revision 4, as Unicode's full case folding has it.
        #expect(terms("Søren Łódź Straße") == ["søren", "łodz", "strasse"])
        #expect(terms("Søren Łódź Straße", TokenizerOptions(revision: 3)) == ["søren", "łodz", "straße"])
        // Non-Latin letters keep their marks: й is a letter of its own in Russian.
        #expect(terms("Йошкар МОСКВА") == ["йошкар", "москва"])
        // A combining accent is dropped as the precomposed one is.
        #expect(terms("Cafe\u{301}") == ["cafe"])
        #expect(terms("Café", TokenizerOptions(foldDiacritics: false)) == ["café"])
        #expect(terms("Cafe\u{301}", TokenizerOptions(foldDiacritics: false)) == ["cafe\u{301}"])
    }

    @Test func otherScriptsAreWords() {
        #expect(terms("القاهرة اليوم") == ["القاهرة", "اليوم"])
        #expect(terms("서울 시장") == ["서울", "시장"])
        #expect(terms("ＡＢＣ１２") == ["abc12"])
    }

    @Test func marksStayInWordsAndInvisibleSelectorsAreSkipped() {
        // Arabic harakat and Hebrew points are diacritics: folded away. Devanagari vowel signs are
        // letters' parts and stay (FTS5's unicode61 splits the word at them).
        #expect(terms("العَرَبِيَّة") == ["العربية"])
        #expect(terms("नमस्ते") == ["नमस्ते"])
        // The emoji variation selector neither makes a token nor splits a word.
        #expect(terms("the ⚽️ goal") == ["the", "goal"])
        #expect(terms("co\u{AD}operate") == ["cooperate"])
        // Format characters are invisible in pasted text: they neither split nor make a word; the
        // zero-width space is the one written to separate.
        #expect(terms("word\u{2060}joiner by\u{FEFF}te zero\u{200D}width left\u{200E}mark") == ["wordjoiner", "byte", "zerowidth", "leftmark"])
        #expect(terms("\u{FEFF}lead \u{202E}\u{2066}trail\u{2069}") == ["lead", "trail"])
        #expect(terms("zero\u{200B}space") == ["zero", "space"])
        #expect(terms("by\u{FEFF}te", TokenizerOptions(revision: 1)) == ["by", "te"])
        // A keycap: the digit, its selector and the enclosing keycap mark.
        #expect(terms("1️⃣") == ["1"])
    }

    /// Text in decomposed form (NFD: some feeds, text pasted from some systems) makes the terms its composed form
    /// (NFC) makes, in every script: a letter and the marks after it compose first, then fold.
    @Test func decomposedTextIndexesAsComposedText() {
        func bytes(_ term: String) -> [UInt8] { Array(term.utf8) }
        let composed = ["Ελληνικά οδός", "йод Ёлка", "한국어", "Trương Nguyễn café", "ǿ ǽ", "ΐ ᾅ", "কোন"]
        var plain = Tokenizer(options: TokenizerOptions(foldDiacritics: false))
        for text in composed {
            let decomposed = text.decomposedStringWithCanonicalMapping
            #expect(decomposed.unicodeScalars.count > text.unicodeScalars.count, "\(text)")
            // Bytes, not Strings: String equality is canonical equivalence and would hide the difference.
            #expect(terms(decomposed).map(bytes) == terms(text).map(bytes), "\(text)")
            #expect(plain.terms(decomposed).map(bytes) == plain.terms(text).map(bytes), "\(text) unfolded")
        }
        // Marks that compose with nothing still fold away (Latin) or stay (non-Latin).
        #expect(terms("x\u{301}y") == ["xy"])
        #expect(terms("и\u{306}").map(bytes) == [Array("\u{439}".utf8)])
        #expect(terms("\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}").map(bytes) == [Array("\u{D55C}\u{AD6D}".utf8)])
        // Revision 1 (the rules of indexes made before) leaves the marks apart.
        #expect(terms("и\u{306}од", TokenizerOptions(revision: 1)) == ["иод"])
    }

    /// Revision 3 reads compatibility forms as NFKC does, and every canonically equivalent
    /// spelling alike: ligatures, styled letters, superscripts, halfwidth katakana, decomposed
    /// kana, composition exclusions and singletons. Symbols stay separators.
    @Test func compatibilityFormsReadAsTheirPlainForms() {
        func bytes(_ list: [String]) -> [[UInt8]] { list.map { Array($0.utf8) } }
        for (styled, plain) in [
            ("ﬁnance", "finance"), ("𝐁𝐫𝐞𝐚𝐤𝐢𝐧𝐠 𝐍𝐞𝐰𝐬", "breaking news"), ("CO₂ x²", "co2 x2"), ("Pius Ⅻ", "pius xii"),
            ("ǅemal", "džemal"), ("ﻟﺤﻜﻮﻣﺔ", "لحكومة"), ("ｶﾀｶﾅ", "カタカナ"), ("ｶﾞｯｺｳ", "ガッコウ"),
            ("か\u{3099}っこう", "がっこう"), ("\u{0958}ानून", "\u{0915}\u{093C}ानून"), ("\u{FB2A}לום", "\u{05E9}\u{05C1}לום"),
            ("λ\u{1F71}μβδα", "λ\u{03AC}μβδα"), ("空\u{F91D}", "空\u{6B04}"), ("ﾊﾟﾝ", "パン"),
        ] {
            #expect(bytes(terms(styled)) == bytes(terms(plain)), "\(styled)")
        }
        #expect(terms("ｶﾞｯｺｳ") == ["ガッ", "ッコ", "コウ"])
        #expect(terms("か\u{3099}") == ["が"])
        // A voiced sound mark after no kana voices nothing; the kana middle dot separates.
        #expect(terms("a\u{3099}b \u{3099}") == ["ab"])
        #expect(terms("ジョー・バイデン") == terms("ジョー バイデン"))
        #expect(terms("Apple™ ①") == ["apple", "1"])
        // Greek accents and breathings fold away; the final sigma is a sigma.
        #expect(terms("Αθήνα ΑΘΗΝΑ") == ["αθηνα", "αθηνα"])
        #expect(terms("οδός ΟΔΟΣ ἀλήθεια ᾅ") == ["οδοσ", "οδοσ", "αληθεια", "α"])
        #expect(terms("α\u{301}θ\u{313}") == ["αθ"])
        #expect(bytes(terms("Αθήνα α\u{301}", TokenizerOptions(foldDiacritics: false))) == bytes(["αθήνα", "ά"]))
        #expect(terms("Αθήνα οδός", TokenizerOptions(revision: 2)) == ["αθήνα", "οδός"])
        // Highlighting spans: the composed kana's bigram covers the mark's bytes too.
        var buffer = TokenBuffer()
        var tokenizer = Tokenizer()
        let text = "がか\u{3099}"
        tokenizer.tokenize(text, into: &buffer)
        #expect(buffer.tokens.map { buffer.term(of: $0) } == ["がが"])
        #expect(buffer.tokens.first?.sourceEnd == UInt32(text.utf8.count))
        // Revision 2, the rules of the indexes made before, is unchanged.
        let second = TokenizerOptions(revision: 2)
        #expect(terms("ﬁnance ｶﾞｯｺｳ", second) == ["ﬁnance", "ｶﾞ", "ﾞｯ", "ｯｺ", "ｺｳ"])
        #expect(terms("ジョー・バイデン", second) == ["ジョ", "ョー", "ー・", "・バ", "バイ", "イデ", "デン"])
    }

    /// Revision 4 folds what news in German, Turkish and Arabic writes two ways, reads every
    /// script's digits as ASCII ones, and makes a run's last Han character a term of its own.
    @Test func revisionFourFoldsScriptsFurther() {
        func bytes(_ list: [String]) -> [[UInt8]] { list.map { Array($0.utf8) } }
        #expect(terms("Straße STRASSE Strasse GROẞ") == ["strasse", "strasse", "strasse", "gross"])
        #expect(terms("Kırıkkale İzmir") == ["kirikkale", "izmir"])
        #expect(bytes(terms("Kırıkkale", TokenizerOptions(foldDiacritics: false))) == bytes(["kırıkkale"]))
        // Hamza and madda fold as the harakat do, precomposed or not; without folding they stay.
        #expect(bytes(terms("أحمد إسلام آمال مؤتمر ا\u{654}حمد")) == bytes(["احمد", "اسلام", "امال", "موتمر", "احمد"]))
        #expect(bytes(terms("أحمد ا\u{654}حمد", TokenizerOptions(foldDiacritics: false))) == bytes(["أحمد", "أحمد"]))
        #expect(bytes(terms("العـــربية")) == bytes(["العربية"]))
        #expect(terms("٢٠٢٤ ۲۰۲۴ २०२४ ๒๐๒๔ 2024年") == ["2024", "2024", "2024", "2024", "2024", "年"])
        // The last Han character of a run: found alone, its span that character's.
        var buffer = TokenBuffer()
        var tokenizer = Tokenizer()
        let text = "昨日は大雨 東京へ"
        tokenizer.tokenize(text, into: &buffer)
        let trailing = buffer.tokens.filter { $0.kind == .trailing }
        #expect(trailing.map { buffer.term(of: $0) } == ["雨"])
        let span = trailing.first.map { Array(text.utf8)[Int($0.sourceStart)..<Int($0.sourceEnd)] }
        #expect(span.map { String(decoding: $0, as: UTF8.self) } == "雨")
        // Revision 3, the rules of the indexes made before, is unchanged.
        let third = TokenizerOptions(revision: 3)
        #expect(bytes(terms("Straße Kırıkkale أحمد العـــربية ٢٠٢٤ 大雨", third)) == bytes(["straße", "kırıkkale", "أحمد", "العـــربية", "٢٠٢٤", "大雨"]))
    }

    /// Revision 4 makes the terms revision 3 makes of the text with its folds spelled out, for
    /// random mixes of the letters it folds and those around them; its trailing characters are
    /// each the last of the bigram before them.
    @Test func revisionFourIsRevisionThreeOfTheFoldedText() {
        var rng = TestRandom(seed: 50)
        var fourth = Tokenizer()
        var third = Tokenizer(options: TokenizerOptions(revision: 3))
        let pool: [Unicode.Scalar] = [
            "a", "S", " ", "-", "é", "ß", "ẞ", "ı", "I", "أ", "إ", "آ", "ؤ", "ئ", "ا", "و", "ل", "\u{654}", "\u{655}",
            "\u{64E}", "ـ", "٢", "۳", "५", "๑", "7", "東", "京", "雨", "か", "ー", "한", "ﻷ",
        ]
        func spelledOut(_ scalars: [Unicode.Scalar]) -> String {
            var out = String.UnicodeScalarView()
            for (i, scalar) in scalars.enumerated() {
                let previous = i > 0 ? scalars[i - 1].value : 0
                let afterArabic = (0x0600...0x06FF).contains(previous) || previous == 0xFEF7
                switch scalar {
                case "ß", "ẞ": out.append(contentsOf: "ss".unicodeScalars)
                case "ı": out.append("i")
                case "ـ": break
                case "أ", "إ", "آ": out.append("ا")
                case "ؤ": out.append("و")
                case "ئ": out.append("ي")
                case "ﻷ": out.append(contentsOf: "لا".unicodeScalars)  // lam with alef with hamza, as NFKC reads it
                case "\u{654}" where afterArabic, "\u{655}" where afterArabic: break
                default:
                    if let digit = scalar.properties.numericValue, scalar.properties.numericType == .decimal {
                        out.append(contentsOf: String(Int(digit)).unicodeScalars)
                    } else {
                        out.append(scalar)
                    }
                }
            }
            return String(out)
        }
        for _ in 0..<2_000 {
            let scalars = (0..<(1 + rng.below(16))).map { _ in pool[rng.below(pool.count)] }
            let text = String(String.UnicodeScalarView(scalars))
            var buffer = TokenBuffer()
            fourth.tokenize(text, into: &buffer)
            let words = buffer.tokens.filter { $0.kind != .trailing }.map { Array(buffer.term(of: $0).utf8) }
            #expect(words == third.terms(spelledOut(scalars)).map { Array($0.utf8) }, "\(scalars.map { String($0.value, radix: 16) })")
            for (i, token) in buffer.tokens.enumerated() where token.kind == .trailing {
                let bigram = i > 0 ? buffer.tokens[i - 1] : nil
                #expect(bigram?.kind == .bigram && bigram?.position == token.position)
                #expect(bigram.map { buffer.term(of: $0).unicodeScalars.last } == buffer.term(of: token).unicodeScalars.first)
                #expect(buffer.term(of: token).unicodeScalars.allSatisfy { ["東", "京", "雨"].contains($0) })
            }
        }
    }

    @Test func emojiAndSymbolsSeparate() {
        #expect(terms("rain🎉sun 📈 → “quoted” ‘single’") == ["rain", "sun", "quoted", "single"])
        // Other numbers are words, as in FTS5's unicode61 (categories L*, N*, Co).
        #expect(terms("½ Ⅻ") == ["½", "xii"])
        #expect(terms("½ Ⅻ", TokenizerOptions(revision: 2)) == ["½", "ⅻ"])
        #expect(terms("O’Brien don't") == ["o", "brien", "don", "t"])
    }

    @Test func hyphenatedWordsGivePartsAndTheJoinedForm() {
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        tokenizer.tokenize("covid-19 well-known e-mail-box", field: 2, into: &buffer)
        let got = buffer.tokens.map { (buffer.term(of: $0), $0.position, $0.kind) }
        let want: [(String, UInt32, Token.Kind)] = [
            ("covid", 0, .word), ("19", 1, .word), ("covid19", 0, .joined),
            ("well", 2, .word), ("known", 3, .word), ("wellknown", 2, .joined),
            ("e", 4, .word), ("mail", 5, .word), ("box", 6, .word), ("emailbox", 4, .joined),
        ]
        #expect(got.count == want.count)
        for (g, w) in zip(got, want) { #expect(g.0 == w.0 && g.1 == w.1 && g.2 == w.2) }
        #expect(buffer.tokens.allSatisfy { $0.field == 2 })
        #expect(terms("covid-19", TokenizerOptions(joinHyphenated: false)) == ["covid", "19"])
        // A leading, trailing or doubled hyphen joins nothing; a dash is a separator.
        #expect(terms("-storm storm- a--b x—y") == ["storm", "storm", "a", "b", "x", "y"])
        #expect(terms("2015-07-04") == ["2015", "07", "04", "20150704"])
    }

    @Test func chineseAndJapaneseBecomeOverlappingBigrams() {
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        let next = tokenizer.tokenize("東京都 in 北京 and 京", startingAt: 10, into: &buffer)
        let got = buffer.tokens.map { (buffer.term(of: $0), $0.position) }
        // A run's last Han character is a term too (revision 4), at its last bigram's position.
        let want: [(String, UInt32)] = [
            ("東京", 10), ("京都", 11), ("都", 11), ("in", 12), ("北京", 13), ("京", 13), ("and", 14), ("京", 15),
        ]
        #expect(got.map(\.0) == want.map(\.0))
        #expect(got.map(\.1) == want.map(\.1))
        #expect(buffer.tokens.map(\.kind) == [.bigram, .bigram, .trailing, .word, .bigram, .trailing, .word, .bigram])
        #expect(next == 16)
        #expect(terms("ひらがなカタカナ") == ["ひら", "らが", "がな", "なカ", "カタ", "タカ", "カナ"])
        #expect(terms("東京Tower") == ["東京", "京", "tower"])
        #expect(terms("東京都", TokenizerOptions(revision: 3)) == ["東京", "京都"])
    }

    @Test func positionsCountTokensAndContinueAcrossCalls() {
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        let after = tokenizer.tokenize("one two", field: 4, into: &buffer)
        let end = tokenizer.tokenize("three", field: 4, startingAt: after + 8, into: &buffer)
        #expect(buffer.tokens.map(\.position) == [0, 1, 10])
        #expect(end == 11)
        buffer.removeAll()
        #expect(buffer.count == 0 && buffer.bytes.isEmpty)
    }

    @Test func longTermsAreCutAtAScalarBoundary() {
        let long = String(repeating: "é", count: 100)  // 200 bytes, folds to 100 bytes of e
        #expect(terms(long) == [String(repeating: "e", count: 100)])
        let cut = terms(String(repeating: "й", count: 100), TokenizerOptions(maximumTermBytes: 9))
        #expect(cut == [String(repeating: "й", count: 4)])
    }

    /// Revision 3 makes the same terms of a text and of its NFKC form, for random mixes of
    /// letters, marks and kana (symbols, which it leaves alone, are not in the pool), and the
    /// same terms of a query as of the document (the highlighter's spans stay in the text).
    @Test(arguments: [3, 4]) func revisionThreeMakesTheTermsOfTheNFKCForm(revision: Int) {
        var rng = TestRandom(seed: 49)
        var tokenizer = Tokenizer(options: TokenizerOptions(revision: revision))
        let pool: [Unicode.Scalar] = [
            "a", "E", " ", "-", "é", "\u{301}", "\u{308}", "ﬁ", "ﬃ", "𝐁", "𝕫", "²", "₂", "Ⅻ", "ǅ", "ſ", "µ", "\u{2126}", "\u{212A}",
            "か", "カ", "は", "ｶ", "ﾊ", "ﾞ", "ﾟ", "\u{3099}", "\u{309A}", "ー", "東", "\u{F91D}", "ά", "\u{1F71}", "α",
            "\u{0958}", "\u{093C}", "क", "\u{FB2A}", "ש", "ﻟ", "ﺤ", "ل", "한", "\u{1100}", "\u{1161}", "ㄱ", "ª", "①",
            // Expansions with separators inside: `19.`, `(1)`, `1.`, a phrase of Arabic words.
            "⒚", "⑴", "⒈", "ﷺ",
        ]
        // Two marks in a row are left out: NFKC reorders marks of different classes (and
        // Foundation's then composes fewer), which the tokenizer, composing in text order, does not.
        let marks: Set<Unicode.Scalar> = ["\u{301}", "\u{308}", "ﾞ", "ﾟ", "\u{3099}", "\u{309A}", "\u{093C}"]
        for _ in 0..<2_000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<(1 + rng.below(16)) {
                let next = pool[rng.below(pool.count)]
                if let last = s.last, marks.contains(last), marks.contains(next) { continue }
                s.append(next)
            }
            let text = String(s)
            let normal = text.precomposedStringWithCompatibilityMapping
            #expect(tokenizer.terms(text).map { Array($0.utf8) } == tokenizer.terms(normal).map { Array($0.utf8) }, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
            var buffer = TokenBuffer()
            tokenizer.tokenize(text, into: &buffer)
            let size = UInt32(text.utf8.count)
            #expect(buffer.tokens.allSatisfy { $0.sourceStart < $0.sourceEnd && $0.sourceEnd <= size })
        }
    }

    @Test func termBytesAreValidUTF8ForArbitraryInput() {
        var rng = TestRandom(seed: 11)
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        let pool: [Unicode.Scalar] = ["a", "Z", "-", " ", "é", "\u{301}", "東", "京", "🎉", "й", "9", "’", "\u{0}", "ß", "ǅ"]
        for _ in 0..<300 {
            var s = String.UnicodeScalarView()
            for _ in 0..<rng.below(40) { s.append(pool[rng.below(pool.count)]) }
            buffer.removeAll()
            tokenizer.tokenize(String(s), into: &buffer)
            for token in buffer.tokens {
                #expect(token.length > 0)
                let bytes = Array(buffer.bytes[token.start..<(token.start + token.length)])
                #expect(String(validating: bytes, as: UTF8.self) != nil)
            }
        }
    }
}

/// A small seeded generator for the tests' random inputs.
struct TestRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
}
