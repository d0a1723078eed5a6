import QuireCodec
internal import QuireLMDB
import QuireText

extension Store {
    /// Checks every full-text index against its records (the hook of ``verify(progress:)``):
    /// each record has a document entry whose terms all have postings (recomputed from the record
    /// when every field has a path, so a missing or wrong posting is found), each posting belongs
    /// to a live document, and the counters match. Returns the number of postings checked.
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
            for entry in snap.entries(in: dbs.numbers) {
                guard let number = SearchDatabases.number(entry.key, at: 0), entry.key.count == 4 else {
                    problem("\(place): malformed document number entry")
                    continue
                }
                var offset = 0
                for f in 0..<16 { totals[f] += try SearchVarint.read(entry.value, &offset) }
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
            var documents = 0
            for entry in snap.entries(in: dbs.documents) {
                documents += 1
                let key = entry.keyBytes
                let logical = try snap.logicalKey(entry.key)
                guard let number = SearchDatabases.number(entry.value, at: 0), keys[number] == key else {
                    problem("\(place): record \(logical): document entry and number entry disagree")
                    continue
                }
                var terms: [[UInt8]] = []
                var offset = 4
                while offset < entry.value.count {
                    let length = Int(try SearchVarint.read(entry.value, &offset))
                    guard length <= entry.value.count - offset else { break }
                    terms.append(Array(entry.value[offset..<(offset + length)]))
                    offset += length
                }
                expectedPostings += terms.count
                var expected: [[UInt8]: [UInt8]] = [:]
                if recomputable {
                    let found: CompactValue?? = try snap.withValue(forKey: key, in: c.records) { bytes in
                        try? snap.genericValue(bytes, options: c.decoder.options)
                    }
                    guard let value = found ?? nil else {
                        problem("\(place): record \(logical) is indexed but missing or unreadable")
                        continue
                    }
                    let document = analyzer.analyze(Self.searchTexts(of: value, dbs.definition))
                    for (t, v) in zip(document.terms, document.values) { expected[t] = v }
                    if Set(document.terms) != Set(terms) {
                        problem("\(place): record \(logical): indexed terms differ from its text")
                    }
                }
                for term in terms {
                    let postingKey = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, number) }
                    let value = try snap.get(postingKey, in: dbs.postings)
                    let word = String(decoding: term, as: UTF8.self)
                    if value == nil {
                        problem("\(place): record \(logical): no posting for '\(word)'")
                    } else if let want = expected[term], want != value {
                        problem("\(place): record \(logical): wrong occurrences of '\(word)'")
                    }
                }
            }
            let records = try snap.count(of: c.records)
            if documents != records {
                problem("\(place): \(documents) documents for \(records) records")
            }
            if keys.count != documents {
                problem("\(place): \(keys.count) document numbers for \(documents) documents")
            }
            for entry in snap.entries(in: dbs.postings) {
                postings += 1
                guard let number = SearchDatabases.postingNumber(entry.key) else {
                    problem("\(place): malformed posting key")
                    continue
                }
                if keys[number] == nil {
                    let word = String(decoding: entry.key.prefix(entry.key.count - 5), as: UTF8.self)
                    problem("\(place): posting of '\(word)' for missing document \(number)")
                }
                do {
                    try SearchOccurrences.forEachField(entry.value) { _, _ in }
                } catch {
                    problem("\(place): unreadable posting: \(error)")
                }
            }
            if postings != expectedPostings {
                problem("\(place): \(postings) postings, the documents list \(expectedPostings)")
            }
            let state = try snap.withValue(forKey: SearchDatabases.stateKey, in: dbs.state) { try SearchState($0) } ?? SearchState()
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
