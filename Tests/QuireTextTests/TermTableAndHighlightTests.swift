import Testing
import QuireFixtures
import QuireText

@Suite struct TermTableTests {
    @Test func internGivesDenseStableIdsAndLookupFindsThem() {
        var table = TermTable(capacity: 4)
        var ids: [UInt32] = []
        for i in 0..<5_000 { ids.append(table.intern("term\(i)")) }
        #expect(ids == (0..<5_000).map { UInt32($0) })
        #expect(table.count == 5_000)
        for i in stride(from: 0, to: 5_000, by: 7) {
            #expect(table.intern("term\(i)") == UInt32(i))
            var text = "term\(i)"
            #expect(text.withUTF8 { table.id(of: $0) } == UInt32(i))
        }
        var missing = "nope"
        #expect(missing.withUTF8 { table.id(of: $0) } == nil)
        #expect(table.term(4_321) == "term4321")
        #expect(table.intern("") == 5_000)
        #expect(table.term(5_000) == "")
    }

    @Test func termsOfEveryLengthKeepTheirBytesAndPrefixesStayApart() {
        // Lengths across the entry's two length bytes; each term is a prefix of the next one.
        var table = TermTable(capacity: 4)
        let lengths = [1, 2, 255, 256, 257, 1_000, 65_535]
        let terms = lengths.map { String(repeating: "ab", count: $0).prefix($0) }.map(String.init)
        let ids = terms.map { table.intern($0) }
        #expect(ids == (0..<UInt32(terms.count)).map { $0 })
        for (term, id) in zip(terms, ids) {
            #expect(table.term(id) == term)
            #expect(table.intern(term) == id)
        }
        #expect(table.byteCount == lengths.reduce(0, +))
    }

    @Test func forEachTermGroupsADocumentsTokensByTerm() {
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        var table = TermTable()
        _ = table.intern("storm")  // id 0, already known
        tokenizer.tokenize("Storm surge, storm!", field: 0, into: &buffer)
        tokenizer.tokenize("a storm-surge", field: 3, into: &buffer)
        var seen: [(String, [Occurrence])] = []
        var ids: [UInt32] = []
        buffer.forEachTerm(interning: &table) { id, term, occurrences in
            ids.append(id)
            seen.append((String(decoding: term, as: UTF8.self), Array(occurrences)))
        }
        #expect(ids == [0, 1, 2, 3])
        #expect(table.term(3) == "stormsurge")
        #expect(seen.map(\.0) == ["storm", "surge", "a", "stormsurge"])
        #expect(seen[0].1 == [Occurrence(field: 0, position: 0), Occurrence(field: 0, position: 2), Occurrence(field: 3, position: 1)])
        #expect(seen[1].1 == [Occurrence(field: 0, position: 1), Occurrence(field: 3, position: 2)])
        #expect(seen[3].1 == [Occurrence(field: 3, position: 1)])
        #expect(buffer.length(of: 0) == 3 && buffer.length(of: 3) == 3)
    }

