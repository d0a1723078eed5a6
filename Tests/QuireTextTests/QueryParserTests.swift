import Testing
import QuireText

private let parser = QueryParser()
private let headline = FieldSet(field: 0)

private func parse(_ text: String) throws(QueryError) -> Query { try parser.parse(text) }

private func error(_ text: String) -> QueryError? {
    do {
        _ = try parser.parse(text)
        return nil
    } catch {
        return error
    }
}

@Suite struct QueryParserTests {
    @Test func termsAreAndedAndFolded() throws {
        #expect(try parse("Storm Café") == .and([.term("storm", fields: .all), .term("cafe", fields: .all)]))
        #expect(try parse("storm AND surge") == .and([.term("storm", fields: .all), .term("surge", fields: .all)]))
        #expect(try parse("storm") == .term("storm", fields: .all))
        // Lower-case operators are words.
        #expect(try parse("storm or surge") == .and([.term("storm", fields: .all), .term("or", fields: .all), .term("surge", fields: .all)]))
    }

    @Test func orBindsLooserThanAnd() throws {
        #expect(
            try parse("a b OR c")
                == .or([.and([.term("a", fields: .all), .term("b", fields: .all)]), .term("c", fields: .all)]))
        #expect(
            try parse("a (b OR c)")
                == .and([.term("a", fields: .all), .or([.term("b", fields: .all), .term("c", fields: .all)])]))
        #expect(try parse("a OR b OR c") == .or([.term("a", fields: .all), .term("b", fields: .all), .term("c", fields: .all)]))
    }

    @Test func negation() throws {
        let want = Query.and([.term("storm", fields: .all), .not(.term("surge", fields: .all))])
        #expect(try parse("storm -surge") == want)
        #expect(try parse("storm NOT surge") == want)
        #expect(try parse("-surge storm") == .and([.not(.term("surge", fields: .all)), .term("storm", fields: .all)]))
        // A minus inside a word is text.
        #expect(try parse("covid-19") == .phrase(["covid", "19"], lastIsPrefix: false, fields: .all))
        // Two negations cancel (the second was ignored: `surge NOT NOT storm` found surge alone).
        let both = Query.and([.term("surge", fields: .all), .term("storm", fields: .all)])
        #expect(try parse("surge NOT NOT storm") == both)
        #expect(try parse("surge --storm") == both)
        #expect(error("surge -(-storm)")?.reason == .onlyNegations)  // the group alone is only a negation
        // A field's term left out, written after the field (`headline:-surge` was headline:surge).
        let notInHeadline = Query.and([.term("storm", fields: .all), .not(.term("surge", fields: headline))])
        #expect(try parse("storm headline:-surge") == notInHeadline)
        #expect(try parse("storm headline:NOT surge") == notInHeadline)
        #expect(try parse("storm -headline:surge") == notInHeadline)
        #expect(try parse("storm section:-Arts") == .and([.term("storm", fields: .all), .not(.filter(name: "section", value: "Arts"))]))
        #expect(error("headline:-surge")?.reason == .onlyNegations)
    }

    @Test func phrasesAndPrefixes() throws {
        #expect(try parse("\"Storm  Surge\"") == .phrase(["storm", "surge"], lastIsPrefix: false, fields: .all))
        #expect(try parse("“storm surge”") == .phrase(["storm", "surge"], lastIsPrefix: false, fields: .all))
        #expect(try parse("\"storm sur*\"") == .phrase(["storm", "sur"], lastIsPrefix: true, fields: .all))
        #expect(try parse("\"storm sur\"*") == .phrase(["storm", "sur"], lastIsPrefix: true, fields: .all))
        #expect(try parse("clim*") == .prefix("clim", fields: .all))
        #expect(try parse("Clím*") == .prefix("clim", fields: .all))
        #expect(try parse("\"one\"") == .term("one", fields: .all))
        #expect(try parse("東京都") == .phrase(["東京", "京都"], lastIsPrefix: false, fields: .all))
        // A lone ideograph stands for the bigrams it begins (no document run has it alone).
        #expect(try parse("雨") == .prefix("雨", fields: .all))
        #expect(try parse("雨*") == .prefix("雨", fields: .all))
        #expect(try parse("iPhone用") == .phrase(["iphone", "用"], lastIsPrefix: true, fields: .all))
        #expect(try parse("用 iPhone") == .and([.prefix("用", fields: .all), .term("iphone", fields: .all)]))
        #expect(try parse("の") == .term("の", fields: .all))  // a lone kana (a particle) stays a term
        #expect(error("a*")?.reason == .prefixTooShort(minimum: 2))
    }

    /// A straight quote typed inside a word (Hebrew gershayim, inches) is text, not a phrase
    /// that never closes; one that begins a word still opens a phrase.
    @Test func aQuoteInsideAWordIsText() throws {
        #expect(try parse("צה\"ל") == .phrase(["צה", "ל"], lastIsPrefix: false, fields: .all))
        #expect(try parse("12\" pizza") == .and([.term("12", fields: .all), .term("pizza", fields: .all)]))
        #expect(try parse("a \"b c\"") == .and([.term("a", fields: .all), .phrase(["b", "c"], lastIsPrefix: false, fields: .all)]))
        #expect(try parse("headline:\"b c\"") == .phrase(["b", "c"], lastIsPrefix: false, fields: headline))
        #expect(error("storm \"surge")?.reason == .unterminatedPhrase)
    }

    /// A word of many colons is read in one pass (each `:` tested the whole word before: 80,000
    /// characters took three minutes); it is text, as `10:30` is, not a field.
    @Test func aLongWordOfColonsIsText() throws {
        let word = String(repeating: "a", count: 40_000) + "1" + String(repeating: ":", count: 40_000)
        #expect(try parse(word) == .term(String(repeating: "a", count: 128), fields: .all))
        #expect(try parse("ab1:cd") == .phrase(["ab1", "cd"], lastIsPrefix: false, fields: .all))
        #expect(error("headliné:storm") == nil)
    }

    /// Operators typed with an input method in fullwidth mode are operators.
    @Test func fullwidthOperatorsAreOperators() throws {
        #expect(try parse("ＮＹ＊") == .prefix("ny", fields: .all))
        #expect(try parse("ａ ＯＲ ｂ") == .or([.term("a", fields: .all), .term("b", fields: .all)]))
        #expect(try parse("ｓｔｏｒｍ －ｒａｉｎ") == .and([.term("storm", fields: .all), .not(.term("rain", fields: .all))]))
        #expect(try parse("＂ｓｔｏｒｍ ｓｕｒｇｅ＂") == .phrase(["storm", "surge"], lastIsPrefix: false, fields: .all))
        // Fullwidth brackets and colons are punctuation of the text, not syntax.
        #expect(try parse("トヨタ（株）") == .phrase(["トヨ", "ヨタ", "株"], lastIsPrefix: true, fields: .all))
        #expect(try parse("ＮＨＫ：ニュース") == .phrase(["nhk", "ニュ", "ュー", "ース"], lastIsPrefix: false, fields: .all))
    }

    @Test func fieldFilters() throws {
        #expect(try parse("headline:storm") == .term("storm", fields: headline))
        #expect(try parse("Headline:\"storm surge\"") == .phrase(["storm", "surge"], lastIsPrefix: false, fields: headline))
        #expect(
            try parse("headline:(storm OR abstract:flood)")
                == .or([.term("storm", fields: headline), .term("flood", fields: FieldSet(field: 1))]))
        #expect(try parse("storm section:Science") == .and([.term("storm", fields: .all), .filter(name: "section", value: "Science")]))
        #expect(try parse("section:\"Business Day\" deal") == .and([.filter(name: "section", value: "Business Day"), .term("deal", fields: .all)]))
        #expect(try parse("headline:clim*") == .prefix("clim", fields: headline))
        // Not a field name (digits): plain text.
        #expect(try parse("10:30") == .phrase(["10", "30"], lastIsPrefix: false, fields: .all))
    }

    @Test func nothingSearchableIsSkippedInsideAQuery() throws {
        #expect(try parse("storm 🎉") == .term("storm", fields: .all))
        #expect(error("🎉 —")?.reason == .nothingToSearch)
        #expect(error("")?.reason == .nothingToSearch)
    }

    @Test func malformedQueriesGiveTheReasonAndCharacterPosition() throws {
        let cases: [(String, QueryError.Reason, Int)] = [
            ("storm \"surge", .unterminatedPhrase, 6),
            ("(storm OR surge", .unclosedParenthesis, 0),
            ("storm)", .unexpectedClosingParenthesis, 5),
            ("storm ()", .emptyGroup, 6),
            ("storm OR", .missingOperand("OR"), 6),
            ("OR storm", .missingOperand("OR"), 0),
            ("storm AND", .missingOperand("AND"), 6),
            ("storm NOT", .missingOperand("NOT"), 6),
            ("headlin:storm", .unknownField("headlin"), 0),
            ("storm headline:", .missingOperand("headline:"), 6),
            ("storm AND AND flood", .missingOperand("AND"), 6),
            ("storm:", .unknownField("storm"), 0),
            ("http://example.com", .unknownField("http"), 0),
            ("section:(a OR b)", .misplacedFieldFilter("section"), 0),
            ("section:Sci*", .misplacedFieldFilter("section"), 0),
            ("headline:section:Arts", .misplacedFieldFilter("section"), 9),
            ("a*", .prefixTooShort(minimum: 2), 0),
            ("storm covid-1*", .prefixTooShort(minimum: 2, lastPart: "1"), 6),
            ("cl*m", .misplacedWildcard, 0),
            ("storm 🎉*", .misplacedWildcard, 6),
            ("-storm", .onlyNegations, 0),
            ("storm OR -surge", .onlyNegations, 9),
            ("🎉🎉 \"oops", .unterminatedPhrase, 3),  // characters, not bytes or scalars
        ]
        for (text, reason, position) in cases {
            let got = error(text)
            #expect(got?.reason == reason, "\(text)")
            #expect(got?.position == position, "\(text)")
        }
        #expect(error("storm \"surge")?.description == "unterminated phrase (a \" with no closing quote) at character 7")
        #expect(error("covid-1*")?.description == "a prefix needs at least 2 characters before '*' in its last part ('1' is shorter) at character 1")
        let deep = String(repeating: "(", count: 100) + "a" + String(repeating: ")", count: 100)
        #expect(error(deep)?.reason == .tooDeep)
        // As deep as maximumDepth is accepted, one level more refused.
        func nested(_ n: Int) -> String { String(repeating: "(", count: n) + "a" + String(repeating: ")", count: n) }
        #expect(try QueryParser().parse(nested(32)) == .term("a", fields: .all))
        #expect(error(nested(33))?.reason == .tooDeep)
        #expect(try QueryParser().parse(String(repeating: "NOT ", count: 32) + "a b") == .and([.term("a", fields: .all), .term("b", fields: .all)]))
        #expect(error(String(repeating: "NOT ", count: 33) + "a b")?.reason == .tooDeep)
        // An empty filter value names nothing: refused as `--section ''` is, not a query matching nothing.
        #expect(error("storm section:\"\"")?.reason == .missingOperand("section:"))
        #expect(error(String(repeating: "NOT ", count: 100) + "a b")?.reason == .tooDeep)
    }

    @Test func aQueryHoldsAtMostTheMaximumNumberOfWordsAndPhrases() throws {
        let words = (0..<64).map { "w\($0)" }
        #expect(try QueryParser().parse(words.joined(separator: " OR ")).terms.count == 64)
        // The 65th term, whatever its form, is refused where it starts; operators do not count.
        let sixtyFifth = words.joined(separator: " ") + " \"a phrase\" more"
        let got = error(sixtyFifth)
        #expect(got?.reason == .tooManyTerms(maximum: 64))
        #expect(got?.position == words.joined(separator: " ").count + 1)
        #expect(got?.description.hasPrefix("the query has more than 64 words") == true)
        // A phrase counts its words: each is a posting list read (a phrase of a thousand words
        // passed as one term).
        let long = "\"" + (0..<64).map { "p\($0)" }.joined(separator: " ") + "\""
        #expect(throws: Never.self) { try QueryParser().parse(long) }
        #expect(throws: QueryError(.tooManyTerms(maximum: 64), at: 0)) { try QueryParser().parse(long.dropLast() + " p64\"") }
        #expect(throws: QueryError(.tooManyTerms(maximum: 3), at: 2)) { try QueryParser(maximumTerms: 3).parse("a \"b c d\"") }
        // So does a word the tokenizer splits: a hyphenated or dotted one, a run of CJK (a word
        // of a hundred parts passed as one).
        #expect(throws: Never.self) { try QueryParser(maximumTerms: 3).parse("a b-c") }
        for split in ["b-c-d", "\"b.c.d\"", "東京大学"] {
            #expect(throws: QueryError(.tooManyTerms(maximum: 3), at: 2), "\(split)") { try QueryParser(maximumTerms: 3).parse("a " + split) }
        }
        let parser = QueryParser(maximumTerms: 3)
        #expect(throws: QueryError(.tooManyTerms(maximum: 3), at: 10)) { try parser.parse("a OR b c* d") }
        #expect(try parser.parse("a OR (b -c)") == .or([.term("a", fields: .all), .and([.term("b", fields: .all), .not(.term("c", fields: .all))])]))
        // A filter's value is not a scored term: --section adds one to a full query.
        #expect(throws: Never.self) { try parser.parse("(a b c) section:\"Arts\" desk:Culture") }
        #expect(throws: QueryError(.tooManyTerms(maximum: 3), at: 30)) { try parser.parse("(a b c) section:Arts headline:d") }
        // A negated filter value is no scored term either.
        #expect(throws: Never.self) { try parser.parse("a b c section:-Arts section:NOT Opinion") }
    }

    @Test func randomInputNeverTraps() {
        // Bounded fuzzing: random mixes of the language's pieces parse or fail with a position in range.
        let pieces = ["storm", " ", "OR", "AND", "NOT", "-", "(", ")", "\"", "*", "headline:", "section:", ":", "é", "東京", "🎉", "a", "“", "”", "x-y"]
        var rng = TestRandom(seed: 2026)
        var parsed = 0
        var failed = 0
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<rng.below(12) { text += pieces[rng.below(pieces.count)] }
            do {
                let query = try parser.parse(text)
                #expect(!query.terms.isEmpty || "\(query)".contains("filter"))
                parsed += 1
            } catch {
                #expect(error.position >= 0 && error.position <= text.count, "\(text)")
                failed += 1
            }
        }
        #expect(parsed > 100 && failed > 100)
    }
}
