import Foundation
import Testing
@testable import Quire
import QuireLMDB  // white-box: plants a bad posting under the store
import QuireText

/// A small searchable record: two text fields, a section and a date.
struct Note: Codable, Sendable, Hashable {
    var id: String
    var title: String
    var body: String
    var section: String
    var day: Date
}

let notes = StoreCollection<Note>(
    name: "notes", key: { .string($0.id) },
    indexes: [StoreIndex(name: "section", kind: .string, field: "section") { [.string($0.section)] }]
).searchable(
    StoreSearchIndex(
        fields: [
            StoreSearchField(name: "title", id: 0, weight: 2, path: "title"),
            StoreSearchField(name: "body", id: 1, weight: 1, path: "body"),
        ],
        filters: [StoreSearchFilter(name: "section", index: "section")], dateField: "day"
    ) { [SearchText(field: 0, $0.title), SearchText(field: 1, $0.body)] })

func note(_ id: String, _ title: String, _ body: String = "", section: String = "World", day: Int = 0) -> Note {
    Note(id: id, title: title, body: body, section: section, day: Date(timeIntervalSince1970: Double(day) * 86_400))
}

func withNotes<R>(_ values: [Note], _ body: (Store) async throws -> R) async throws -> R {
    try await withTemporaryStorePath { path in
        let store = try Store(path: path)
        defer { store.close() }
        try store.register(notes)
        for value in values { try await store.put(value, in: notes) }
        return try await body(store)
    }
}

func ids(_ store: Store, _ query: String, sort: SearchSort = .relevance, since: Date? = nil, until: Date? = nil)
    throws -> [String]
{
    try store.read { snap in
        try snap.search(query, in: notes, limit: 1000, sort: sort, since: since, until: until).map { $0.key.description }
    }
}

@Suite struct SearchStoreTests {
    @Test func aWriteSeesItsOwnPostingsAndReadersSeeThemAfterCommit() async throws {
        try await withNotes([]) { store in
            let inside = try await store.write { txn in
                try txn.put(note("a", "Storm surge floods the coast"), in: notes)
                return try txn.search("storm", in: notes).map(\.key)
            }
            #expect(inside == [.string("a")])
            #expect(try ids(store, "storm") == ["a"])
            #expect(try ids(store, "flood*") == ["a"])
        }
    }

    @Test func anUpsertMovesThePostingsAndADeleteRemovesThem() async throws {
        try await withNotes([note("a", "storm warning"), note("b", "storm over the hills")]) { store in
            try await store.put(note("a", "flood warning"), in: notes)
            #expect(try ids(store, "storm") == ["b"])
            #expect(try ids(store, "flood") == ["a"])
            #expect(try ids(store, "warning") == ["a"])
            try await store.delete(.string("b"), from: notes)
            #expect(try ids(store, "storm").isEmpty)
            #expect(try ids(store, "hills").isEmpty)
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
            #expect(report.postings == 2)  // flood, warning
            let stats = try store.storeStatistics().collections.first { $0.name == "notes" }
            #expect(stats?.indexes.first { $0.name == "search:post" }?.entries == 2)
        }
    }

    @Test func aBatchPutIndexesLikeOnePutAtATime() async throws {
        let words = ["storm", "flood", "rain", "sun", "wind", "snow", "heat", "cold"]
        let first = (0..<120).map { i in note("n\(i % 90)", "\(words[i % 8]) \(words[(i / 8) % 8])", "day \(i)") }
        let second = (0..<60).map { i in note("n\(i * 2)", "\(words[(i + 3) % 8]) later", "day \(i + 500)") }
        try await withNotes([note("n1", "hills and storm"), note("n200", "kept as is")]) { batched in
            try await withNotes([note("n1", "hills and storm"), note("n200", "kept as is")]) { single in
                // Existing keys, a key twice in one batch, then a second batch over the first.
                for values in [first, second] {
                    try await batched.write { txn in try txn.put(contentsOf: values, in: notes) }
                    try await single.write { txn in for value in values { try txn.put(value, in: notes) } }
                }
                for query in ["storm", "later", "rain wind", "hills", "kept", "\"day 7\"", "sn*", "storm -rain"] {
                    #expect(try Set(ids(batched, query)) == Set(ids(single, query)), "\(query)")
                }
                #expect(try !ids(batched, "later").isEmpty && ids(batched, "hills").isEmpty)
                let report = try batched.verify()
                #expect(report.isSound, "\(report.problems)")
                #expect(report.postings == (try single.verify().postings))
            }
        }
    }

