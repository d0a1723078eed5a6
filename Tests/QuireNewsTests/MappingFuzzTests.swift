import Foundation
import QuireFixtures
import QuireNews
import Testing

/// A JSON tree that keeps member order and allows repeated keys, so mutations can produce
/// exactly the shapes a hostile or broken API would send.
private indirect enum FuzzJSON {
    case null
    case bool(Bool)
    /// The number's literal text, so huge and odd numbers survive unchanged.
    case number(String)
    case string(String)
    case array([FuzzJSON])
    case object([(String, FuzzJSON)])

    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .number(String(i))
        case .double(let d): self = .number(String(d))
        case .string(let s): self = .string(s)
        case .array(let a): self = .array(a.map(FuzzJSON.init))
        // Sorted: dictionary order changes from run to run, and the loop must be reproducible.
        case .object(let o): self = .object(o.members.sorted { $0.key < $1.key }.map { ($0.key, FuzzJSON($0.value)) })
        }
    }

    /// Applies `transform` to one node reached by a random walk from the root (each step stops
    /// here or descends into a random child), rebuilding only the path to it.
    func mutatingRandomNode(_ random: inout Mutator, _ transform: (FuzzJSON, inout Mutator) -> FuzzJSON) -> FuzzJSON {
        switch self {
        case .array(var elements) where !elements.isEmpty && random.below(4) != 0:
            let i = random.below(elements.count)
            elements[i] = elements[i].mutatingRandomNode(&random, transform)
            return .array(elements)
        case .object(var members) where !members.isEmpty && random.below(4) != 0:
            let i = random.below(members.count)
            members[i].1 = members[i].1.mutatingRandomNode(&random, transform)
            return .object(members)
        default:
            return transform(self, &random)
        }
    }

    func write(to out: inout [UInt8], escapeNonASCII: Bool) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .number(let text): out += Array(text.utf8)
        case .string(let s): Self.writeString(s, to: &out, escapeNonASCII: escapeNonASCII)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out, escapeNonASCII: escapeNonASCII)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &out, escapeNonASCII: escapeNonASCII)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out, escapeNonASCII: escapeNonASCII)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ s: String, to out: inout [UInt8], escapeNonASCII: Bool) {
        func hex(_ unit: UInt16) {
            out += Array("\\u".utf8)
            out += Array(String(unit, radix: 16).leftPadded(to: 4).utf8)
        }
        out.append(UInt8(ascii: "\""))
        if escapeNonASCII {
            for scalar in s.unicodeScalars {
                switch scalar.value {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case ..<0x20: hex(UInt16(scalar.value))
                case 0x80...: String(scalar).utf16.forEach(hex)
                default: out.append(UInt8(scalar.value))
                }
            }
        } else {
            for byte in s.utf8 {
                switch byte {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case ..<0x20: hex(UInt16(byte))
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out, escapeNonASCII: false)
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// Structured mutations of valid bodies: tree edits (type swaps, removed/duplicated/added keys,
/// huge numbers, deep nesting) and byte edits (flips, deletions, inserted JSON tokens).
private struct Mutator {
    var random: SplitMix64

    /// Keys the mappings look for, so added members hit real code paths.
    static let keys = [
        "_id", "uri", "web_url", "pub_date", "word_count", "multimedia", "keywords", "headline", "main", "kicker",
        "byline", "original", "person", "print_page", "section_name", "news_desk", "document_type", "type_of_material",
        "snippet", "abstract", "lead_paragraph", "source", "url", "width", "height", "subtype", "rank", "name", "value",
        "legacy", "docs", "meta", "metadata", "hits", "offset", "response", "status", "copyright", "fault", "faultstring",
        "errors", "articles", "title", "description", "syndication_url", "publish_date", "summary", "enclosures",
        "category_id", "english_category_name", "display_category_name", "url_category_name", "author", "source_url",
    ]
    static let numbers = [
        "0", "-0", "1", "-1", "282", "1.5", "-2.5e3", "1e400", "-1e400", "1e-400", "9223372036854775807",
        "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890123456789",
        "0.000000000000000000000000000001", "4294967296", "2147483648",
    ]
    static let strings = [
        "", " ", "282", "-1", "1e400", "null", "true", "2012-01-01T00:00:00Z", "2019-06-30T12:00:00+0000",
        "2012-13-45T99:99:99Z", "Mon, 02 Jan 2012 10:00:00 +0100", "Tue, 99 Foo 2012", "images/a.jpg",
        "https://static01.nyt.com/images/x.jpg", "nyt://article/00000000-0000-0000-0000-000000000000",
        "http://www.nytimes.com/2012/01/01/us/a.html", "By A Reporter", "ERROR", "OK", "\u{0}", "😀 中文 “quote”",
        String(repeating: "x", count: 600),
    ]
    static let tokens = [
        "{", "}", "[", "]", ",", ":", "\"", "null", "true", "false", "-", "0", "1e999", "\\", "\\u", "\\ud800",
        "\\udc00", "\\u00", "\u{0}", "\t", "0x1F", "NaN", "Infinity", "//", "/*", "\u{FEFF}", "\"\":", "{}", "[]",
    ]

    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(random.next() % UInt64(n)) }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    mutating func scalar() -> FuzzJSON {
        switch below(6) {
        case 0: .null
        case 1: .bool(below(2) == 0)
        case 2: .number(pick(Self.numbers))
        case 3: .string(pick(Self.strings))
        case 4: .array([])
        default: .object([])
        }
    }

    /// A value of a different kind built around `node`: containers wrap it, scalars replace it.
    mutating func typeSwap(_ node: FuzzJSON) -> FuzzJSON {
        switch below(9) {
        case 0: return .array([node])
        case 1: return .object([(pick(Self.keys), node)])
        case 2: return .string(String(decoding: node.bytes.prefix(200), as: UTF8.self))
        default: return scalar()
        }
    }

    mutating func mutateNode(_ node: FuzzJSON) -> FuzzJSON {
        switch node {
        case .object(var members) where below(4) != 0:
            switch below(4) {
            case 0 where !members.isEmpty: members.remove(at: below(members.count))
            case 1 where !members.isEmpty:
                // A repeated key with another value: the parser keeps the last one.
                let (key, value) = members[below(members.count)]
                members.insert((key, below(2) == 0 ? value : scalar()), at: below(members.count + 1))
            case 2 where !members.isEmpty:
                let i = below(members.count)
                members[i].1 = typeSwap(members[i].1)
            default: members.append((pick(Self.keys), below(3) == 0 ? typeSwap(scalar()) : scalar()))
            }
            return .object(members)
        case .array(var elements) where below(4) != 0:
            switch below(4) {
            case 0 where !elements.isEmpty: elements.remove(at: below(elements.count))
            case 1 where !elements.isEmpty: elements.append(elements[below(elements.count)])
            case 2 where !elements.isEmpty:
                let i = below(elements.count)
                elements[i] = typeSwap(elements[i])
            default: elements.insert(scalar(), at: below(elements.count + 1))
            }
            return .array(elements)
        default:
            if below(12) == 0 { return nest(node, depth: pick([2, 40, 511, 513, 3_000])) }
            return typeSwap(node)
        }
    }

    func nest(_ node: FuzzJSON, depth: Int) -> FuzzJSON {
        var out = node
        for level in 0..<depth { out = level % 2 == 0 ? .array([out]) : .object([("k", out)]) }
        return out
    }

    mutating func mutateTree(_ tree: FuzzJSON) -> FuzzJSON {
        tree.mutatingRandomNode(&self) { node, mutator in mutator.mutateNode(node) }
    }

    mutating func mutateBytes(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        guard !bytes.isEmpty else { return Array(pick(Self.tokens).utf8) }
        let at = below(bytes.count)
        switch below(7) {
        case 0: bytes[at] ^= UInt8(1) << UInt8(below(8))
        case 1: bytes.removeSubrange(at..<min(bytes.count, at + 1 + below(40)))
        case 2: bytes.insert(contentsOf: Array(pick(Self.tokens).utf8), at: at)
        case 3: bytes[at] = pick([0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xED, 0xF5, 0xFF])
        case 4: bytes.removeSubrange(at...)  // truncation
        case 5:
            let end = min(bytes.count, at + 1 + below(200))
            bytes.insert(contentsOf: bytes[at..<end], at: below(bytes.count))
        default: bytes.insert(contentsOf: Array(pick(Self.numbers).utf8), at: at)
        }
        return bytes
    }
}

/// One body the loop starts from, with the parser it is meant for.
private struct Seed {
    enum Kind { case nyt, feedzillaList, feedzillaCategories }
    var kind: Kind
    var tree: FuzzJSON
}

private func seeds() throws -> [Seed] {
    var generator = ArticleGenerator(seed: 909)
    var out: [Seed] = []
    for era in NYTEra.allCases {
        // Small pages keep 20,000 inputs fast in debug builds; two documents still let one fail alone.
        let body = nytPageBody(articles: generator.articles(count: 2), hits: 23, page: 1, era: era)
        out.append(Seed(kind: .nyt, tree: FuzzJSON(try JSONParser.parse(body))))
        let empty = nytPageBody(articles: [], hits: 0, page: 9, era: era)
        out.append(Seed(kind: .nyt, tree: FuzzJSON(try JSONParser.parse(empty))))
    }
    let list = feedzillaArticleListBody(categoryID: 26, articles: generator.articles(count: 2), requestQuery: "count=3&format=json")
    out.append(Seed(kind: .feedzillaList, tree: FuzzJSON(try JSONParser.parse(list))))
    let categories = feedzillaCategoriesBody((0..<4).map { generator.category(index: $0) })
    out.append(Seed(kind: .feedzillaCategories, tree: FuzzJSON(try JSONParser.parse(categories))))
    return out
}

/// Tallies of one fuzz run.
private struct Outcome {
    var inputs = 0
    var mapped = 0
    var rejected = 0
    var problems: [String] = []
}

/// Feeds one input to its parser and checks the all-or-nothing promise. Errors are typed by the
/// signatures (`throws(NewsMappingError)`); what can go wrong at run time is a trap (crash), a
/// hang, or a success that returns less than the input held.
private func check(_ bytes: [UInt8], as kind: Seed.Kind, into outcome: inout Outcome) {
    outcome.inputs += 1
    func problem(_ text: String) {
        if outcome.problems.count < 10 { outcome.problems.append("\(text): \(String(decoding: bytes.prefix(300), as: UTF8.self))") }
    }
    do throws(NewsMappingError) {
        switch kind {
        case .nyt:
            let page = try NYTArticleSearch.parsePage(bytes)
            guard page.rawDocuments.count == page.articles.count else { return problem("raw documents != articles") }
            // Every document the body's docs array held was mapped or rejected: none was skipped silently.
            if case .object(let root) = try JSONParser.parse(bytes), case .object(let response)? = root["response"],
                case .array(let docs)? = response["docs"], docs.count != page.documentCount
            {
                return problem("\(docs.count) docs but \(page.articles.count) articles and \(page.rejects.count) rejects")
            }
            for (raw, article) in zip(page.rawDocuments, page.articles) {
                guard (try? NYTArticleSearch.articleMapping.decode(raw)) == article else {
                    return problem("a raw document maps to another article")
                }
            }
        case .feedzillaList:
            let page = try Feedzilla.parseArticleList(bytes, categoryID: 26)
            let (list, articles) = (page.list, page.articles)
            guard list.articleIDs == articles.map(\.id), Set(list.articleIDs).count == articles.count else {
                return problem("list ids differ from its articles")
            }
            if case .object(let root) = try JSONParser.parse(bytes), case .array(let elements)? = root["articles"],
                articles.count > elements.count
            {
                return problem("more articles than elements")
            }
        case .feedzillaCategories:
            let categories = try Feedzilla.parseCategories(bytes)
            if case .array(let elements) = try JSONParser.parse(bytes), categories.count > elements.count {
                return problem("more categories than elements")
            }
        }
        outcome.mapped += 1
    } catch {
        // A typed error must say what happened: a path or a kind worth reading.
        if error.description.isEmpty { problem("an error without a description") }
        outcome.rejected += 1
    }
}

@Suite struct MappingFuzzTests {
    /// 20,000 mutated NYT pages of every era and Feedzilla lists and categories: each one maps
    /// fully or throws a `NewsMappingError`.
    @Test func mutatedBodiesMapFullyOrThrow() throws {
        let bases = try seeds()
        var mutator = Mutator(random: SplitMix64(seed: 0x5EED_F022))
        var outcome = Outcome()
        let rounds = Int(ProcessInfo.processInfo.environment["QUIRE_MAPPING_FUZZ_INPUTS"] ?? "") ?? 5_000
        for round in 0..<rounds {
            let seed = bases[round % bases.count]
            var tree = seed.tree
            for _ in 0...mutator.below(3) { tree = mutator.mutateTree(tree) }
            var bytes: [UInt8] = []
            tree.write(to: &bytes, escapeNonASCII: mutator.below(4) == 0)
            // Half the inputs stay well-formed JSON, so the mapping (not just the parser) is fuzzed.
            if mutator.below(2) == 0 {
                for _ in 0...mutator.below(2) { bytes = mutator.mutateBytes(bytes) }
            }
            check(bytes, as: seed.kind, into: &outcome)
        }
        #expect(outcome.problems.isEmpty, "\(outcome.problems.joined(separator: "\n"))")
        // Both outcomes are common, or the mutations are too weak (or too strong) to test anything.
        #expect(outcome.mapped > rounds / 20, "mapped \(outcome.mapped) of \(rounds)")
        #expect(outcome.rejected > rounds / 4, "rejected \(outcome.rejected) of \(rounds)")
    }

    /// The unmutated seeds map, and a document's removed required key fails the whole page.
    @Test func seedsMapAndOneBadDocumentIsQuarantinedAlone() throws {
        var outcome = Outcome()
        for seed in try seeds() { check(seed.tree.bytes, as: seed.kind, into: &outcome) }
        #expect(outcome.problems.isEmpty)
        #expect(outcome.rejected == 0 && outcome.mapped == outcome.inputs)

        var generator = ArticleGenerator(seed: 3)
        let body = nytPageBody(articles: generator.articles(count: 3), hits: 3, page: 0, era: .era2019)
        let text = String(decoding: body, as: UTF8.self)
        // The second document's publication date becomes a number: that document alone is rejected.
        let dates = text.ranges(of: #""pub_date":""#)
        try #require(dates.count == 3)
        let broken = text.replacingCharacters(in: dates[1], with: #""pub_date":17,"x":""#)
        let parsed = try NYTArticleSearch.parsePage(Array(broken.utf8))
        #expect(parsed.articles.count == 2 && parsed.rejects.map(\.index) == [1])
        #expect(parsed.rejects.first?.error.path == "response.docs[1].pub_date")
    }

    /// Nesting past the parser's limit is an error, not a stack overflow.
    @Test func deepNestingIsRejected() {
        let deep = Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        #expect(throws: NewsMappingError.self) { try NYTArticleSearch.parsePage(deep) }
        let objects = Array((String(repeating: #"{"a":"#, count: 50_000) + "1" + String(repeating: "}", count: 50_000)).utf8)
        #expect(throws: NewsMappingError.self) { try Feedzilla.parseCategories(objects) }
    }

    /// A generated 2019 page of four documents, and where each document's `_id` member is (to
    /// insert members before it).
    private func fourDocumentPage(seed: UInt64) throws -> (text: String, ids: [Range<String.Index>]) {
        var generator = ArticleGenerator(seed: seed)
        let text = String(decoding: nytPageBody(articles: generator.articles(count: 4), hits: 4, page: 0, era: .era2019), as: UTF8.self)
        let ids = text.ranges(of: #""_id":"#)
        try #require(ids.count == 4)
        return (text, ids)
    }

    /// A document with a string whose text is not valid (bad UTF-8, an unpaired surrogate, an
    /// unknown escape) is quarantined alone at that member; a raw line break in a string (as
    /// Feedzilla left them in summaries) is kept; damage that hides where a value ends still
    /// fails the page.
    @Test func aDocumentWithBadTextIsQuarantinedAloneAndRawLineBreaksAreKept() throws {
        let (text, ids) = try fourDocumentPage(seed: 6)
        // Inserted before each document's `_id`, from the last so that the ranges stay valid;
        // the last document's snippet starts with raw line breaks.
        var body = Array(text.utf8)
        let snippet = try #require(text[ids[3].lowerBound...].range(of: #""snippet":""#))
        body.insert(contentsOf: Array("line one\nline two\t".utf8), at: text.utf8.distance(from: text.startIndex, to: snippet.upperBound))
        let inserts: [(Int, [UInt8])] = [
            (2, Array(#""abstract":"ok \ud800 alone","#.utf8)),
            (1, Array(#""abstract":"bad "#.utf8) + [0xFF, 0xFE] + Array(#" bytes \" quoted","#.utf8)),
            (0, Array(#""abstract":"an \q escape","#.utf8)),
        ]
        for (index, bytes) in inserts {
            let offset = text.utf8.distance(from: text.startIndex, to: ids[index].lowerBound)
            body.insert(contentsOf: bytes, at: offset)
        }
        let page = try NYTArticleSearch.parsePage(body)
        #expect(page.rejects.map(\.index) == [0, 1, 2])
        #expect(page.rejects.map(\.error.path) == ["response.docs[0].abstract", "response.docs[1].abstract", "response.docs[2].abstract"])
        let reasons = page.rejects.map { reject -> String in
            guard case .malformedJSON(_, let reason) = reject.error.kind else { return "\(reject.error)" }
            return reason
        }
        #expect(reasons == ["invalid escape", "invalid UTF-8 in a string", "unpaired surrogate"])
        #expect(page.articles.count == 1 && page.articles[0].snippet?.hasPrefix("line one\nline two\t") == true)
        // The same document maps again from its kept bytes (a remap), line breaks and all.
        #expect(try NYTArticleSearch.articleMapping.decode(page.rawDocuments[0]) == page.articles[0])

        // A quote missing: where the string ends is unknown, so the page fails as a whole.
        var unclosed = Array(text.utf8)
        unclosed.insert(contentsOf: Array(#""abstract":"bad "#.utf8) + [0xFF], at: text.utf8.distance(from: text.startIndex, to: ids[1].lowerBound))
        #expect(throws: NewsMappingError.self) { try NYTArticleSearch.parsePage(unclosed) }
        // The strict parser still refuses a raw control character.
        #expect(throws: NewsMappingError.self) { try JSONParser.parse(Array("[\"a\nb\"]".utf8)) }
        #expect(try JSONParser.parse(Array("[\"a\nb\"]".utf8), acceptsControlCharacters: true) == .array([.string("a\nb")]))
    }

    /// A member *name* whose text is not valid quarantines its document alone too, wherever it is
    /// in the document (a member the mapping never reads included); one in the envelope, outside
    /// every document, still fails the page.
    @Test func aDocumentWithABadMemberNameIsQuarantinedAlone() throws {
        let (text, ids) = try fourDocumentPage(seed: 7)
        var body = Array(text.utf8)
        let inserts: [(Int, [UInt8])] = [
            (3, Array(#""x":{"deep":{"\udfff":1}},"#.utf8)),
            (2, Array(#""k"#.utf8) + [0xFF] + Array(#"":1,"#.utf8)),
            (0, Array(#""\ud800k":1,"#.utf8)),
        ]
        for (index, bytes) in inserts {
            body.insert(contentsOf: bytes, at: text.utf8.distance(from: text.startIndex, to: ids[index].lowerBound))
        }
        let page = try NYTArticleSearch.parsePage(body)
        #expect(page.rejects.map(\.index) == [0, 2, 3])
        #expect(page.rejects.map(\.error.path) == ["response.docs[0]", "response.docs[2]", "response.docs[3].x"])
        #expect(page.articles.count == 1)
        // Outside the documents: the page fails as a whole, as for a bad value there.
        let envelope = Array(text.replacingOccurrences(of: #""status":"#, with: #""bad\qname":1,"status":"#).utf8)
        #expect(throws: NewsMappingError.self) { try NYTArticleSearch.parsePage(envelope) }
        // The strict parser refuses such a name.
        #expect(throws: NewsMappingError.self) { try JSONParser.parse(Array(#"{"\ud800":1}"#.utf8)) }
    }

    /// A document nesting past the limit is quarantined alone: a page is not retried forever for it.
    @Test func aDocumentNestingTooDeeplyIsQuarantinedAlone() throws {
        var generator = ArticleGenerator(seed: 5)
        let text = String(decoding: nytPageBody(articles: generator.articles(count: 3), hits: 3, page: 0, era: .era2019), as: UTF8.self)
        // Brackets and quotes inside strings: skipping the deep value must read them as text.
        let level = #"{"k\"]}":["[{\"",-0.5e3,true,"#
        let deep = String(repeating: level, count: 50_000) + "null" + String(repeating: "]}", count: 50_000)
        let ids = text.ranges(of: #""_id":"#)
        try #require(ids.count == 3)
        func page(_ value: String, inDocument index: Int) -> [UInt8] {
            Array(text.replacingCharacters(in: ids[index], with: #""related":"# + value + #","_id":"#).utf8)
        }
        let body = page(deep, inDocument: 1)
        let parsed = try NYTArticleSearch.parsePage(body)
        #expect(parsed.articles.count == 2 && parsed.rejects.map(\.index) == [1])
        let reject = try #require(parsed.rejects.first)
        #expect(reject.error.path == "response.docs[1].related")
        guard case .depthLimitExceeded(let offset) = reject.error.kind else { Issue.record("\(reject.error)"); return }
        #expect(String(decoding: body[offset..<(offset + 5)], as: UTF8.self) == #"{"k\""#)
        #expect(reject.rawDocument.first == UInt8(ascii: "{") && reject.rawDocument.last == UInt8(ascii: "}"))
        #expect(reject.rawDocument.count > deep.utf8.count)

        // The value set aside is still checked: damage inside it fails the page as damage.
        let damaged = page(deep.replacingOccurrences(of: "true,", with: "true,,"), inDocument: 1)
        #expect {
            try NYTArticleSearch.parsePage(damaged)
        } throws: { error in
            guard let error = error as? NewsMappingError, case .malformedJSON = error.kind else { return false }
            // A path hundreds of steps deep is shortened to a line.
            return error.description.count < 400
        }
        #expect {
            try NYTArticleSearch.parsePage(Array(page(deep, inDocument: 0)[..<40_000]))
        } throws: { error in
            (error as? NewsMappingError)?.kind == .truncated(offset: 40_000)
        }
        // Outside every document the envelope itself is broken.
        let envelope = Array(text.replacingOccurrences(of: #""response":{"#, with: #""response":{"facets":"# + deep + ",").utf8)
        #expect {
            try NYTArticleSearch.parsePage(envelope)
        } throws: { error in
            guard let error = error as? NewsMappingError, case .depthLimitExceeded = error.kind else { return false }
            return true
        }

        let story = #"{"url":"http://x/stories/a/1","title":"T"}"#
        let list = #"{"articles":["# + story + #",{"url":"http://x/stories/a/2","more":"# + deep + "}]}"
        let stories = try Feedzilla.parseArticleList(Array(list.utf8), categoryID: 1)
        #expect(stories.articles.map(\.id) == ["feedzilla:1"] && stories.rejects.map(\.error.path) == ["articles[1].more"])

        // A document that is itself an array nesting too deeply is rejected alone too.
        let arrayDocument = Array(text.replacingOccurrences(of: #""docs":["#, with: #""docs":["# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + ",").utf8)
        let withArray = try NYTArticleSearch.parsePage(arrayDocument)
        #expect(withArray.articles.count == 3 && withArray.rejects.map(\.error.path) == ["response.docs[0][0]"])
    }
}
