import Foundation
import QuireCodec
import QuireFixtures
import QuireNews
import Testing

/// Hides a value's hand-written conformance, so the encoder and decoder take the Codable path.
private struct ViaCodable<Value: Codable>: Codable {
    var value: Value
    init(_ value: Value) { self.value = value }
    init(from decoder: any Decoder) throws { value = try Value(from: decoder) }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

/// Articles that stress the fast path: generated ones, nil-heavy ones and unicode-heavy ones.
private func testArticles(count: Int, seed: UInt64) -> [Article] {
    var generator = ArticleGenerator(seed: seed)
    let unicode = ["é", "東京", "🎉🌍", "e\u{301}", "Москва", "\u{0}", "“”", "ﬁ", String(repeating: "ü", count: 70)]
    return (0..<count).map { index in
        var article = generator.article(index: index)
        var mask = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15
        func drop() -> Bool {
            defer { mask = mask >> 1 | mask << 63 }
            return mask & 1 == 1
        }
        if index % 3 == 1 {
            // Nil-heavy: about half of the optionals are absent, arrays sometimes empty.
            if drop() { article.headline = nil }
            if drop() { article.kicker = nil }
            if drop() { article.abstract = nil }
            if drop() { article.snippet = nil }
            if drop() { article.leadParagraph = nil }
            if drop() { article.source = nil }
            if drop() { article.publishedAt = nil }
            if drop() { article.section = nil }
            if drop() { article.newsDesk = nil }
            if drop() { article.documentType = nil }
            if drop() { article.wordCount = nil }
            if drop() { article.authors = drop() ? nil : [] }
            if drop() { article.keywords = drop() ? nil : [] }
            if drop() { article.multimedia = nil }
            if drop() { article.keywords = article.keywords?.map { Keyword(name: $0.name, value: $0.value) } }
        } else if index % 3 == 2 {
            // Unicode-heavy, with repeats and shared prefixes (string references) and long strings.
            let a = unicode[index % unicode.count], b = unicode[(index / 3) % unicode.count]
            article.headline = "\(a) \(b) \(article.headline ?? "")"
            article.kicker = article.headline
            article.abstract = String(repeating: a + b, count: index % 40)
            article.snippet = (article.abstract ?? "") + "…"
            article.printPage = b
            article.authors = [a, b, a + b, a]
            article.publishedAt = Date(timeIntervalSince1970: Double(index) * 1234.567)
            article.wordCount = index % 2 == 0 ? -index * 1000 : Int.max - index
            article.multimedia = article.multimedia.map { $0 + [Media(url: a + b, caption: b, kind: a)] }
        }
        return article
    }
}

@Suite struct CompactConformanceTests {
    @Test func fastPathAndCodablePathAgree() throws {
        // The fast path interns the enumeration-like fields, so its bytes differ from the Codable
        // path's; both must read back as the same article with either decoder, and as the same
        // generic value (so JSON dumps are unchanged).
        let articles = testArticles(count: 3000, seed: 11)
        let encoder = CompactEncoder()
        let decoder = CompactDecoder()
        var codableFields = FieldTable()
        var fastFields = FieldTable()
        var mixedFields = FieldTable()
        var mixedRecords: [[UInt8]] = []
        for (index, article) in articles.enumerated() {
            let codable = try encoder.encode(ViaCodable(article), fields: &codableFields)
            let fast = try encoder.encode(article, fields: &fastFields)
            #expect(try decoder.decode(Article.self, from: fast, fields: fastFields) == article, "article \(index)")
            #expect(try decoder.decode(ViaCodable<Article>.self, from: fast, fields: fastFields).value == article, "article \(index)")
            #expect(try decoder.decode(Article.self, from: codable, fields: codableFields) == article, "article \(index)")
            let fastJSON = try CompactValue.decode(from: fast, fields: fastFields).jsonString()
            #expect(fastJSON == (try CompactValue.decode(from: codable, fields: codableFields).jsonString()), "article \(index)")
            // Interleaving the paths on one table.
            mixedRecords.append(
                index % 2 == 0
                    ? try encoder.encode(ViaCodable(article), fields: &mixedFields)
                    : try encoder.encode(article, fields: &mixedFields))
            if fast.count > codable.count { Issue.record("interning made article \(index) larger") }
        }
        for (record, article) in zip(mixedRecords, articles) {
            #expect(try decoder.decode(Article.self, from: record, fields: mixedFields) == article)
            #expect(try decoder.decode(ViaCodable<Article>.self, from: record, fields: mixedFields).value == article)
        }
        // Field names are interned in the same order; the fast table holds the values besides.
        let prefix = FieldTable.internedValuePrefix
        #expect(fastFields.names.filter { $0.first != prefix } == codableFields.names)
        #expect(fastFields.internedValueCount > 0 && fastFields.internedValueCount < 400)
        #expect(codableFields.internedValueCount == 0)
    }