    /// A long document of known and new terms, repeated and of every length class (the table
    /// grows many times within one document's bulk lookup): each term's id is the one a term
    /// table interning the tokens one by one gives, and each occurrence list is its term's.
    @Test func forEachTermInternsLikeOneTokenAtATime() {
        var rng = SplitMix64(seed: 0xB0_1C)
        let vocabulary = (0..<3_000).map { i in
            String(repeating: "w", count: Int.random(in: 0...20, using: &rng)) + "\(i)"
        }
        var words: [String] = []
        for _ in 0..<20_000 { words.append(vocabulary[Int.random(in: 0..<vocabulary.count, using: &rng)]) }
        var table = TermTable(capacity: 4)
        var reference = TermTable(capacity: 4)
        for word in vocabulary.prefix(500) {  // known before the document
            _ = table.intern(word)
            _ = reference.intern(word)
        }
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        tokenizer.tokenize(words.joined(separator: " "), field: 0, into: &buffer)
        var positions: [String: [UInt32]] = [:]
        for (position, word) in words.enumerated() {
            _ = reference.intern(word)
            positions[word, default: []].append(UInt32(position))
        }
        var visited = 0
        buffer.forEachTerm(interning: &table) { id, term, occurrences in
            let word = String(decoding: term, as: UTF8.self)
            #expect(id == reference.intern(word), "\(word)")
            #expect(occurrences.map(\.position) == positions[word], "\(word)")
            visited += 1
        }
        #expect(visited == positions.count)
        #expect(table.count == reference.count)
        for id in stride(from: 0, to: UInt32(table.count), by: 97) { #expect(table.term(id) == reference.term(id)) }
    }

    @Test func forEachTermSortsOccurrencesWhenFieldsComeOutOfOrder() {
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        var table = TermTable()
        tokenizer.tokenize("rain and rain", field: 4, into: &buffer)
        tokenizer.tokenize("rain", field: 1, into: &buffer)
        var rain: [Occurrence] = []
        var order: [String] = []
        buffer.forEachTerm(interning: &table) { _, term, occurrences in
            order.append(String(decoding: term, as: UTF8.self))
            if order.last == "rain" { rain = Array(occurrences) }
        }
        #expect(order == ["rain", "and"])
        #expect(rain == [Occurrence(field: 1, position: 0), Occurrence(field: 4, position: 0), Occurrence(field: 4, position: 2)])
    }

    @Test func malformedUTF8SeparatesWordsAndNeverReadsPastTheEnd() {
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        let bytes: [UInt8] = [0x61, 0x62, 0x80, 0x63, 0xC3, 0xA9, 0x20, 0x64, 0xE6, 0x9D]  // ab <stray> cé d <cut 東>
        bytes.withUnsafeBufferPointer { _ = tokenizer.tokenize(utf8: $0, into: &buffer) }
        #expect(buffer.tokens.map { buffer.term(of: $0) } == ["ab", "ce", "d"])
    }

    @Test func tokensCarryTheirSpanInTheText() {
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        let text = "Café covid-19 東京都"
        tokenizer.tokenize(text, into: &buffer)
        let bytes = Array(text.utf8)
        let spans = buffer.tokens.map { String(decoding: bytes[Int($0.sourceStart)..<Int($0.sourceEnd)], as: UTF8.self) }
        #expect(spans == ["Café", "covid", "19", "covid-19", "東京", "京都", "都"])
    }
}

@Suite struct HighlighterTests {
    @Test func marksFoldedMatchesAndCutsAWindow() throws {
        let query = try QueryParser().parse("cafe clim* \"storm surge\" -rain")
        var highlighter = Highlighter(query: query)
        #expect(highlighter.matches("climate") && highlighter.matches("surge") && !highlighter.matches("rain"))
        let text = "Rain at the Café: climate talks. Then a storm surge hit the coast."
        #expect(
            highlighter.snippet(of: text)
                == "Rain at the «Café»: «climate» talks. Then a «storm surge» hit the coast.")
        let long = (0..<40).map { "word\($0)" }.joined(separator: " ") + " a storm surge came " + (0..<40).map { "tail\($0)" }.joined(separator: " ")
        let cut = highlighter.snippet(of: long, maximumTokens: 5)
        #expect(cut == "…word38 word39 a «storm surge»…")
        #expect(highlighter.snippet(of: "nothing relevant here") == nil)
        var joined = Highlighter(query: try QueryParser().parse("covid19"))
        #expect(joined.snippet(of: "The covid-19 wave") == "The «covid-19» wave")
    }

    /// A phrase's words were marked wherever they stood: `"the storm"` showed `«the» wind and
    /// «the» rain`, a passage without the phrase. Now only the phrase is, and a word looked for
    /// in one field only is not marked in another's text.
    @Test func aPhraseIsMarkedWhereItStandsAndAFieldsWordsInThatField() throws {
        var phrase = Highlighter(query: try QueryParser().parse("\"the storm\""))
        #expect(phrase.snippet(of: "the wind and the rain") == nil)
        #expect(phrase.snippet(of: "After the storm, the calm. The Storm again.") == "After «the storm», the calm. «The Storm» again.")
        #expect(phrase.matches("the") && phrase.matches("storm"))
        // The phrase's last word as a prefix; three words; a repeated word; a joined form inside.
        var prefix = Highlighter(query: try QueryParser().parse("\"storm sur\"*"))
        #expect(prefix.snippet(of: "a storm surged, storm and surf") == "a «storm surged», storm and surf")
        var three = Highlighter(query: try QueryParser().parse("\"new new york\""))
        #expect(three.snippet(of: "new york, new new york") == "new york, «new new york»")
        var joined = Highlighter(query: try QueryParser().parse("\"covid-19 vaccine\""))
        #expect(joined.snippet(of: "the covid-19 vaccine and covid vaccine") == "the «covid-19 vaccine» and covid vaccine")
        // A lone ideograph ending a phrase marks itself, not the character after it.
        var han = Highlighter(query: try QueryParser().parse("\"東京 雨\""))
        #expect(han.snippet(of: "東京 雨天です") == "«東京 雨»天です")
        // Fields: headline is 0 and abstract 1 in TextSchema.articles.
        var fielded = Highlighter(query: try QueryParser().parse("headline:storm surge"))
        #expect(fielded.snippet(of: "storm surge", field: 1) == "storm «surge»")
        #expect(fielded.snippet(of: "storm surge", field: 0) == "«storm» «surge»")
        #expect(fielded.snippet(of: "storm surge") == "«storm» «surge»")
        var both = Highlighter(query: try QueryParser().parse("headline:storm OR abstract:storm OR lead:\"storm surge\""))
        #expect(both.snippet(of: "a storm", field: 1) == "a «storm»" && both.snippet(of: "a storm", field: 2) == nil)
        #expect(both.snippet(of: "storm surge", field: 3) == "«storm surge»")
        var negated = Highlighter(query: try QueryParser().parse("rain -\"storm surge\""))
        #expect(negated.snippet(of: "rain, storm surge") == "«rain», storm surge")
    }