    /// The puts of a transaction are indexed together before the commit; what the transaction
    /// itself does meanwhile (search, delete, put again) sees them as if indexed at once.
    @Test func aTransactionSeesItsOwnQueuedPostings() async throws {
        try await withNotes([note("old", "storm long ago")]) { store in
            let inside = try await store.write { txn -> [String] in
                try txn.put(note("a", "storm tonight"), in: notes)
                let seen = try txn.search("storm", in: notes, limit: 10).map { $0.key.description }.sorted()
                try txn.put(note("b", "gone soon"), in: notes)
                try txn.delete(.string("b"), from: notes)
                try txn.put(note("c", "first text"), in: notes)
                try txn.put(note("c", "second text"), in: notes)
                try txn.put(note("old", "calm now"), in: notes)
                return seen
            }
            #expect(inside == ["a", "old"])
            #expect(try ids(store, "storm") == ["a"])
            #expect(try ids(store, "gone").isEmpty && ids(store, "first").isEmpty)
            #expect(try ids(store, "second") == ["c"] && ids(store, "calm") == ["old"])
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
            // A rolled-back transaction leaves nothing queued behind.
            await #expect(throws: CancellationError.self) {
                try await store.write { txn in
                    try txn.put(note("d", "never stored"), in: notes)
                    throw CancellationError()
                }
            }
            try await store.put(note("e", "later"), in: notes)
            #expect(try ids(store, "never").isEmpty && ids(store, "later") == ["e"])
        }
    }

    @Test func anIndexOfTheOldestLayoutStillReadsAndUpdates() async throws {
        try await withTemporaryStorePath { path in
            let before = try await indexTwoStormNotes(path)
            // Two declared fields (ids 0 and 1): two lengths, the check, then the key ("a" or "b").
            let sizes = try rewriteIndexInTheOldestLayout(path)
            #expect(sizes == [7, 7])
            let store = try reopenAnsweringAsBefore(path, before)
            defer { store.close() }
            try await store.put(note("b", "storm day"), in: notes)  // its old lengths undone from 16
            try await store.put(note("c", "storm"), in: notes)
            #expect(try Set(ids(store, "storm")) == ["a", "b", "c"])
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
    }

    /// An index made with the tokenizer's first rules (before marks composed and format
    /// characters were skipped) keeps them for every write and query: a document is removed with
    /// the terms it was indexed with, so nothing of it is left behind.
    @Test func anIndexOfTheFirstTokenizerRulesKeepsThem() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(notes)
                try await store.put(note("x", "calm"), in: notes)
            }
            #expect(try rewriteIndexWithTheFirstTokenizerRules(path))
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            try await store.put(note("a", "by\u{FEFF}te и\u{306}од storm"), in: notes)
            try await store.put(note("b", "byte йод"), in: notes)
            // Queried by the first rules too: the format character splits, the breve is dropped.
            #expect(try Set(ids(store, "by")) == ["a"])
            #expect(try Set(ids(store, "byte")) == ["b"])
            #expect(try Set(ids(store, "иод")) == ["a"])
            // A query's own text too: the format character splits it into the phrase "by te".
            #expect(try Set(ids(store, "by\u{FEFF}te")) == ["a"])
            // Snippets mark what the index matched.
            var highlighter = try store.read { snap in try snap.searchHighlighter(for: "te", inCollectionNamed: "notes") }
            #expect(highlighter.snippet(of: "by\u{FEFF}te") == "by\u{FEFF}«te»")
            let before = try store.verify()
            #expect(before.isSound, "\(before.problems)")
            try await store.put(note("a", "calm"), in: notes)
            #expect(try ids(store, "by").isEmpty)
            #expect(try ids(store, "иод").isEmpty)
            try await store.delete(.string("b"), from: notes)
            #expect(try ids(store, "byte").isEmpty)
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
    }

    /// A one-character CJK query finds the documents where the character begins a bigram (it was
    /// in none: a run of the text holds it only inside its bigrams), and a word ending in one
    /// (`iPhone用`) finds the longer run that continues it.
    @Test func aLoneIdeographFindsTheBigramsItBegins() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            try await store.put(note("a", "今日は雨です"), in: notes)
            try await store.put(note("b", "iPhone用ケース"), in: notes)
            try await store.put(note("c", "晴れ 雨"), in: notes)
            try await store.put(note("d", "iPhone Android"), in: notes)
            try await store.put(note("e", "昨日は大雨。"), in: notes)
            #expect(try Set(ids(store, "雨")) == ["a", "c", "e"])
            #expect(try Set(ids(store, "大雨")) == ["e"])
            #expect(try Set(ids(store, "\"は大雨\"")) == ["e"])
            #expect(try Set(ids(store, "iPhone用")) == ["b"])
            #expect(try Set(ids(store, "iPhone -用")) == ["d"])
            var highlighter = try store.read { snap in try snap.searchHighlighter(for: "雨", inCollectionNamed: "notes") }
            #expect(highlighter.snippet(of: "今日は雨です") == "今日は«雨»です")
            #expect(highlighter.snippet(of: "昨日は大雨。") == "昨日は大«雨»。")
            var phrase = try store.read { snap in try snap.searchHighlighter(for: "iPhone用", inCollectionNamed: "notes") }
            #expect(phrase.snippet(of: "iPhone用ケース") == "«iPhone用»ケース")
        }
    }

    /// An index made with the tokenizer's third rules (before `ß`, digits and Arabic hamza were
    /// folded and a run's last Han character became a term) keeps them for what it writes, removes
    /// and looks for; a new index has the fourth.
    @Test func anIndexOfTheThirdTokenizerRulesKeepsThem() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(notes)
                try await store.put(note("y", "Straße ٢٠٢٤ أحمد 大雨"), in: notes)
                for query in ["strasse", "STRASSE", "2024", "احمد", "雨"] { #expect(try Set(ids(store, query)) == ["y"], "\(query)") }
                try await store.delete(.string("y"), from: notes)
                try await store.put(note("x", "calm"), in: notes)
            }
            #expect(try rewriteIndexWithTheFirstTokenizerRules(path, revision: 3))
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            try await store.put(note("a", "Straße ٢٠٢٤ أحمد 大雨"), in: notes)
            for query in ["strasse", "2024", "احمد", "雨"] { #expect(try ids(store, query).isEmpty, "\(query)") }
            for query in ["straße", "٢٠٢٤", "أحمد", "大雨"] { #expect(try Set(ids(store, query)) == ["a"], "\(query)") }
            try await store.delete(.string("a"), from: notes)
            #expect(try ids(store, "straße").isEmpty)
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
    }

    /// An index made with the tokenizer's second rules (before compatibility forms read as NFKC
    /// reads them) keeps them likewise.
    @Test func anIndexOfTheSecondTokenizerRulesKeepsThem() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(notes)
                try await store.put(note("y", "\u{FB01}nance ｶﾀｶﾅ"), in: notes)
                #expect(try Set(ids(store, "finance")) == ["y"])
                #expect(try Set(ids(store, "カタカナ")) == ["y"])
                try await store.delete(.string("y"), from: notes)
                try await store.put(note("x", "calm"), in: notes)
            }
            #expect(try rewriteIndexWithTheFirstTokenizerRules(path, revision: 2))
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            try await store.put(note("a", "\u{FB01}nance ｶﾀｶﾅ"), in: notes)
            #expect(try ids(store, "finance").isEmpty)
            #expect(try Set(ids(store, "\u{FB01}nance")) == ["a"])
            #expect(try Set(ids(store, "ｶﾀｶﾅ")) == ["a"])
            try await store.delete(.string("a"), from: notes)
            #expect(try ids(store, "\u{FB01}nance").isEmpty)
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
    }

    @Test func anIndexWithHashedDocumentEntriesStillReadsUpdatesAndVerifies() async throws {
        try await withTemporaryStorePath { path in
            let before = try await indexTwoStormNotes(path)
            // As the builds of 2026-12-02 to 12-04 wrote them: keyed by 8-byte hashes, flag bit 0.
            let keys = try rewriteDocumentEntriesHashed(path)
            #expect(keys.allSatisfy { $0.count == 8 } && keys.count == 2)
            do {
                let store = try reopenAnsweringAsBefore(path, before)
                defer { store.close() }
                try await store.put(note("b", "storm day"), in: notes)
                try await store.put(note("c", "storm"), in: notes)
                try await store.delete(.string("a"), from: notes)
                #expect(try Set(ids(store, "storm")) == ["b", "c"])
                let report = try store.verify()
                #expect(report.isSound, "\(report.problems)")
            }
            // New entries keep the index's layout: "b" and "c" by their hashes, "a" gone.
            let env = try Environment(path: path)
            defer { env.close() }
            let documents = try env.openDatabase("s:notes:doc")
            let stored = try env.read { txn in txn.entries(in: documents).map(\.keyBytes) }
            #expect(Set(stored) == Set(["b", "c"].map { SearchDocumentEntries.hash(Array($0.utf8)) }))
        }
    }

    @Test func documentEntriesHoldTheirNumberOnlyAndOlderOnesListingTermsStillUpdate() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                try store.register(notes)
                try await store.put(note("a", "storm surge"), in: notes)
                try await store.put(note("b", "quiet day"), in: notes)
                store.close()
            }
            // In the layout keyed by record keys, entries are 4-byte numbers; "a"'s is rewritten
            // as the oldest stores wrote them: the number, then the document's terms (varint
            // length and bytes each).
            _ = try rewriteIndexInTheOldestLayout(path)
            let sizes = try rewriteEntryAsListingTerms(path, keyEnding: "a", terms: ["storm", "surge"])
            #expect(sizes == [4, 4])
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            #expect(try store.verify().isSound)
            try await store.put(note("a", "flood warning"), in: notes)  // its old terms from the entry
            try await store.put(note("b", "storm day"), in: notes)  // its old terms from its old record
            #expect(try ids(store, "surge").isEmpty)
            #expect(try ids(store, "quiet").isEmpty)
            #expect(try ids(store, "storm") == ["b"])
            #expect(try ids(store, "flood") == ["a"])
            try await store.delete(.string("b"), from: notes)  // its terms from the record deleted
            #expect(try ids(store, "storm").isEmpty)
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
            #expect(report.postings == 2)  // flood, warning
        }
    }

    @Test func bulkInsertBuildsThePostingsChunkByChunk() async throws {
        let words = ["storm", "flood", "rain", "sun", "wind", "snow", "heat", "cold"]
        let values = (0..<450).map { i in
            note(
                String(format: "n%04d", (i * 7919) % 450), "\(words[i % 8]) \(words[(i / 8) % 8])",
                "day \(i) of \(words[(i * 3) % 8])", section: i % 3 == 0 ? "Science" : "World", day: i)
        }
        try await withNotes([]) { store in
            try await store.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 100, sortWindow: 0))
            // Again, replacing every record (the chunks' upsert path).
            try await store.bulkInsert(values.reversed(), into: notes, options: BulkInsertOptions(chunkSize: 64))
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
            let expected = Set(
                values.filter {
                    let words = Set(($0.title + " " + $0.body).split(separator: " "))
                    return words.contains("storm") && words.contains("rain")
                }.map(\.id))
            #expect(try Set(ids(store, "storm rain")) == expected)
            #expect(!expected.isEmpty)
            let science = Set(values.filter { $0.section == "Science" && $0.title.hasPrefix("sun") }.map(\.id))
            #expect(try Set(ids(store, "title:\"sun\" section:Science")).isSuperset(of: science))
        }
    }

    @Test func longKeysComeBackWhole() async throws {
        let long = String(repeating: "k", count: 700) + "1"
        let other = String(repeating: "k", count: 700) + "2"
        try await withNotes([note(long, "aurora borealis"), note(other, "aurora australis")]) { store in
            #expect(try ids(store, "borealis") == [long])
            #expect(try Set(ids(store, "aurora")) == [long, other])
            try await store.delete(.string(long), from: notes)
            #expect(try ids(store, "aurora") == [other])
            #expect(try store.verify().isSound)
        }
    }

    @Test func queryOperatorsPhrasesPrefixesFieldsAndFilters() async throws {
        let corpus = [
            note("a", "storm surge", "the coast braces", section: "Science", day: 3),
            note("b", "surge of storm chasers", "storms everywhere", day: 1),
            note("c", "quiet weather", "no storm today", section: "Science", day: 2),
            note("d", "covid-19 update", "cases fall", day: 4),
        ]
        try await withNotes(corpus) { try checkOperators($0) }
    }

    @Test func aPhraseRepeatingATermMatchesOnlyWhereItRepeats() async throws {
        let corpus = [
            note("a", "the the storm"),
            note("b", "the storm the", "storm the storm"),
            note("c", "the", "the"),
            note("d", "storm storm storm", "the storm the storm"),
        ]
        try await withNotes(corpus) { store throws in
            #expect(try ids(store, "\"the the\"").sorted() == ["a"])
            #expect(try ids(store, "\"the storm the\"").sorted() == ["b", "d"])
            #expect(try ids(store, "\"storm the storm\"").sorted() == ["b", "d"])
            #expect(try ids(store, "\"storm storm storm\"").sorted() == ["d"])
            #expect(try ids(store, "\"the the the\"").isEmpty)
            #expect(try ids(store, "\"the storm th*\"").sorted() == ["b", "d"])
        }
    }

    @Test func aMalformedQueryIsATypedErrorWithItsPosition() async throws {
        try await withNotes([note("a", "storm")]) { store in
            #expect {
                try store.read { snap in try snap.search("storm \"surge", in: notes) }
            } throws: { error in
                guard let e = error as? SearchError else { return false }
                return e.position == 6 && e.reason.contains("unterminated phrase") && e.kind == .malformed
                    && e.message == "malformed query: " + e.description
            }
            #expect(throws: SearchError.self) { try store.read { snap in try snap.search("headlin:storm", in: notes) } }
            #expect(throws: SearchError.self) { try store.read { snap in try snap.search("-storm", in: notes) } }
        }
    }

    /// BM25F against scores computed by hand from the formula in docs/SEARCH.md.
    @Test func rankingFollowsHandComputedBM25F() async throws {
        // title weight 2, body weight 1; k1 = 1.2, b = 0.75.
        let corpus = [
            note("a", "storm", "calm calm calm"),  // title tf 1 (len 1), body len 3
            note("b", "calm", "storm storm calm"),  // body tf 2 (len 3), title len 1
            note("c", "calm day", "calm"),  // no storm
        ]
        try await withNotes(corpus) { store in
            let hits = try store.read { snap in try snap.search("storm", in: notes) }
            #expect(hits.map(\.key) == [.string("a"), .string("b")])
            let n = 3.0
            let df = 2.0
            let idf = log(1 + (n - df + 0.5) / (df + 0.5))
            let avgTitle = (1.0 + 1 + 2) / 3
            let avgBody = (3.0 + 3 + 1) / 3
            func score(_ tf: Double) -> Double { idf * tf * 2.2 / (tf + 1.2) }
            let tfA = 2 * 1 / (0.25 + 0.75 * 1 / avgTitle)
            let tfB = 1 * 2 / (0.25 + 0.75 * 3 / avgBody)
            #expect(abs(hits[0].score - score(tfA)) < 1e-9)
            #expect(abs(hits[1].score - score(tfB)) < 1e-9)
            // Two terms: the scores add.
            let both = try store.read { snap in try snap.search("storm OR calm", in: notes) }
            #expect(both.count == 3)
        }
    }

    /// A term (or any part) named several times is read once and scored as often as it is named,
    /// in an AND, an OR and a group, so that a query repeating a common word thousands of times
    /// holds one copy of its postings, not thousands.
    @Test func aRepeatedPartIsScoredAsOftenAsItIsNamed() async throws {
        let corpus = [
            note("a", "storm", "calm calm calm"), note("b", "calm", "storm storm calm"), note("c", "calm day", "calm"),
        ]
        try await withNotes(corpus) { store in
            func scores(_ query: String) throws -> [String: Double] {
                let hits = try store.read { snap in try snap.search(query, in: notes) }
                return Dictionary(uniqueKeysWithValues: hits.map { ($0.key.description, $0.score) })
            }
            let storm = try scores("storm"), calm = try scores("calm"), day = try scores("day")
            let cases: [(String, [String: Double])] = [
                ("storm storm storm", storm.mapValues { 3 * $0 }),
                ("storm OR storm", storm.mapValues { 2 * $0 }),
                ("calm calm day", ["c": try #require(day["c"]) + 2 * (try #require(calm["c"]))]),
                ("(storm OR calm) (storm OR calm)", calm.merging(storm, uniquingKeysWith: +).mapValues { 2 * $0 }),
                ("\"calm day\" OR \"calm day\"", try scores("\"calm day\"").mapValues { 2 * $0 }),
            ]
            for (query, expected) in cases {
                let got = try scores(query)
                #expect(got.keys.sorted() == expected.keys.sorted(), "\(query)")
                for (key, score) in expected { #expect(abs(got[key, default: 0] - score) < 1e-9, "\(query): \(key)") }
            }
        }
    }

    /// Under an OR, a group's words and phrases score only in the documents that match the whole
    /// group: a document found through another branch ranks as that branch alone ranks it, whether
    /// the group's part it also holds is a word, a phrase, a prefix or cut by a NOT.
    @Test func aGroupUnderAnORScoresOnlyWhereTheGroupMatched() async throws {
        let corpus = [
            note("d1", "storm alpha beta"), note("d2", "storm"), note("d3", "gamma delta"), note("d4", "nothing here"),
        ]
        try await withNotes(corpus) { store in
            func scores(_ query: String) throws -> [String: Double] {
                let hits = try store.read { snap in try snap.search(query, in: notes) }
                return Dictionary(uniqueKeysWithValues: hits.map { ($0.key.description, $0.score) })
            }
            let storm = try scores("storm")
            #expect(storm.keys.sorted() == ["d1", "d2"])
            for query in [
                "(gamma alpha) OR storm", "(gamma \"alpha beta\") OR storm", "(gamma alph*) OR storm",
                "(alpha -beta) OR storm", "storm OR (alpha -beta section:World)",
            ] {
                let got = try scores(query)
                #expect(got.keys.sorted() == ["d1", "d2"], "\(query)")
                for (key, score) in storm { #expect(abs(got[key, default: 0] - score) < 1e-9, "\(query): \(key)") }
            }
            // Where the group matches, its parts add.
            let alpha = try scores("alpha"), phrase = try scores("\"alpha beta\"")
            let grouped = try scores("(storm \"alpha beta\") OR gamma")
            let d1 = try #require(storm["d1"]) + (try #require(phrase["d1"]))
            #expect(abs(grouped["d1", default: 0] - d1) < 1e-9)
            let either = try scores("(storm alpha) OR (alpha beta)")
            #expect(abs(either["d1", default: 0] - (try #require(storm["d1"]) + 2 * (try #require(alpha["d1"])) + (try #require(scores("beta")["d1"])))) < 1e-9)
        }
    }

    /// A query whose words match more postings than the store's limit throws a typed error
    /// before it holds them; narrower queries on the same store still answer.
    @Test func aQueryMatchingMorePostingsThanTheLimitIsRefused() async throws {
        try await withTemporaryStorePath { path in
            var options = StoreOptions()
            options.searchPostingLimit = 10
            let store = try Store(path: path, options: options)
            defer { store.close() }
            try store.register(notes)
            for i in 0..<8 { try await store.put(note("n\(i)", "common storm \(i)", "common word"), in: notes) }
            func search(_ query: String) throws -> [SearchHit] { try store.read { snap in try snap.search(query, in: notes) } }
            #expect(try search("storm").count == 8)  // 8 postings
            #expect(try search("com* 3").count == 1)  // 8 + 1
            #expect(try search("\"common storm\"").count == 8)
            let manyWords = (0..<65).map { "w\($0)" }.joined(separator: " ")
            for query in ["storm OR word", "common storm", "storm OR com*", "\"common storm\" OR \"common word\"", manyWords] {
                let error = #expect(throws: SearchError.self, "\(query)") { try search(query) }
                #expect(error?.kind == .tooBroad)
                #expect(error?.message == error?.description)  // not called malformed
                let expected = query == manyWords ? "the query has more than 64 words" : "the query is too broad to rank"
                #expect(error?.description.hasPrefix(expected) == true, "\(String(describing: error))")
            }
        }
    }

    @Test func repeatedPartsAreCountedInFirstSeenOrder() {
        let a = Query.term("a", fields: .all), b = Query.prefix("bo", fields: .all)
        let counted = SearchLeaf.counted([a, b, a, a, .not(b), b])
        #expect(counted.map(\.0) == [a, b, .not(b)])
        #expect(counted.map(\.1) == [3, 2, 1])
    }

    /// The index layouts verify reads: the current one, document entries keyed by hashes, and
    /// the oldest (no stored checks: every document's postings are summed by term too).
    enum Layout: CaseIterable { case current, hashed, oldest }

    /// Verify looks each document's number entry up again rather than holding every key: a
    /// planted posting, a missing one, and two document entries whose numbers were swapped are
    /// each found, in every layout.
    @Test(arguments: Layout.allCases) func verifyFindsDamageInEveryLayout(_ layout: Layout) async throws {
        try await withTemporaryStorePath { path in
            _ = try await indexTwoStormNotes(path)
            switch layout {
            case .current: break
            case .hashed: _ = try rewriteDocumentEntriesHashed(path)
            case .oldest: _ = try rewriteIndexInTheOldestLayout(path)
            }
            func verified() throws -> [String] {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(notes)
                return try store.verify().problems
            }
            try plantBadPostings(path)
            let planted = try verified()
            #expect(planted.contains { $0.contains("posting of 'ghost' for missing document 42") }, "\(planted)")
            #expect(planted.contains { $0.contains("record a: no posting for 'surge'") }, "\(planted)")
            try swapDocumentEntryValues(path)
            let swapped = try verified()
            #expect(swapped.filter { $0.contains("document entry and number entry disagree") }.count == 2, "\(swapped)")
        }
    }

    @Test func verifyFindsAPlantedPostingAndAMissingOne() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                try store.register(notes)
                try await store.put(note("a", "storm surge"), in: notes)
                #expect(try store.verify().isSound)
                store.close()
            }
            try plantBadPostings(path)
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("posting of 'ghost' for missing document 42") })
            #expect(report.problems.contains { $0.contains("no posting for 'surge'") })
        }
    }
}