    @Test func fieldsWithoutInterningKeepTheCodableBytes() throws {
        // With every interned field absent, both paths still give identical bytes and tables.
        let encoder = CompactEncoder()
        var codableFields = FieldTable()
        var fastFields = FieldTable()
        for (index, var article) in testArticles(count: 600, seed: 14).enumerated() {
            (article.source, article.section, article.subsection, article.newsDesk) = (nil, nil, nil, nil)
            (article.printSection, article.documentType, article.typeOfMaterial) = (nil, nil, nil)
            article.keywords = index % 2 == 0 ? nil : []
            article.multimedia = article.multimedia?.map { media in
                var media = media
                media.kind = nil
                return media
            }
            let fast = try encoder.encode(article, fields: &fastFields)
            #expect(fast == (try encoder.encode(ViaCodable(article), fields: &codableFields)), "article \(index)")
        }
        #expect(fastFields == codableFields)
    }

    @Test func genericEncodeTakesTheFastPath() throws {
        // Through a generic `Encodable` context (as the store calls it) the dynamic check finds it.
        func encodeGeneric<T: Encodable>(_ value: T, _ fields: inout FieldTable) throws -> [UInt8] {
            try CompactEncoder().encode(value, fields: &fields)
        }
        func decodeGeneric<T: Decodable>(_ type: T.Type, _ bytes: [UInt8], _ fields: FieldTable) throws -> T {
            try CompactDecoder().decode(type, from: bytes, fields: fields)
        }
        let article = testArticles(count: 3, seed: 5)[2]
        var fields = FieldTable()
        let bytes = try encodeGeneric(article, &fields)
        var fastFields = FieldTable()
        #expect(bytes == (try CompactEncoder().encode(article, fields: &fastFields)))
        #expect(fields.internedValueCount > 0)  // only the fast path interns values
        #expect(try decodeGeneric(Article.self, bytes, fields) == article)
    }

    @Test func decodingAgreesBothWays() throws {
        let articles = testArticles(count: 2000, seed: 12)
        let encoder = CompactEncoder()
        let decoder = CompactDecoder()
        var fields = FieldTable()
        for article in articles {
            let codableBytes = try encoder.encode(ViaCodable(article), fields: &fields)
            let fastBytes = try encoder.encode(article, fields: &fields)
            let fastFromCodable = try decoder.decode(Article.self, from: codableBytes, fields: fields)
            let codableFromFast = try decoder.decode(ViaCodable<Article>.self, from: fastBytes, fields: fields).value
            #expect(fastFromCodable == article)
            #expect(codableFromFast == article)
            // Standalone bytes (names embedded) and generic readers read fast-path records too.
            let standalone = try encoder.encodeStandalone(ViaCodable(article))
            #expect(try decoder.decodeStandalone(Article.self, from: standalone) == article)
            let generic = try CompactValue.decode(from: fastBytes, fields: fields)
            #expect(generic["id"] == .string(article.id))
            #expect(generic["keywords"]?[0]?["value"] == article.keywords?.first.map { .string($0.value) })
            #expect(generic["keywords"]?[0]?["name"] == article.keywords?.first.map { .string($0.name) })
            #expect(generic["section"] == article.section.map { .string($0) })
        }
    }

    @Test func articleListsRoundTrip() throws {
        let lists = [
            ArticleList(id: "feedzilla:category:1"),
            ArticleList(id: "l2", title: "Top News", url: "https://x.test/1", articleDescription: "d", articleIDs: ["a", "bbbb", "bbbb", "bbbbcccccccc"]),
        ]
        var fastFields = FieldTable()
        var codableFields = FieldTable()
        for list in lists {
            let fast = try CompactEncoder().encode(list, fields: &fastFields)
            #expect(fast == (try CompactEncoder().encode(ViaCodable(list), fields: &codableFields)))
            #expect(try CompactDecoder().decode(ArticleList.self, from: fast, fields: fastFields) == list)
        }
    }