    @Test func aLongDocumentGetsItsDensestWindow() throws {
        // 200,000 words with a match every tenth; near the end five matches in a row, then
        // filler: the window of five starts there (the matches were once found by a scan of
        // all matched ranges for each word: minutes for a document like this one).
        var highlighter = Highlighter(query: try QueryParser().parse("storm"))
        var words = (0..<200_000).map { $0 % 10 == 0 ? "storm" : "w\($0)" }
        words.replaceSubrange(199_990..<199_995, with: Array(repeating: "Storm", count: 5))
        let cut = highlighter.snippet(of: words.joined(separator: " "), maximumTokens: 5)
        #expect(cut == "…«Storm» «Storm» «Storm» «Storm» «Storm»…")
    }

    /// A snippet holds at most `maximumBytes` of the text: a matched word of a megabyte, or a
    /// run of characters that are no tokens, made a snippet of that size. It is cut at a
    /// character boundary and says so with the ellipsis; the marks stay paired.
    @Test func aSnippetIsBoundedInBytes() throws {
        var highlighter = Highlighter(query: try QueryParser().parse("storm*"))
        let huge = "a " + "storm" + String(repeating: "é", count: 500_000) + " b"
        let snippet = highlighter.snippet(of: huge, maximumBytes: 101)
        let cut = try #require(snippet)
        #expect(cut.hasPrefix("a «storm") && cut.hasSuffix("»…"), "\(cut.prefix(40))")
        #expect(cut.utf8.count <= 101 + "«»…".utf8.count)
        let emoji = String(repeating: "🌊", count: 100_000) + " storm " + String(repeating: "🌊", count: 100_000)
        let aroundSnippet = highlighter.snippet(of: emoji, maximumBytes: 64)
        let around = try #require(aroundSnippet)
        #expect(around.contains("«storm» 🌊") && around.hasSuffix("…") && around.utf8.count <= 64 + "«»……".utf8.count, "\(around)")
        // Under the bound, nothing changes.
        #expect(highlighter.snippet(of: "a storm came", maximumBytes: 12) == "a «storm» came")
    }

    /// A character read as several with a separator inside (`⒚` is `19.`) is marked whole: the
    /// word it ends spanned nothing, and a window of such marks could start past its own end.
    @Test func anExpandedCharacterIsMarkedWhole() throws {
        var highlighter = Highlighter(query: try QueryParser().parse("19"))
        #expect(highlighter.snippet(of: "see ⒚ here") == "see «⒚» here")
        let long = (0..<40).map { "w\($0)" + String(repeating: "x", count: 60) }.joined(separator: " ") + " ⒚"
        let cut = highlighter.snippet(of: long)
        #expect(cut?.hasSuffix("«⒚»") == true, "\(String(describing: cut?.suffix(40)))")
    }

    /// A window of long tokens (Thai writes a clause without spaces: one token) is longer than the
    /// byte budget; the snippet was cut from the window's start and showed no match at all.
    @Test func aWindowLongerThanTheBudgetKeepsItsMatch() throws {
        var highlighter = Highlighter(query: try QueryParser().parse("bangkok"))
        let clause = "รัฐบาลประกาศมาตรการช่วยเหลือผู้ประสบภัยน้ำท่วมในภาคเหนือ"
        let text = Array(repeating: clause, count: 40).joined(separator: " ") + " Bangkok today"
        let found = highlighter.snippet(of: text)
        let snippet = try #require(found)
        #expect(snippet.hasSuffix(" «Bangkok»…") && snippet.hasPrefix("…" + clause), "\(snippet.suffix(60))")
        #expect(snippet.utf8.count <= 1_024 + "«»…".utf8.count)
        // Long Latin words likewise: the match keeps words before it, from the start of one.
        let words = (0..<31).map { "w\($0)" + String(repeating: "x", count: 200) }.joined(separator: " ") + " bangkok"
        let cut = highlighter.snippet(of: words)
        let latin = try #require(cut)
        #expect(latin.hasSuffix("«bangkok»") && latin.hasPrefix("…w"), "\(latin.prefix(20))")
    }
}

