import Foundation
import QuireFixtures
import Testing

/// `quire dump --all | quire load -` copies a whole store: every collection (articles, lists,
/// sources and their checkpoints, tags, raw documents, rejects, budgets) and every relation.
@Suite struct WholeStoreDumpTests {
    private let key = "whole-store-KEY-7c1d"

    private func stats(_ store: String, _ dir: URL) async throws -> [String] {
        let stats = try await runQuire(["--store", store, "stats"], directory: dir)
        #expect(stats.status == 0, "\(stats)")
        return lines(stats.stdout).filter { $0.hasPrefix("collection") || $0.hasPrefix("relation") || $0.hasPrefix("  index") }
            .map {
                $0.replacingOccurrences(
                    of: #", [0-9,]+ bytes(, [0-9,]+ bytes/record)?, depth [0-9]+"#, with: "", options: .regularExpression)
            }
            .map { $0.replacingOccurrences(of: #" entries, [0-9,]+ bytes"#, with: " entries", options: .regularExpression) }
    }

    /// In `dir`: `a.db`, fetched from the fixture API with some documents quarantined and the raw
    /// documents kept (something in each of the fetch service's collections), and `demo.db`, a
    /// demo store (Feedzilla's lists and categories too).
    private func fetchedAndDemoStores(in dir: URL, demoArticles: Int) async throws {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = 60
        configuration.apiKey = key
        configuration.mutations = DocumentMutationPlan(seed: 19, percent: 20)  // some rejects
        let api = try FixtureAPI(configuration: configuration)
        defer { api.stop() }
        let fetch = try await runQuire(
            ["--store", "a.db", "fetch", "nyt", "--query", "whole", "--base-url", api.baseURL, "--rate", "100000/min", "--keep-raw"],
            environment: ["NYT_API_KEY": key], directory: dir)
        #expect(fetch.status == 0, "\(fetch)")
        let demo = try await runQuire(["--store", "demo.db", "demo", "--articles", "\(demoArticles)"], directory: dir)
        #expect(demo.status == 0, "\(demo)")
    }

    @Test func aWholeStoreDumpLoadsIntoAnIdenticalStore() async throws {
        try await withScratch { dir in
            try await fetchedAndDemoStores(in: dir, demoArticles: 40)
            // A store only ever loaded has none of the fetch service's collections: nor has its copy.
            let plain = try await runQuire(
                ["--store", "plain.db", "load", "-", "--quiet"], stdin: try generatedJSONL(count: 30), directory: dir)
            #expect(plain.status == 0, "\(plain)")
            for source in ["a.db", "demo.db", "plain.db"] {
                let dump = try await runQuire(["--store", source, "dump", "--all"], directory: dir)
                #expect(dump.status == 0, "\(dump)")
                let sections = lines(dump.stdout).filter { $0.hasPrefix(#"{"@quire":"#) }
                #expect(sections.contains(#"{"@quire":"collection","name":"articles"}"#), "\(sections)")
                #expect(sections.last == #"{"@quire":"collection","name":"articles"}"#)
                let copy = "copy-" + source
                let load = try await runQuire(["--store", copy, "load", "-", "--quiet"], stdin: Data(dump.stdout.utf8), directory: dir)
                #expect(load.status == 0, "\(load)")
                let again = try await runQuire(["--store", copy, "dump", "--all"], directory: dir)
                #expect(again.stdout == dump.stdout, "\(source): the copy's dump differs")
                #expect(try await stats(copy, dir) == stats(source, dir))
                let verify = try await runQuire(["--store", copy, "verify"], directory: dir)
                #expect(verify.status == 0, "\(verify)")
            }
            // The fetch store had something in each of the fetch service's collections.
            let fetched = try await stats("a.db", dir)
            for name in ["articles", "sources", "tags", "raw", "rejects", "budgets"] {
                #expect(fetched.contains { $0.hasPrefix("collection   \(name): ") && !$0.contains(": 0 records") }, "\(name): \(fetched)")
            }
            #expect(fetched.contains { $0.hasPrefix("relation     query-articles: ") && !$0.contains(": 0 entries") })
        }
    }

    /// `dump --collection X` (JSON Lines or `--format json`) loads back with `load --collection
    /// X`: the copy's records are the same bytes (it was refused as "not an article").
    @Test func eachCollectionsDumpLoadsBackUnderItsName() async throws {
        try await withScratch { dir in
            try await fetchedAndDemoStores(in: dir, demoArticles: 20)
            let collections = [
                ("a.db", "sources"), ("a.db", "tags"), ("a.db", "raw"), ("a.db", "rejects"), ("a.db", "budgets"),
                ("demo.db", "lists"), ("demo.db", "categories"),
            ]
            for (source, name) in collections {
                let dump = try await runQuire(["--store", source, "dump", "--collection", name], directory: dir)
                #expect(dump.status == 0 && !dump.stdout.isEmpty, "\(name): \(dump)")
                let refused = try await runQuire(["--store", "refused.db", "load", "-"], stdin: Data(dump.stdout.utf8), directory: dir)
                #expect(refused.status == 1, "\(name): \(refused)")
                for format in ["jsonl", "json"] {
                    let written = try await runQuire(["--store", source, "dump", "--collection", name, "--format", format], directory: dir)
                    let copy = "\(name)-\(format).db"
                    let load = try await runQuire(
                        ["--store", copy, "load", "--collection", name, "-", "--json"], stdin: Data(written.stdout.utf8), directory: dir)
                    #expect(load.status == 0, "\(name) \(format): \(load)")
                    #expect(load.stdout.contains(#""records":\#(lines(dump.stdout).count),"#), "\(name) \(format): \(load.stdout)")
                    let again = try await runQuire(["--store", copy, "dump", "--collection", name], directory: dir)
                    #expect(again.stdout == dump.stdout, "\(name) \(format): the copy differs")
                }
            }
            let unknown = try await runQuire(["load", "--collection", "nope", "-"], stdin: Data(), directory: dir)
            #expect(unknown.status == 64 && unknown.stderr.contains("one of: articles, lists"), "\(unknown)")
        }
    }

    @Test(arguments: [
        (#"{"@quire":"relation","name":"list-articles"}"# + "\n[1,2]", "line 2: expected an object (0 records loaded before it)"),
        (#"{"@quire":"collection","name":"lists"}"# + "\n" + #"{"id":"l1","title":7,"articleIDs":[]}"#, "line 2: title: expected a string"),
        (#"{"@quire":"collection","name":"lists"}"# + "\n" + #"{"id":"l1","title":"t","articleIDs":["a",2]}"#,
         "line 2: articleIDs[1]: expected a string"),
        (#"{"@quire":"relation","name":"list-articles"}"# + "\n" + #"{"owner":"","member":"a1"}"#,
         "line 2: owner: empty"),
        (#"{"@quire":"view","name":"articles"}"#, "line 1: unknown section kind 'view' (a collection or a relation)"),
        (#"{"@quire":"collection","name":"articles"}"# + "\n" + #"{"id":"a1"}"# + "\n" + #"{"@quire":"collection","name":"lists"}"#,
         "line 3: a section header after the articles section, which ends a whole-store dump (load concatenated dumps one at a time) (1 record loaded before it)"),
        // A byte order mark before the first header (an editor's) is skipped, as before a plain
        // dump, and so are blank lines (read as articles: "@quire: unknown field").
        ("\u{FEFF}" + #"{"@quire":"collection","name":"lists"}"# + "\n" + #"{"id":"l1","title":7,"articleIDs":[]}"#, "line 2: title: expected a string"),
        ("\n  \n" + #"{"@quire":"collection","name":"lists"}"# + "\n" + #"{"id":"l1","title":7,"articleIDs":[]}"#, "line 4: title: expected a string"),
        (#"{"@quire":"collection","name":"tags"}"# + "\n" + #"{"tag":"","fetchedAt":"2020-01-01T00:00:00Z"}"#,
         "line 2: the id is empty (0 records loaded before it)"),
        (#"{"@quire":"collection","name":"categories"}"# + "\n" + #"{"id":5,"displayName":"Five","englsh_name":"typo"}"#,
         "line 2: englsh_name: unknown field"),
        // Whole numbers as for articles: 1300.9999999999999999 was rounded to 1301 (another
        // category's id, overwritten), 1e3 taken as 1000; a fraction was "not valid JSON".
        (#"{"@quire":"collection","name":"categories"}"# + "\n" + #"{"id":1300.9999999999999999,"displayName":"x"}"#,
         "line 2: id: expected a whole number written without a fraction or an exponent"),
        (#"{"@quire":"collection","name":"categories"}"# + "\n" + #"{"id":1e3}"#,
         "line 2: id: expected a whole number written without a fraction or an exponent"),
        (#"{"@quire":"collection","name":"categories"}"# + "\n" + #"{"id":9223372036854775808}"#,
         "line 2: id: expected a whole number written without a fraction or an exponent"),
        (#"{"@quire":"collection","name":"rejects"}"# + "\n" + #"{"id":"x","index":1.5}"#,
         "line 2: index: expected a whole number written without a fraction or an exponent"),
        // Not JSON, as for articles: a trailing comma, or a lone surrogate in a member the record
        // does not read, turned the checks above off (1301 was overwritten again).
        (#"{"@quire":"collection","name":"categories"}"# + "\n" + #"{"id":1300.9999999999999999,"displayName":"x",}"#,
         "line 2: not valid JSON at byte 47: expected a member name"),
        (#"{"@quire":"collection","name":"categories"}"# + "\n" + #"{"id":1e3,"displayName":"x","y":"\ud800"}"#,
         "line 2: not valid JSON at byte"),
        (#"{"@quire":"relation","name":"list-articles"}"# + "\n" + #"{"owner":"L","member":"a1","extra":1}"#,
         "line 2: extra: unknown field, not a relation entry"),
    ])
    func aBadWholeStoreLineNamesWhatItExpected(input: String, message: String) async throws {
        try await withScratch { dir in
            let load = try await runQuire(["load", "-", "--quiet"], stdin: Data((input + "\n").utf8), directory: dir)
            #expect(load.status == 1, "\(load)")
            #expect(load.stderr.hasPrefix("quire: load: \(message)"), "\(load)")
        }
    }

    /// An id (or a relation entry) read twice is one record in every section, as for articles:
    /// the summary counted every line of the other sections.
    @Test func aRecordReadTwiceIsCountedOnceInEverySection() async throws {
        let input = [
            #"{"@quire":"collection","name":"lists"}"#, #"{"id":"L","title":"a","articleIDs":[]}"#,
            #"{"id":"L","title":"b","articleIDs":[]}"#, #"{"@quire":"relation","name":"query-articles"}"#,
            #"{"owner":"q","member":"a1"}"#, #"{"owner":"q","member":"a1"}"#, #"{"@quire":"collection","name":"articles"}"#,
            #"{"id":"a1"}"#,
        ]
        try await withScratch { dir in
            let load = try await runQuire(["load", "-", "--json"], stdin: Data((input.joined(separator: "\n") + "\n").utf8), directory: dir)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(load.stdout.utf8)) as? [String: Any], "\(load)")
            #expect(summary["records"] as? Int == 3 && summary["read"] as? Int == 5, "\(load)")
            let lists = try await runQuire(["load", "--collection", "lists", "-", "--json"], stdin: Data((input[1...2].joined(separator: "\n") + "\n").utf8), directory: dir)
            let listSummary = try #require(try JSONSerialization.jsonObject(with: Data(lists.stdout.utf8)) as? [String: Any], "\(lists)")
            #expect(listSummary["records"] as? Int == 1 && listSummary["read"] as? Int == 2, "\(lists)")
            #expect(lines(try await runQuire(["dump", "--collection", "lists"], directory: dir).stdout).first?.contains(#""title":"b""#) == true)
        }
    }

    /// A load stopped at a bad line counts the records before it as the summary of one that ends
    /// does, an id read twice once: it counted lines (60,000 said for 20,000 stored).
    @Test(arguments: ["articles", "lists"])
    func aStoppedLoadCountsRecordsNotLines(collection: String) async throws {
        let line = collection == "articles" ? #"{"id":"a","headline":"h"}"# : #"{"id":"L","title":"a","articleIDs":[]}"#
        let bad = collection == "articles" ? #"{"id":""}"# : #"{"id":"","title":"a","articleIDs":[]}"#
        try await withScratch { dir in
            let input = Array(repeating: line, count: 3) + [bad]
            let load = try await runQuire(
                ["load", "--collection", collection, "-", "--json"], stdin: Data((input.joined(separator: "\n") + "\n").utf8), directory: dir)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(load.stdout.utf8)) as? [String: Any], "\(load)")
            #expect(load.status == 1 && summary["records"] as? Int == 1 && summary["line"] as? Int == 4, "\(load)")
            #expect(load.stderr.contains("(1 record loaded before it)"), "\(load)")
        }
    }

    /// A bad line of a section stops the load there with every record before it committed,
    /// however many wait for their transaction, and `--json` says so with the line.
    @Test func aBadSectionLineKeepsEveryRecordBeforeIt() async throws {
        try await withScratch { dir in
            var input = [#"{"@quire":"collection","name":"tags"}"#]
            input += (0..<1_500).map { #"{"tag":"t\#($0)","fetchedAt":"2020-01-01T00:00:00Z","#  + #""nothing":null}"# }
            input.append(#"{"tag":"","fetchedAt":"2020-01-01T00:00:00Z"}"#)
            let load = try await runQuire(["load", "-", "--json"], stdin: Data((input.joined(separator: "\n") + "\n").utf8), directory: dir)
            #expect(load.status == 1, "\(load)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(load.stdout.utf8)) as? [String: Any])
            #expect(summary["records"] as? Int == 1_500 && summary["line"] as? Int == 1_502, "\(load)")
            let dump = try await runQuire(["dump", "--collection", "tags"], directory: dir)
            #expect(lines(dump.stdout).count == 1_500, "\(dump.stderr)")
        }
    }

    /// A `--format json` array of another collection cut before its `]`, or followed by text,
    /// loaded with status 0 (articles refuse both): the bracket is the only sign of a whole file.
    /// A line too long for the reader kept none of the records read before it.
    @Test func aCollectionLoadStopsAtACutArrayAndKeepsTheRecordsBeforeALongLine() async throws {
        try await withScratch { dir in
            let records = [#"{"id":1,"displayName":"One"}"#, #"{"id":2,"displayName":"Two"}"#]
            let cut = "[\n" + records.map { $0 + "," }.joined(separator: "\n") + "\n"
            let after = "[\n" + records[0] + "\n]\n" + records[1] + "\n"
            for (name, input, message, kept) in [
                ("cut", cut, "line 3: the input ends after line 3, inside the JSON array: its closing ']' is missing", 2),
                ("after", after, "line 4: text after the JSON array's closing ']'", 1),
            ] {
                let store = dir.appendingPathComponent("\(name).db").path
                let load = try await runQuire(
                    ["--store", store, "load", "--collection", "categories", "-", "--quiet"], stdin: Data(input.utf8), directory: dir)
                #expect(load.status == 1 && load.stderr.hasPrefix("quire: load: \(message)"), "\(name): \(load)")
                let dump = try await runQuire(["--store", store, "dump", "--collection", "categories"], directory: dir)
                #expect(lines(dump.stdout).count == kept, "\(name): \(dump)")
            }
            let file = dir.appendingPathComponent("long.jsonl")
            var long = Data((records.joined(separator: "\n") + "\n").utf8)
            long.append(Data(repeating: UInt8(ascii: "x"), count: (64 << 20) + 1))
            try long.write(to: file)
            let load = try await runQuire(["--store", "long.db", "load", "--collection", "categories", file.path], directory: dir)
            #expect(load.status == 1 && load.stderr.contains("line 3: the line is longer than 64 MiB (2 records loaded before it)"), "\(load)")
            let dump = try await runQuire(["--store", "long.db", "dump", "--collection", "categories"], directory: dir)
            #expect(lines(dump.stdout).count == 2, "\(dump)")
        }
    }

    /// A value or a name of megabytes in a bad line is cut in the error: an 8 MB number made an
    /// 8 MB line of stderr (and of `--json`'s error), for articles and the other collections.
    @Test func aBadLinesLongValueIsCutInTheError() async throws {
        let long = String(repeating: "9", count: 1 << 20)
        try await withScratch { dir in
            for (collection, line) in [
                ("articles", #"{"id":"b","publishedAt":"\#(long)"}"#), ("articles", #"{"id":"b","wordCount":\#(long)}"#),
                ("categories", #"{"id":1,"x\#(long)":1}"#),
            ] {
                let load = try await runQuire(["load", "--collection", collection, "-", "--quiet"], stdin: Data((line + "\n").utf8), directory: dir)
                #expect(load.status == 1 && load.stderr.utf8.count < 2_000, "\(collection): \(load.stderr.prefix(300))")
                #expect(load.stderr.contains("more characters"), "\(collection): \(load.stderr.prefix(300))")
            }
        }
    }

    /// A collection keyed by numbers (Feedzilla's categories) is read by `get` with the number.
    @Test func getFindsARecordKeyedByANumber() async throws {
        try await withScratch { dir in
            let input = #"{"@quire":"collection","name":"categories"}"# + "\n" + #"{"id":5,"displayName":"Five"}"# + "\n"
            let load = try await runQuire(["load", "-", "--quiet"], stdin: Data(input.utf8), directory: dir)
            #expect(load.status == 0, "\(load)")
            let get = try await runQuire(["get", "5", "--collection", "categories"], directory: dir)
            #expect(get.status == 0 && get.stdout.contains(#""displayName":"Five""#), "\(get)")
            let missing = try await runQuire(["get", "6", "--collection", "categories"], directory: dir)
            #expect(missing.status == 1 && missing.stderr.contains("no such record"), "\(missing)")
        }
    }

    @Test func dumpAllTakesNoFilterAndOnlyJSONLines() async throws {
        try await withScratch { dir in
            for args in [
                ["dump", "--all", "--format", "json"], ["dump", "--all", "--limit", "3"], ["dump", "--all", "--collection", "lists"],
                ["dump", "--format", "mdb", "--limit", "1"], ["dump", "--format", "mdb", "--section", "Arts"],
            ] {
                let result = try await runQuire(args, directory: dir)
                #expect(result.status == 64, "\(args): \(result)")
            }
        }
    }

    /// `dump --all` writes the relations before the articles: a load that stops in the articles
    /// writes the entries whose articles it loaded (they are all on lines before it), none that
    /// names a missing article (which fails verify); an entry naming an article the dump does
    /// not hold is an error at its line, the entries before it written.
    @Test func relationsAreWrittenOnlyOnceTheirArticlesAre() async throws {
        let relations = [
            #"{"@quire":"relation","name":"query-articles"}"#, #"{"owner":"q1","member":"a1"}"#,
            #"{"owner":"q1","member":"a2"}"#, #"{"@quire":"collection","name":"articles"}"#,
            #"{"id":"a1","headline":"one"}"#,
        ]
        try await withScratch { dir in
            let cut = try await runQuire(
                ["--store", "cut.db", "load", "-", "--quiet"],
                stdin: Data((relations + [#"{"id":"a2","headline":"#]).joined(separator: "\n").utf8), directory: dir)
            #expect(cut.status == 1 && cut.stderr.contains("line 6:"), "\(cut)")
            #expect(cut.stderr.contains("1 relation entry names an article not loaded, and is left out (2 records loaded before it)"), "\(cut)")
            let cutVerify = try await runQuire(["--store", "cut.db", "verify"], directory: dir)
            #expect(cutVerify.status == 0, "\(cutVerify)")
            let entry = #"{"owner":"q1","member":"a1"}"#
            #expect(lines(try await runQuire(["--store", "cut.db", "dump", "--all"], directory: dir).stdout).contains(entry))
            let dangling = try await runQuire(
                ["--store", "dangling.db", "load", "-", "--quiet"], stdin: Data(relations.joined(separator: "\n").utf8),
                directory: dir)
            #expect(dangling.status == 1, "\(dangling)")
            #expect(
                dangling.stderr.contains(
                    "line 3: relation 'query-articles' names article 'a2', which the store does not hold (relations are written once every record is loaded) (2 records loaded before it)"),
                "\(dangling)")
            #expect(try await runQuire(["--store", "dangling.db", "verify"], directory: dir).status == 0)
            #expect(lines(try await runQuire(["--store", "dangling.db", "dump", "--all"], directory: dir).stdout).contains(entry))
            let whole = relations + [#"{"id":"a2","headline":"two"}"#]
            let load = try await runQuire(
                ["--store", "whole.db", "load", "-"], stdin: Data(whole.joined(separator: "\n").utf8), directory: dir)
            #expect(load.status == 0 && load.stderr.contains("4 records"), "\(load)")
            let dump = try await runQuire(["--store", "whole.db", "dump", "--all"], directory: dir)
            #expect(Set(whole).isSubset(of: lines(dump.stdout)), "\(dump)")
            // Loaded again, nothing changes: no commit reaches the change feed.
            func feed() async throws -> String? {
                lines(try await runQuire(["--store", "whole.db", "stats"], directory: dir).stdout)
                    .first { $0.hasPrefix("change feed") }
            }
            let before = try await feed()
            let again = try await runQuire(["--store", "whole.db", "load", "-", "--quiet"], stdin: Data(dump.stdout.utf8), directory: dir)
            #expect(again.status == 0, "\(again)")
            #expect(try await feed() == before)
        }
    }
}