@Suite struct SearchVerifyBatchTests {
    /// A word of letters only for each number (one token, unique to its note).
    static func word(_ i: Int) -> String {
        var n = i
        var out = "q"
        repeat {
            out.append(Character(UnicodeScalar(UInt8(97 + n % 26))))
            n /= 26
        } while n > 0
        return out
    }

    /// More records than verify analyses in one batch: a posting taken out of the middle, and
    /// occurrences changed in another, are each found and named by their record.
    @Test func verifyNamesTheRecordsOfAMissingPostingAndOfWrongOccurrences() async throws {
        try await withTemporaryStorePath { path in
            let count = 5_000
            do {
                let store = try Store(path: path)
                try store.register(notes)
                let values = (0..<count).map { note("n\($0)", "storm surge", "tide " + Self.word($0)) }
                try await store.write { try $0.put(contentsOf: values, in: notes) }
                let report = try store.verify()
                #expect(report.isSound, "\(report.problems.prefix(3))")
                #expect(report.postings == 4 * count)
                store.close()
            }
            try Self.plant(path, missing: 2500, changed: 4321)
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            let report = try store.verify()
            let missing = Self.word(2500)
            let changed = Self.word(4321)
            #expect(report.problems.contains { $0.contains("n2500") && $0.contains("no posting for '\(missing)'") }, "\(report.problems)")
            #expect(report.problems.contains { $0.contains("n4321") && $0.contains("wrong occurrences of '\(changed)'") }, "\(report.problems)")
        }
    }