    @Test func schemaEvolution() throws {
        var fields = FieldTable()
        // A newer writer with extra fields, and an object with a null: unknown fields are skipped, nulls are nil.
        let newer = CompactValue.object([
            .init(key: "extra", value: .array([.string("skipped"), .int(3)])),
            .init(key: "id", value: .string("x1")),
            .init(key: "headline", value: .null),
            .init(key: "url", value: .string("https://x.test/a")),
            .init(key: "keywords", value: .array([.object([
                .init(key: "value", value: .string("v")), .init(key: "weight", value: .double(0.5)),
                .init(key: "name", value: .string("subject")),
            ])])),
        ])
        let bytes = try CompactEncoder().encode(newer, fields: &fields)
        let article = try CompactDecoder().decode(Article.self, from: bytes, fields: fields)
        #expect(article == Article(id: "x1", url: "https://x.test/a", keywords: [Keyword(name: "subject", value: "v")]))
    }

    @Test func errorsNameTheirPath() throws {
        func decode(_ value: CompactValue) throws -> Article {
            var fields = FieldTable()
            let bytes = try CompactEncoder().encode(value, fields: &fields)
            return try CompactDecoder().decode(Article.self, from: bytes, fields: fields)
        }
        func path(_ error: any Error) -> String {
            switch error as? DecodingError {
            case .keyNotFound(let key, let context): (context.codingPath.dropLast() + [key]).map(\.stringValue).joined(separator: "/")
            case .typeMismatch(_, let context): context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: "/")
            default: "not a DecodingError: \(error)"
            }
        }
        let base: [CompactValue.Field] = [.init(key: "id", value: .string("i")), .init(key: "url", value: .string("u"))]
        do {
            _ = try decode(.object([.init(key: "url", value: .string("u"))]))
            Issue.record("missing id decoded")
        } catch {
            guard case .keyNotFound = error as? DecodingError else { throw error }
            #expect(path(error) == "id")
        }
        do {
            _ = try decode(.object(base + [.init(key: "wordCount", value: .string("12"))]))
            Issue.record("string word count decoded")
        } catch {
            guard case .typeMismatch = error as? DecodingError else { throw error }
            #expect(path(error) == "wordCount")
        }
        let keywords: CompactValue = .array([
            .object([.init(key: "name", value: .string("n")), .init(key: "value", value: .string("v"))]),
            .object([.init(key: "name", value: .string("n")), .init(key: "value", value: .string("v")), .init(key: "rank", value: .string("1"))]),
        ])
        do {
            _ = try decode(.object(base + [.init(key: "keywords", value: keywords)]))
            Issue.record("string rank decoded")
        } catch {
            guard case .typeMismatch = error as? DecodingError else { throw error }
            #expect(path(error) == "keywords/1/rank")
        }
        do {
            _ = try decode(.object(base + [.init(key: "keywords", value: .array([.object([.init(key: "name", value: .string("n"))])]))]))
            Issue.record("keyword without value decoded")
        } catch {
            guard case .keyNotFound = error as? DecodingError else { throw error }
            #expect(path(error) == "keywords/Index 0/value")
        }
        do {
            _ = try decode(.object(base + [.init(key: "authors", value: .array([.string("a"), .int(1)]))]))
            Issue.record("integer author decoded")
        } catch {
            guard case .typeMismatch = error as? DecodingError else { throw error }
            #expect(path(error) == "authors/1")
        }
        do {
            _ = try decode(.string("not an object"))
            Issue.record("string decoded as an article")
        } catch {
            guard case .typeMismatch = error as? DecodingError else { throw error }
        }
    }

    @Test func hostileBytesNeverCrash() throws {
        var fields = FieldTable()
        let encoder = CompactEncoder()
        let seeds = try testArticles(count: 60, seed: 13).map { try encoder.encode($0, fields: &fields) }
        var random = SplitMix64(seed: 99)
        var decoded = 0
        var failed = 0
        for round in 0..<6000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0...Int(random.next() % 4) {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.removeSubrange(at..<min(bytes.count, at + Int(random.next() % 8) + 1))
                case 2: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
                default: bytes[at] ^= 1 << (random.next() % 8)
                }
                if bytes.isEmpty { bytes = [1] }
            }
            let fast = try? CompactDecoder().decode(Article.self, from: bytes, fields: fields)
            _ = try? CompactDecoder().decode(ViaCodable<Article>.self, from: bytes, fields: fields)
            if let fast {
                decoded += 1
                // Whatever the fast path accepts is a valid article: it encodes and reads back equal.
                var again = fields
                let clean = try encoder.encode(fast, fields: &again)
                #expect(try CompactDecoder().decode(Article.self, from: clean, fields: again) == fast)
            } else {
                failed += 1
            }
        }
        #expect(decoded > 0)
        #expect(failed > 0)
    }
}

private struct SplitMix64 {
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