@Suite struct PhraseMatcherTests {
    private func matches(_ lists: [[Occurrence]], fields: FieldSet = .all) -> [Occurrence] {
        withBuffers(lists) { buffers in
            var out: [Occurrence] = []
            PhraseMatcher.forEachMatch(buffers, fields: fields) { out.append($0) }
            return out
        }
    }

    @Test func findsConsecutivePositionsInOneField() {
        let o = Occurrence.init(field:position:)
        // "storm surge": storm at 0:3, 0:9, 2:4; surge at 0:4, 0:7, 2:5, 3:0.
        let storm = [o(0, 3), o(0, 9), o(2, 4)]
        let surge = [o(0, 4), o(0, 7), o(2, 5), o(3, 0)]
        #expect(matches([storm, surge]) == [o(0, 3), o(2, 4)])
        #expect(matches([storm, surge], fields: FieldSet(field: 2)) == [o(2, 4)])
        // Across fields: storm at the end of field 0 and surge at the start of field 1 is no phrase.
        #expect(matches([[o(0, 5)], [o(1, 6)]]) == [])
        // Three terms, a repeated word ("new new york").
        let new = [o(1, 0), o(1, 1), o(1, 5)]
        let york = [o(1, 2), o(1, 7)]
        #expect(matches([new, new, york]) == [o(1, 0)])
        #expect(matches([new]) == new)
        #expect(matches([]) == [])
        #expect(matches([[o(0, UInt32.max)], [o(0, 0)]]) == [])
        var counts: [UInt32] = []
        withBuffers([storm, surge]) { PhraseMatcher.frequencies($0, into: &counts) }
        #expect(counts == [1, 0, 1])
    }

    /// The phrase counts of occurrences read by deferring cursors from encoded postings equal
    /// those of the lists encoded, for random documents of two to four terms over few positions
    /// (so phrases occur often).
    @Test func occurrencesReadFromPostingsCountWhatTheListsCount() throws {
        var rng = SplitMix64(seed: 0x5EED_0F_0CC)
        var matched = 0
        for _ in 0..<400 {
            let terms = Int.random(in: 2...4, using: &rng)
            let lists: [[Occurrence]] = (0..<terms).map { _ in
                var set = Set<Occurrence>()
                for _ in 0..<Int.random(in: 1...12, using: &rng) {
                    set.insert(Occurrence(field: UInt8.random(in: 0...2, using: &rng), position: UInt32.random(in: 0...15, using: &rng)))
                }
                return set.sorted()
            }
            let fields: FieldSet = Bool.random(using: &rng) ? .all : FieldSet(field: 1)
            var expected: [UInt32] = []
            withBuffers(lists) { PhraseMatcher.frequencies($0, fields: fields, into: &expected) }
            // Each term's list as the one document of its own posting list, read by a cursor.
            let encoded = lists.map { PostingListEncoder.encode([Posting(document: 7, occurrences: $0)]) }
            var counts: [UInt32] = []
            try withEncoded(encoded) { buffers in
                var read: [[Occurrence]] = []
                for buffer in buffers {
                    var cursor = try PostingCursor(buffer, deferringGroups: true)
                    #expect(try cursor.next() == 7)
                    read.append(try cursor.readAllOccurrences())
                    #expect(try cursor.next() == nil)
                }
                withBuffers(read) { PhraseMatcher.frequencies($0, fields: fields, into: &counts) }
            }
            // Trailing zero counts aside, the same per field.
            func trimmed(_ c: [UInt32]) -> [UInt32] { Array(c.reversed().drop { $0 == 0 }.reversed()) }
            #expect(trimmed(counts) == trimmed(expected), "\(lists) in \(fields)")
            if expected.contains(where: { $0 > 0 }) { matched += 1 }
        }
        #expect(matched > 40)  // the random lists made phrases often enough to mean something
    }

    private func withEncoded(_ lists: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) throws -> Void) throws {
        func step(_ i: Int, _ acc: [UnsafeRawBufferPointer]) throws {
            if i == lists.count { return try body(acc) }
            try lists[i].withUnsafeBytes { try step(i + 1, acc + [$0]) }
        }
        try step(0, [])
    }
}