    /// Verify polls for a signal all through the full-text index's check (its numbers, document
    /// entries and posting blocks), not only while it walks the records: the first Ctrl-C of a
    /// long `quire verify` stops it there too.
    @Test func verifyStopsWhenCancelledInsideTheFullTextIndex() async throws {
        try await withTemporaryStorePath { path in
            let count = 5_000
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            try await store.write { try $0.put(contentsOf: (0..<count).map { note("n\($0)", "storm", Self.word($0)) }, in: notes) }
            var polls = 0
            let report = try store.verify(isCancelled: {
                polls += 1
                return false
            })
            #expect(report.isSound, "\(report.problems.prefix(3))")
            let recordPolls = (count + Store.verifyBatch - 1) / Store.verifyBatch
            // A number entry, a document entry and at least one block of its own word a note.
            #expect(polls >= recordPolls + 3 * count / 1_024, "\(polls) polls")
            var seen = 0
            #expect {
                _ = try store.verify(isCancelled: {
                    seen += 1
                    return seen == polls  // the last poll: in the posting blocks
                })
            } throws: { error in
                (error as? StoreError)?.code == .cancelled
            }
        }
    }

    /// A damaged postings page leaves thousands of documents wrong: naming each one term by
    /// term took minutes, without a poll. The first hundred are named, the rest counted, and a
    /// signal stops the check between documents.
    @Test func verifyNamesAHundredWrongDocumentsAndCountsTheRest() async throws {
        try await withTemporaryStorePath { path in
            let count = 3_000
            do {
                let store = try Store(path: path)
                try store.register(notes)
                try await store.write { try $0.put(contentsOf: (0..<count).map { note("n\($0)", "storm", Self.word($0)) }, in: notes) }
                store.close()
            }
            #expect(try Self.deleteBlocks(of: "storm", path) > 0)
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            var polls = 0
            let report = try store.verify(isCancelled: {
                polls += 1
                return false
            })
            let named = report.problems.filter { $0.contains("no posting for 'storm'") }
            #expect(named.count == Store.namedDocumentLimit, "\(report.problems.prefix(3))")
            let rest = count - Store.namedDocumentLimit
            #expect(report.problems.contains { $0.hasSuffix(": \(rest) more documents whose postings differ from their text (not named one by one)") })
            // The last poll is in the naming of the wrong documents (each one polls).
            #expect(polls > Store.namedDocumentLimit)
            var seen = 0
            #expect {
                _ = try store.verify(isCancelled: {
                    seen += 1
                    return seen == polls - Store.namedDocumentLimit / 2
                })
            } throws: { error in
                (error as? StoreError)?.code == .cancelled
            }
        }
    }

    /// Deletes every posting block of `word`; returns how many.
    static func deleteBlocks(of word: String, _ path: String) throws -> Int {
        let env = try Environment(path: path)
        defer { env.close() }
        let postings = try env.openDatabase("s:notes:post")
        let prefix = Array(word.utf8) + [0]
        let keys = try env.read { txn in txn.entries(in: postings).map { Array($0.keyBytes) }.filter { $0.starts(with: prefix) } }
        try env.write { txn in for key in keys { _ = try txn.delete(key, in: postings) } }
        return keys.count
    }

    /// Deletes the posting of note `missing`'s own word; moves note `changed`'s own word from
    /// body position 1 to 5.
    static func plant(_ path: String, missing: Int, changed: Int) throws {
        let env = try Environment(path: path)
        defer { env.close() }
        let postings = try env.openDatabase("s:notes:post")
        let numbers = try env.openDatabase("s:notes:num")
        func number(of id: String) throws -> [UInt8] {
            try env.read { txn in
                txn.entries(in: numbers).first { $0.valueBytes.suffix(id.utf8.count).elementsEqual(id.utf8) }.map { Array($0.keyBytes) }
            } ?? []
        }
        func varint(_ value: UInt32) -> [UInt8] {
            var v = value
            var out: [UInt8] = []
            while v >= 0x80 {
                out.append(UInt8(v & 0x7F) | 0x80)
                v >>= 7
            }
            return out + [UInt8(v)]
        }
        let gone = try number(of: "n\(missing)")
        let moved = try number(of: "n\(changed)")
        let n = moved.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        try env.write { txn in
            _ = try txn.delete(Array(word(missing).utf8) + [0] + gone, in: postings)
            // One document in one block: the skip entry (last document, block length), then the
            // document and its one group: 1 occurrence in field 1, the last group (35), at 5.
            let block = [1, 1] + varint(n) + [UInt8(varint(n).count + 2)] + varint(n) + [35, 5]
            try txn.put(block, forKey: Array(word(changed).utf8) + [0] + moved, in: postings)
        }
    }
}

