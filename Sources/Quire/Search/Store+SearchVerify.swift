import QuireCodec
internal import QuireLMDB
import QuireText

extension Store {
    /// Checks every full-text index against its records (the hook of ``verify(progress:)``):
    /// each record has a document entry whose terms all have postings (the terms recomputed from
    /// the record when every field has a path, or listed by an older store's entry, so a missing
    /// or wrong posting is found), each posting belongs to a live document, and the counters
    /// match. Returns the number of postings checked.
    func verifySearch(
        _ snap: borrowing Snapshot, _ registered: [String: RegisteredCollection], _ problem: (String) -> Void
    ) throws -> Int {
        var postings = 0
        for name in registered.keys.sorted() {
            guard let c = registered[name], let dbs = c.search else { continue }
            let place = "\(name): search index"
            // Document numbers → physical keys, and the totals they imply.
            var keys: [UInt32: [UInt8]] = [:]
            var totals = [UInt64](repeating: 0, count: 16)
            let state = try SearchState.stored(dbs, snap.lmdb)
            for entry in snap.entries(in: dbs.numbers) {
                guard let number = SearchDatabases.number(entry.key, at: 0), entry.key.count == 4 else {
                    problem("\(place): malformed document number entry")
                    continue
                }
                var offset = 0
                for f in 0..<state.lengthFields { totals[f] += try SearchVarint.read(entry.value, &offset) }
                let key = Array(entry.value[offset...])
                keys[number] = key
                if try !snap.contains(key, in: c.records) {
                    let logical = try snap.logicalKey(UnsafeRawBufferPointer(rebasing: entry.value[offset...]))
                    problem("\(place): document \(number) belongs to missing record \(logical)")
                }
            }
            let recomputable = dbs.definition.fields.allSatisfy { $0.path != nil }
            var analyzer = SearchAnalyzer(capacity: 1 << 12)
            var expectedPostings = 0
            var collectionPostings = 0
            var documents = 0
            var unlisted = 0  // documents whose terms neither their entry nor their record gives
            // Per document, what its postings must add up to: their count, a sum of their terms'
            // hashes and (recomputed from the record) of their terms' and occurrences' hashes.
            // One pass over the postings then checks every document, however long its terms' lists.
            var expected: [UInt32: SearchPostingDigest] = [:]
            for (key, parsed) in try Self.documentEntries(dbs, state, keys, snap) {
                documents += 1
                let logical = (try? key.withUnsafeBytes { try snap.logicalKey($0) }).map { "\($0)" }
                    ?? key.map { String($0, radix: 16) }.joined(separator: ".")
                guard let parsed, keys[parsed.number] == key else {
                    problem("\(place): record \(logical): document entry and number entry disagree")
                    continue
                }
                let number = parsed.number
                var terms = parsed.terms  // listed by entries of the older format only
                var occurrences: SearchPostingDigest?
                if recomputable {
                    let found: CompactValue?? = try snap.withValue(forKey: key, in: c.records) { bytes in
                        try? snap.genericValue(bytes, options: c.decoder.options)
                    }
                    guard let value = found ?? nil else {
                        problem("\(place): record \(logical) is indexed but missing or unreadable")
                        continue
                    }
                    let document = analyzer.analyze(Self.searchTexts(of: value, dbs.definition))
                    if let listed = terms, Set(document.terms) != Set(listed) {
                        problem("\(place): record \(logical): indexed terms differ from its text")
                    }
                    terms = terms ?? document.terms
                    var digest = SearchPostingDigest()
                    for (t, v) in zip(document.terms, document.values) { digest.add(t, v) }
                    occurrences = digest
                }
                guard let terms else {
                    // Text without field paths, in an entry that does not list its terms: the
                    // document's postings cannot be told apart from the others'.
                    unlisted += 1
                    continue
                }
                expectedPostings += terms.count
                var digest = SearchPostingDigest()
                for term in terms { digest.add(term, nil) }
                if let occurrences {
                    digest.occurrences = occurrences.occurrences
                    digest.checksOccurrences = true
                }
                expected[number] = digest
            }
            let records = try snap.count(of: c.records)
            if documents != records {
                problem("\(place): \(documents) documents for \(records) records")
            }
            if keys.count != documents {
                problem("\(place): \(keys.count) document numbers for \(documents) documents")
            }
            var seen: [UInt32: SearchPostingDigest] = [:]
            var previous: (term: [UInt8], last: UInt32)?
            for entry in snap.entries(in: dbs.postings) {
                guard let bound = SearchDatabases.postingNumber(entry.key) else {
                    problem("\(place): malformed posting key")
                    continue
                }
                let term = Array(entry.key.prefix(entry.key.count - 5))
                let word = String(decoding: term, as: UTF8.self)
                let block: PostingBlock
                do {
                    block = try PostingBlock(entry.value)
                } catch {
                    problem("\(place): unreadable posting block of '\(word)': \(error)")
                    continue
                }
                let overlaps = previous.map { $0.term == term && $0.last >= bound } ?? false
                if let first = block.documents.first, first < bound || overlaps {
                    problem("\(place): posting block of '\(word)' at \(bound) overlaps its neighbours")
                }
                if block.isEmpty { problem("\(place): empty posting block of '\(word)'") }
                for number in block.documents {
                    collectionPostings += 1
                    guard keys[number] != nil else {
                        problem("\(place): posting of '\(word)' for missing document \(number)")
                        continue
                    }
                    seen[number, default: SearchPostingDigest()].add(term, block.groups(of: number).map(Array.init))
                }
                if let last = block.documents.last { previous = (term, last) }
            }
            for (number, want) in expected {
                let got = seen[number] ?? SearchPostingDigest()
                guard got.count != want.count || got.terms != want.terms || (want.checksOccurrences && got.occurrences != want.occurrences)
                else { continue }
                // Name what is wrong: look the document's terms up one by one.
                let logical = try keys[number].map { k in try k.withUnsafeBytes { try snap.logicalKey($0) } }
                let name = logical.map { "\($0)" } ?? "\(number)"
                var terms = try keys[number].flatMap { try SearchDocumentEntries(dbs, state).entry(of: $0, snap.lmdb)?.terms }
                var record: [[UInt8]: [UInt8]] = [:]
                if want.checksOccurrences, let k = keys[number] {
                    let found: CompactValue?? = try snap.withValue(forKey: k, in: c.records) { bytes in
                        try? snap.genericValue(bytes, options: c.decoder.options)
                    }
                    if let value = found ?? nil {
                        let document = analyzer.analyze(Self.searchTexts(of: value, dbs.definition))
                        for (t, v) in zip(document.terms, document.values) { record[t] = v }
                        terms = terms ?? document.terms
                    }
                }
                var named = false
                for term in terms ?? [] {
                    let word = String(decoding: term, as: UTF8.self)
                    let found = try SearchPostings.block(term, at: number, in: dbs.postings, snap.lmdb)
                    let block = try found.map { f in try f.value.withUnsafeBytes { try PostingBlock($0) } }
                    guard let groups = block?.groups(of: number) else {
                        problem("\(place): record \(name): no posting for '\(word)'")
                        named = true
                        continue
                    }
                    if let occurrences = record[term], occurrences != Array(groups) {
                        problem("\(place): record \(name): wrong occurrences of '\(word)'")
                        named = true
                    }
                }
                if !named { problem("\(place): record \(name): its postings differ from its text or its term list") }
            }
            if unlisted == 0 && collectionPostings != expectedPostings {
                problem("\(place): \(collectionPostings) postings, the documents list \(expectedPostings)")
            }
            postings += collectionPostings
            if state.documents != UInt64(documents) || state.totals != totals {
                problem("\(place): counters (\(state.documents) documents) disagree with the documents (\(documents))")
            }
            if let highest = keys.keys.max(), highest >= state.nextNumber {
                problem("\(place): document number \(highest) at or past the next number \(state.nextNumber)")
            }
        }
        return postings
    }