/// Notes with a date index on the search index's date field: `since`/`until` read it first
/// when the dates are more selective than the words.
let datedNotes = StoreCollection<Note>(
    name: "dated", key: { .string($0.id) },
    indexes: [StoreIndex(\Note.day), StoreIndex(name: "section", kind: .string, field: "section") { [.string($0.section)] }]
).searchable(
    StoreSearchIndex(
        fields: [StoreSearchField(name: "title", id: 0, weight: 1, path: "title")],
        filters: [StoreSearchFilter(name: "section", index: "section")], dateField: "day"
    ) { [SearchText(field: 0, $0.title)] })

@Suite struct SearchDateIndexTests {
    @Test func sinceAndUntilGiveTheSameHitsThroughTheDateIndex() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(datedNotes)
            let values = (0..<300).map { note(String(format: "d%03d", $0), $0 % 3 == 0 ? "storm rain" : "storm", day: $0) }
            try await store.bulkInsert(values, into: datedNotes)
            func day(_ d: Int) -> Date { Date(timeIntervalSince1970: Double(d) * 86_400) }
            func hits(_ query: String, _ since: Int?, _ until: Int?) throws -> [String] {
                try store.read { snap in
                    try snap.search(query, in: datedNotes, limit: 1000, sort: .oldest, since: since.map(day), until: until.map(day))
                        .map { $0.key.description }
                }
            }
            // A narrow range (the index is read), a wide one (the words are more selective), open ends.
            #expect(try hits("storm", 100, 109) == (100...109).map { String(format: "d%03d", $0) })
            #expect(try hits("rain", 0, 299) == stride(from: 0, to: 300, by: 3).map { String(format: "d%03d", $0) })
            #expect(try hits("rain", 290, nil) == ["d291", "d294", "d297"])
            #expect(try hits("storm", nil, 2) == ["d000", "d001", "d002"])
            #expect(try hits("storm", 200, 100).isEmpty)
        }
    }

    /// Newest or oldest first with many matches, the page comes from walking the date index
    /// (a walk that runs long falls back to reading every match's date): the same order as
    /// sorting every match — by date, ties (three notes a day) by score, then key.
    @Test func aDateOrderedPageOfManyMatchesIsTheSortedMatchesFirst() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(datedNotes)
            // "tide" in every note (same length, same score); "ebb" in the 300 oldest only: a
            // newest-first walk would pass 1,500 entries for them and gives up.
            let values = (0..<1_800).map { i in
                note(String(format: "d%04d", (i * 7) % 1_800), i < 300 ? "tide ebb" : "tide flow", day: i / 3)
            }
            try await store.bulkInsert(values, into: datedNotes)
            let byDay = values.sorted { $0.day != $1.day ? $0.day < $1.day : $0.id < $1.id }
            let newestFirst = values.sorted { $0.day != $1.day ? $0.day > $1.day : $0.id < $1.id }
            func page(_ query: String, _ sort: SearchSort, _ limit: Int, since: Int? = nil) throws -> [String] {
                try store.read { snap in
                    try snap.search(
                        query, in: datedNotes, limit: limit, sort: sort,
                        since: since.map { Date(timeIntervalSince1970: Double($0) * 86_400) }
                    ).map { $0.key.description }
                }
            }
            let ebb = newestFirst.filter { $0.title.hasSuffix("ebb") }
            let fromDay250 = byDay.filter { $0.day >= Date(timeIntervalSince1970: 250 * 86_400) }
            for limit in [1, 7, 8, 30] {
                #expect(try page("tide", .newest, limit) == newestFirst.prefix(limit).map(\.id))
                #expect(try page("tide", .oldest, limit) == byDay.prefix(limit).map(\.id))
                #expect(try page("ebb", .newest, limit) == ebb.prefix(limit).map(\.id))
                #expect(try page("tide", .oldest, limit, since: 250) == fromDay250.prefix(limit).map(\.id))
            }
        }
    }
}

/// Adds a posting block of a document that does not exist and removes the block a record needs.
/// Rewrites the `s:notes:doc` entry whose record key ends with `keyEnding` in the older format
/// that listed the document's terms; returns the sizes every entry had before.
private func rewriteEntryAsListingTerms(_ path: String, keyEnding: Character, terms: [String]) throws -> [Int] {
    let env = try Environment(path: path)
    defer { env.close() }
    let documents = try env.openDatabase("s:notes:doc")
    let entries = try env.read { txn in txn.entries(in: documents).map { ($0.keyBytes, $0.valueBytes) } }
    guard let (key, value) = entries.first(where: { $0.0.last == keyEnding.asciiValue }) else { return [] }
    var listed = Array(value.prefix(4))
    for term in terms {
        listed.append(UInt8(term.utf8.count))
        listed += Array(term.utf8)
    }
    try env.write { txn in try txn.put(listed, forKey: key, in: documents) }
    return entries.map { $0.1.count }
}

/// Stores notes "a" and "b" at `path` (both mention a storm); returns the search for "storm"
/// as "key score" lines, to compare with after the index is rewritten in an older layout.
private func indexTwoStormNotes(_ path: String) async throws -> [String] {
    let store = try Store(path: path)
    defer { store.close() }
    try store.register(notes)
    try await store.put(note("a", "storm surge", "the storm came at night"), in: notes)
    try await store.put(note("b", "quiet day", "no storm today"), in: notes)
    return try stormAnswers(store)
}