    /// A record's text by the fields' paths (arrays contribute each element).
    static func searchTexts(of value: CompactValue, _ definition: SearchDefinition) -> [SearchText] {
        var out: [SearchText] = []
        for field in definition.fields {
            guard let path = field.path else { continue }
            func walk(_ v: CompactValue, _ rest: ArraySlice<Substring>) {
                if case .array(let items) = v {
                    for item in items { walk(item, rest) }
                    return
                }
                guard let head = rest.first else {
                    if case .string(let s) = v { out.append(SearchText(field: field.id, s)) }
                    return
                }
                if let next = v[String(head)] { walk(next, rest.dropFirst()) }
            }
            walk(value, path.split(separator: ".")[...])
        }
        return out
    }
}

extension Store {
    /// The full-text index's databases as index statistics (`search:post`, `search:doc`,
    /// `search:num`, `search:stat`), for `storeStatistics()`.
    func searchStatistics(_ snap: borrowing Snapshot, _ c: RegisteredCollection) throws -> [CollectionStatistics.Index] {
        guard let dbs = c.search else { return [] }
        return try zip(["post", "doc", "num", "stat"], [dbs.postings, dbs.documents, dbs.numbers, dbs.state]).map { name, db in
            let st = try snap.statistics(of: db)
            return CollectionStatistics.Index(name: "search:" + name, entries: st.entries, bytes: st.bytes)
        }
    }
}

/// What a document's postings add up to, compared without holding them: their count and
/// order-independent sums of hashes of their terms and of their terms with their occurrences.
struct SearchPostingDigest: Equatable {
    var count = 0
    var terms: UInt64 = 0
    var occurrences: UInt64 = 0
    var checksOccurrences = false

    mutating func add(_ term: [UInt8], _ groups: [UInt8]?) {
        count += 1
        let h = Self.hash(term, 0xcbf2_9ce4_8422_2325)
        terms &+= h
        if let groups { occurrences &+= Self.hash(groups, h ^ 0xff) }
    }

    /// FNV-1a, 64 bits.
    static func hash(_ bytes: [UInt8], _ seed: UInt64) -> UInt64 {
        var h = seed
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }
}

extension Store {
    /// Each `s:<c>:doc` entry as (physical key, its number and listed terms), nil for one that
    /// cannot be read; entries keyed by hashes give one pair per number they hold, the key taken
    /// from `keys` (the `num` entries), nil when that key does not hash to the entry's.
    fileprivate static func documentEntries(
        _ dbs: SearchDatabases, _ state: SearchState, _ keys: [UInt32: [UInt8]], _ snap: borrowing Snapshot
    ) throws -> [(key: [UInt8], entry: (number: UInt32, terms: [[UInt8]]?)?)] {
        var out: [(key: [UInt8], entry: (number: UInt32, terms: [[UInt8]]?)?)] = []
        for entry in snap.entries(in: dbs.documents) {
            guard state.hashedDocuments else {
                out.append((entry.keyBytes, try? SearchDatabases.documentEntry(entry.value)))
                continue
            }
            guard let numbers = try? SearchDocumentEntries.numbers(entry.value) else {
                out.append((entry.keyBytes, nil))
                continue
            }
            for number in numbers {
                if let key = keys[number], SearchDocumentEntries.hash(key).elementsEqual(entry.key) {
                    out.append((key, (number, nil)))
                } else {
                    out.append((entry.keyBytes, nil))
                }
            }
        }
        try snap.checkIntact()
        return out
    }
}