/// The search for "storm" as "key score" lines.
private func stormAnswers(_ store: Store) throws -> [String] {
    try store.read { snap in try snap.search("storm", in: notes).map { "\($0.key) \($0.score)" } }
}

/// The store at `path` opened again after its index was rewritten in an older layout, checked to
/// verify and to answer "storm" as `before` (from ``indexTwoStormNotes(_:)``).
private func reopenAnsweringAsBefore(_ path: String, _ before: [String]) throws -> Store {
    let store = try Store(path: path)
    do {
        try store.register(notes)
        #expect(try store.verify().isSound)
        #expect(try stormAnswers(store) == before)
        return store
    } catch {
        store.close()
        throw error
    }
}

/// Rewrites the notes' document entries keyed by hashes of the record keys (the state's flag
/// bit 0), as indexes created by the builds of 2026-12-02 to 12-04 hold them. Returns the new keys.
private func rewriteDocumentEntriesHashed(_ path: String) throws -> [[UInt8]] {
    let env = try Environment(path: path)
    defer { env.close() }
    let documents = try env.openDatabase("s:notes:doc")
    let state = try env.openDatabase("s:notes:stat")
    return try env.write { txn in
        let stored = try #require(try txn.get(Array("state".utf8), in: state))
        var flags = try stored.withUnsafeBytes { try SearchState($0) }
        #expect(flags.checkedDocuments && !flags.hashedDocuments)  // keyed by record keys
        flags.hashedDocuments = true
        try txn.put(flags.bytes, forKey: Array("state".utf8), in: state)
        let entries = txn.entries(in: documents).map { ($0.keyBytes, $0.valueBytes) }
        try txn.removeAll(in: documents)
        for (key, number) in entries {
            try txn.put(number, forKey: SearchDocumentEntries.hash(key), in: documents)
        }
        return txn.entries(in: documents).map(\.keyBytes)
    }
}

/// Marks the notes' index as made with the tokenizer's first rules (revision 1, the state's flag
/// bits 7 to 9 clear), as indexes created before 2026-12-06 are, its second (revision 2, bits 8
/// and 9 clear), as those created before 2026-12-07 are, or its third (bit 9 clear), as those
/// created before 2026-12-08 are. Returns whether it had the flags.
private func rewriteIndexWithTheFirstTokenizerRules(_ path: String, revision: Int = 1) throws -> Bool {
    let env = try Environment(path: path)
    defer { env.close() }
    let stateDB = try env.openDatabase("s:notes:stat")
    return try env.write { txn in
        let stored = try #require(try txn.get(Array("state".utf8), in: stateDB))
        var state = try stored.withUnsafeBytes { try SearchState($0) }
        let had = state.revisedText && state.compatibleText && state.foldedScripts
        state.revisedText = revision >= 2
        state.compatibleText = revision >= 3
        state.foldedScripts = false
        try txn.put(state.bytes, forKey: Array("state".utf8), in: stateDB)
        return had
    }
}

/// Rewrites the notes' index as indexes created before the state kept its layout wrote it:
/// `num` entries with 16 lengths, `doc` entries keyed by the physical key, no lengths count and
/// flags after the state's totals. Returns the sizes the `num` entries had before.
private func rewriteIndexInTheOldestLayout(_ path: String) throws -> [Int] {
    let env = try Environment(path: path)
    defer { env.close() }
    let documents = try env.openDatabase("s:notes:doc")
    let numbers = try env.openDatabase("s:notes:num")
    let state = try env.openDatabase("s:notes:stat")
    func varint(_ bytes: [UInt8], _ at: inout Int) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = bytes[at]
            at += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }
    return try env.write { txn in
        let stored = try #require(try txn.get(Array("state".utf8), in: state))
        var at = 0
        for _ in 0..<18 { _ = varint(stored, &at) }  // next number, documents, 16 totals
        let totalsEnd = at
        let lengths = Int(varint(stored, &at))
        #expect(varint(stored, &at) == 2 | 128 | 256 | 512)  // flags: checked number entries, text of revision 4 (keys not hashed)
        #expect(at == stored.count)
        try txn.put(Array(stored.prefix(totalsEnd)), forKey: Array("state".utf8), in: state)
        let entries = txn.entries(in: numbers).map { ($0.keyBytes, $0.valueBytes) }
        try txn.removeAll(in: documents)
        for (number, value) in entries {
            var offset = 0
            for _ in 0..<lengths { _ = varint(value, &offset) }
            let key = Array(value[(offset + 4)...])  // past the check
            try txn.put(Array(value.prefix(offset)) + [UInt8](repeating: 0, count: 16 - lengths) + key, forKey: number, in: numbers)
            try txn.put(number, forKey: key, in: documents)
        }
        return entries.map { $0.1.count }
    }
}

private func plantBadPostings(_ path: String) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let postings = try env.openDatabase("s:notes:post")
    // A posting list (docs/SEARCH.md): 1 document in 1 block; the skip entry (last document 42,
    // 3 bytes); the posting: document 42, one group of 1 occurrence in field 0 (33), position 0.
    let ghost: [UInt8] = [1, 1, 42, 3, 42, 33, 0]
    try env.write { txn in
        try txn.put(ghost, forKey: Array("ghost".utf8) + [0, 0, 0, 0, 42], in: postings)
        _ = try txn.delete(Array("surge".utf8) + [0, 0, 0, 0, 0], in: postings)
    }
}

/// The query language over the four notes of `queryOperatorsPhrasesPrefixesFieldsAndFilters`.
private func checkOperators(_ store: Store) throws {
        #expect(try Set(ids(store, "storm")) == ["a", "b", "c"])
        #expect(try Set(ids(store, "storm surge")) == ["a", "b"])
        #expect(try ids(store, "\"storm surge\"") == ["a"])
        #expect(try Set(ids(store, "storm -surge")) == ["c"])
        #expect(try Set(ids(store, "storm NOT surge")) == ["c"])
        #expect(try Set(ids(store, "quiet OR chasers")) == ["b", "c"])
        #expect(try Set(ids(store, "storm*")) == ["a", "b", "c"])
        #expect(try Set(ids(store, "\"storm chas*\"")) == ["b"])
        #expect(try Set(ids(store, "title:storm")) == ["a", "b"])
        #expect(try Set(ids(store, "body:storm")) == ["c"])
        #expect(try Set(ids(store, "storm section:Science")) == ["a", "c"])
        #expect(try ids(store, "covid19") == ["d"])
        #expect(try ids(store, "\"covid 19\"") == ["d"])
        #expect(try ids(store, "storm", sort: .newest) == ["a", "c", "b"])
        #expect(try ids(store, "storm", sort: .oldest) == ["b", "c", "a"])
        let day2 = Date(timeIntervalSince1970: 2 * 86_400)
        #expect(try ids(store, "storm", sort: .oldest, since: day2) == ["c", "a"])
        #expect(try ids(store, "storm", sort: .oldest, until: day2) == ["b", "c"])
        #expect(try ids(store, "nothinghere").isEmpty)
}

/// Swaps the values of the notes' two document entries: each then names the other's number.
private func swapDocumentEntryValues(_ path: String) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let documents = try env.openDatabase("s:notes:doc")
    try env.write { txn in
        let entries = txn.entries(in: documents).map { ($0.keyBytes, $0.valueBytes) }
        #expect(entries.count == 2)
        for (i, (key, _)) in entries.enumerated() { try txn.put(entries[1 - i].1, forKey: key, in: documents) }
    }
}
