import QuireCodec
internal import QuireLMDB
import QuireText

extension Store {
    /// Checks every full-text index against its records (the hook of ``verify(progress:)``):
    /// each record has a document entry whose postings add up to what its text makes, each
    /// posting belongs to a live document, and the counters match. In an index that keeps
    /// checks, a document's postings mixed with its record's text checksum (`walked`, from the
    /// record walk) must give its stored check, and one that does not is compared with its
    /// record's text tokenized again; in older indexes every document's terms are recomputed
    /// from the record when every field has a path, or listed by its entry. So a missing or
    /// wrong posting is found. Returns the number of postings checked. `isCancelled` true stops
    /// it with `CancellationError` (polled every thousand entries or so: it reads every posting).
    func verifySearch(
        _ snap: borrowing Snapshot, _ registered: [String: RegisteredCollection], _ walked: [String: WalkedRecordKeys],
        _ problem: (String) -> Void, _ at: inout VerifyPosition, reading: ((String) -> Void)? = nil,
        isCancelled: (() -> Bool)? = nil
    ) throws -> Int {
        var poll = CancellationPoll(every: 1_024)
        var postings = 0
        for name in registered.keys.sorted() {
            guard let c = registered[name], let dbs = c.search else { continue }
            let place = "\(name): search index"
            // A damaged page's error names the part read (VerifyPosition), not the last index walked.
            at = VerifyPosition(part: "collection '\(name)', full-text index, document numbers", followsKeys: false)
            reading?(at.description)
            let records = walked[name]  // what the record walk saw; always there in a whole verify
            // The numbers of the `num` entries, and the totals they imply. Their keys and checks
            // are read again by number where needed: held for every document, they took some
            // 200 bytes each (2 GB at 10M articles).
            var numbers: [UInt32] = []
            var highest: UInt32?
            var totals = [UInt64](repeating: 0, count: 16)
            let state = try SearchState.stored(dbs, snap.lmdb)
            let documentEntries = SearchDocumentEntries(dbs, state)
            for entry in snap.entries(in: dbs.numbers) {
                try poll.step(isCancelled)
                guard let number = SearchDatabases.number(entry.key, at: 0), entry.key.count == 4 else {
                    problem("\(place): malformed document number entry")
                    continue
                }
                var offset = 0
                // Wrapping: damaged lengths make a sum that disagrees with the state, not a trap.
                for f in 0..<state.lengthFields { totals[f] &+= try SearchVarint.read(entry.value, &offset) }
                if state.checkedDocuments {
                    guard SearchDocumentCheck.read(entry.value, at: offset) != nil else {
                        problem("\(place): document \(number): short number entry")
                        continue
                    }
                    offset += SearchDocumentCheck.byteCount
                }
                let key = UnsafeRawBufferPointer(rebasing: entry.value[offset...])
                numbers.append(number)
                highest = max(highest ?? number, number)
                let present = try records.map { $0.contains(key) } ?? snap.contains(Array(key), in: c.records)
                if !present {
                    let logical = try snap.logicalKey(key)
                    problem("\(place): document \(number) belongs to missing record \(logical)")
                }
            }
            // Per document, what its postings must add up to: a sum of their terms' hashes and
            // (recomputed from the record, or by its stored check) of their terms' and
            // occurrences' hashes. One pass over the postings then checks every document, however
            // long its terms' lists. Numbers index arrays when they are dense enough (a damaged
            // state or a sparse index keeps a dictionary): a pass over every posting looks each one up.
            let numberCount = numbers.count
            var checks = DocumentNumberTable(end: highest.map { UInt64($0) + 1 } ?? 0, count: numberCount)
            for number in numbers { checks.addKnown(number) }
            numbers = []
            /// `body` with the physical key and the stored check of document `number` by its
            /// `num` entry; nil when it has none (or a short one).
            func withNumberEntry<R>(_ number: UInt32, _ body: (UnsafeRawBufferPointer, UInt32?) throws -> R) throws -> R? {
                var numberKey = [UInt8]()
                SearchDatabases.appendNumber(number, to: &numberKey)
                let found: R?? = try snap.lmdb.withValue(forKey: numberKey, in: dbs.numbers) { bytes in
                    // Damaged lengths threw in the pass over the `num` entries above.
                    guard let keyOffset = try? state.keyOffset(inNumberEntry: bytes) else { return nil }
                    let check = state.checkedDocuments
                        ? SearchDocumentCheck.read(bytes, at: keyOffset - SearchDocumentCheck.byteCount) : nil
                    return try body(UnsafeRawBufferPointer(rebasing: bytes[keyOffset...]), check)
                }
                return found ?? nil
            }
            let recomputable = dbs.definition.isRecomputable
            var analyzer = SearchAnalyzer(capacity: 1 << 12, options: state.tokenizerOptions)
            var expectedPostings = 0
            var collectionPostings = 0
            var documents = 0
            var unlisted = 0  // documents whose terms neither their entry nor their record gives
            var uncounted = false  // documents checked by their stored digest, which has no count
            var fields: FieldTable? = try? snap.withFieldRetry { $0 }
            func recordName(_ number: UInt32) -> String {
                guard let key = try? documentEntries.key(of: number, snap.lmdb),
                    let logical = try? key.withUnsafeBytes({ try snap.logicalKey($0) })
                else { return "\(number)" }
                return "\(logical)"
            }
            // The digests of records' texts, analysed on every core with the table in hand; one
            // that does not decode with it (a field added since) is decoded again here, with the
            // snapshot's retry; nil for one that does not decode at all.
            func analysed(_ records: [UnsafeRawBufferPointer]) -> [SearchPostingDigest?] {
                var digests =
                    fields.map { Self.digests(of: records, dbs.definition, $0, c.decoder.options, state.tokenizerOptions) }
                    ?? Array(repeating: nil, count: records.count)
                for (i, bytes) in records.enumerated() where digests[i] == nil {
                    guard let value = try? snap.genericValue(bytes, options: c.decoder.options) else { continue }
                    fields = try? snap.withFieldRetry { $0 }
                    digests[i] = SearchPostingDigest(analyzing: Self.searchTexts(of: value, dbs.definition), with: &analyzer)
                }
                return digests
            }
            var pending: [(number: UInt32, bytes: UnsafeRawBufferPointer)] = []
            func flush() {
                for ((number, _), found) in zip(pending, analysed(pending.map(\.bytes))) {
                    guard let found else {
                        problem("\(place): record \(recordName(number)) is indexed but missing or unreadable")
                        continue
                    }
                    expectedPostings += found.count
                    checks.setExpected(number, found)
                }
                pending.removeAll(keepingCapacity: true)
            }
            /// Checks the document entry of the physical `key`: `parsed` (nil when it cannot be
            /// read) must name a number whose `num` entry holds the same key.
            func visit(_ key: UnsafeRawBufferPointer, _ parsed: (number: UInt32, terms: [[UInt8]]?)?) throws {
                documents += 1
                func logical() -> String {
                    (try? snap.logicalKey(key)).map { "\($0)" } ?? key.map { String($0, radix: 16) }.joined(separator: ".")
                }
                guard let parsed, let found = try withNumberEntry(parsed.number, { (same: $0.elementsEqual(key), check: $1) }),
                    found.same
                else {
                    problem("\(place): record \(logical()): document entry and number entry disagree")
                    return
                }
                let number = parsed.number
                let terms = parsed.terms  // listed by entries of the older format only
                if let check = found.check {
                    // Its postings mixed with its record's text must give the check stored when it
                    // was indexed (its postings alone without field paths). One that does not is
                    // analysed after the posting pass: its text changed, or its postings, or its
                    // check, or a text closure differs from the fields' paths.
                    if !recomputable {
                        checks.setExpected(number, SearchPostingDigest(stored: check))
                        uncounted = true
                        return
                    }
                    if let text = records?.textChecksum(of: key) {
                        checks.setExpected(number, SearchPostingDigest(stored: check ^ text, recheck: true))
                        uncounted = true
                        return
                    }
                }
                if recomputable, terms == nil,
                    let bytes = try snap.withValue(forKey: key, in: c.records, { $0 }), fields != nil
                {
                    // The common case, analysed in batches on every core (the map holds the bytes
                    // for as long as this read lasts).
                    pending.append((number, bytes))
                    if pending.count == Self.verifyBatch { flush() }
                    return
                }
                var digest = SearchPostingDigest()
                if recomputable {
                    let found: CompactValue?? = try snap.withValue(forKey: key, in: c.records) { bytes in
                        try? snap.genericValue(bytes, options: c.decoder.options)
                    }
                    guard let value = found ?? nil else {
                        problem("\(place): record \(logical()) is indexed but missing or unreadable")
                        return
                    }
                    var computed: [[UInt8]] = []
                    analyzer.forEachTerm(Self.searchTexts(of: value, dbs.definition)) { term, groups in
                        digest.add(term: UnsafeRawBufferPointer(term), groups: groups)
                        computed.append(Array(term))
                    }
                    digest.checksOccurrences = true
                    if let listed = terms {
                        if Set(computed) != Set(listed) { problem("\(place): record \(logical()): indexed terms differ from its text") }
                        // The postings must hold the listed terms, with the occurrences of the text.
                        let occurrences = digest.occurrences
                        digest = SearchPostingDigest(terms: listed)
                        digest.occurrences = occurrences
                        digest.checksOccurrences = true
                    }
                } else if let listed = terms {
                    digest = SearchPostingDigest(terms: listed)
                } else {
                    // Text without field paths, in an entry that does not list its terms: the
                    // document's postings cannot be told apart from the others'.
                    unlisted += 1
                    return
                }
                expectedPostings += digest.count
                checks.setExpected(number, digest)
            }
            at = VerifyPosition(part: "collection '\(name)', full-text index, documents", followsKeys: false)
            reading?(at.description)
            for entry in snap.entries(in: dbs.documents) {
                try poll.step(isCancelled)
                guard state.hashedDocuments else {
                    try visit(entry.key, try? SearchDatabases.documentEntry(entry.value))
                    continue
                }
                // A hashed entry: one document a number it holds, the key taken from its `num`
                // entry, which must hash to the entry's.
                guard let numbers = try? SearchDocumentEntries.numbers(entry.value) else {
                    try visit(entry.key, nil)
                    continue
                }
                for number in numbers {
                    let key = try withNumberEntry(number) { k, _ in
                        SearchDocumentEntries.hash(k).elementsEqual(entry.key) ? Array(k) : nil
                    }
                    if let key = key ?? nil {
                        try key.withUnsafeBytes { try visit($0, (number, nil)) }
                    } else {
                        try visit(entry.key, nil)
                    }
                }
            }
            try snap.checkIntact()
            flush()
            let recordCount = try snap.count(of: c.records)
            if documents != recordCount {
                problem("\(place): \(documents) documents for \(recordCount) records")
            }
            if numberCount != documents {
                problem("\(place): \(numberCount) document numbers for \(documents) documents")
            }
            // Out of the variable `flush` captures (the calls below read it without copying it).
            var table = DocumentNumberTable(end: 0, count: 0)
            swap(&table, &checks)
            let pass = SearchPostingPass(table.slots, termSums: table.needsTerms)
            var blocks = MappedBlocks()
            var bounds: [UInt32] = []
            // Each block's source: its segment's index in `segments`, or -1 for the main blocks.
            var sources: [Int] = []
            let postingDatabase = try dbs.postings(state)
            let segmentKeys = state.segmentKeys
            let segments = try segmentKeys.starts(try snap.lmdb.cursor(in: postingDatabase))
            let merge = try SegmentMergeProgress.stored(dbs, snap.lmdb)
            let routing = SegmentRouting(starts: segments, merge: state.merging ? merge : nil, keys: segmentKeys)
            if state.merging != (merge != nil) {
                problem("\(place): a merge entry and a state that disagree on whether a merge is under way")
            } else if state.mergingInsideTerm != (merge?.nextSegment != nil) {
                problem("\(place): a merge entry and a state that disagree on whether the merge stopped inside a term")
            }
            let segmentIndex = Dictionary(uniqueKeysWithValues: segments.enumerated().map { ($1, $0) })
            if !segments.isEmpty && !state.segmented {
                problem("\(place): posting segments in an index whose state does not say it has any")
            }
            var previous: (source: Int, term: [UInt8], last: UInt32)?
            func readBlocks() throws {
                defer {
                    blocks = MappedBlocks()
                    bounds.removeAll(keepingCapacity: true)
                    sources.removeAll(keepingCapacity: true)
                }
                for (i, block) in pass.read(blocks).enumerated() {
                    try poll.step(isCancelled)
                    let term = blocks.terms[i]
                    func word() -> String { String(decoding: term, as: UTF8.self) }
                    if let unreadable = block.unreadable {
                        problem("\(place): unreadable posting block of '\(word())': \(unreadable)")
                        continue
                    }
                    let source = sources[i]
                    let sameRun = previous.map { $0.source == source && $0.term.elementsEqual(term) } ?? false
                    let overlaps = sameRun && previous!.last >= bounds[i]
                    if let first = block.first, first < bounds[i] || overlaps {
                        problem("\(place): posting block of '\(word())' at \(bounds[i]) overlaps its neighbours")
                    }
                    // A segment's documents lie between its start and the next one's; the main
                    // blocks' below the first segment's that still owns numbers of the term (for a
                    // term a merge has passed, the first newer than the merge's; for the term it
                    // stopped inside, the one it stopped at), and the merged ones hold none of it.
                    let owners = routing.starts(for: term)
                    let low = source < 0 ? 0 : segments[source]
                    let high = source < 0 ? owners.first : source + 1 < segments.count ? segments[source + 1] : nil
                    if let first = block.first, let last = block.last, first < low || high.map({ last >= $0 }) == true {
                        problem("\(place): posting block of '\(word())' at \(bounds[i]) lies outside its segment")
                    } else if source >= 0, owners.count < segments.count, !owners.contains(segments[source]) {
                        problem("\(place): posting block of '\(word())' at \(bounds[i]) is left in a merged segment")
                    }
                    if block.first == nil { problem("\(place): empty posting block of '\(word())'") }
                    collectionPostings += block.postings
                    for number in block.missing { problem("\(place): posting of '\(word())' for missing document \(number)") }
                    if let last = block.last {
                        if sameRun { previous?.last = last } else { previous = (source, Array(term), last) }
                    }
                }
            }
            at = VerifyPosition(part: "collection '\(name)', full-text index, postings", followsKeys: false)
            reading?(at.description)
            for entry in snap.entries(in: postingDatabase) {
                try poll.step(isCancelled)
                guard let bound = SearchDatabases.postingNumber(entry.key),
                    let (segment, term) = segmentKeys.split(UnsafeRawBufferPointer(rebasing: entry.key.prefix(entry.key.count - 5)))
                else {
                    problem("\(place): malformed posting key")
                    continue
                }
                blocks.terms.append(term)
                blocks.values.append(entry.value)
                bounds.append(bound)
                sources.append(segment.flatMap { segmentIndex[$0] } ?? -1)
                if bounds.count == Self.postingBatch { try readBlocks() }
            }
            try readBlocks()
            // A walk that stopped on a damaged page is named here, not after every document's check.
            try snap.checkIntact()
            // Documents whose stored check disagrees, analysed on every core: a document whose
            // postings add up to its record's text is sound (its check alone was damaged, or its
            // text closure differs from the paths); any other is named.
            var suspects: [(number: UInt32, bytes: UnsafeRawBufferPointer)] = []
            // Documents past the first `namedDocumentLimit` are counted, not looked up term by
            // term: a damaged postings page leaves thousands wrong, and naming each took minutes.
            var unnamed = 0
            var namedDocuments = 0
            func recheck() throws {
                defer { suspects.removeAll(keepingCapacity: true) }
                for ((number, _), found) in zip(suspects, analysed(suspects.map(\.bytes))) {
                    try poll.step(isCancelled)
                    guard let found else {
                        problem("\(place): record \(recordName(number)) is indexed but unreadable")
                        continue
                    }
                    if let slot = pass.slots.slot(of: number), !pass.matches(found, slot: slot) { try named(number, found) }
                }
            }
            try table.forEachExpected(pass.slots) { number, want, slot in
                try poll.step(isCancelled)
                guard !pass.matches(want, slot: slot) else { return }
                if want.recheck, let key = try documentEntries.key(of: number, snap.lmdb),
                    let bytes = try snap.withValue(forKey: key, in: c.records, { $0 })
                {
                    suspects.append((number, bytes))
                    if suspects.count == Self.verifyBatch { try recheck() }
                    return
                }
                try named(number, want)
            }
            try recheck()
            if unnamed > 0 {
                problem("\(place): \(unnamed) more documents whose postings differ from their text (not named one by one)")
            }
            /// Names what is wrong with the postings of document `number`, which do not add up to
            /// `want`: looks its terms up one by one.
            func named(_ number: UInt32, _ want: SearchPostingDigest) throws {
                // Each one reads every block of its terms: polled each time.
                if isCancelled?() == true { throw CancellationError() }
                guard namedDocuments < Self.namedDocumentLimit else {
                    unnamed += 1
                    return
                }
                namedDocuments += 1
                let name = recordName(number)
                let key = try documentEntries.key(of: number, snap.lmdb)
                var terms = try key.flatMap { try documentEntries.entry(of: $0, snap.lmdb)?.terms }
                var record: [[UInt8]: [UInt8]] = [:]
                if want.checksOccurrences, let k = key {
                    let found: CompactValue?? = try snap.withValue(forKey: k, in: c.records) { bytes in
                        try? snap.genericValue(bytes, options: c.decoder.options)
                    }
                    if let value = found ?? nil {
                        let document = analyzer.analyze(Self.searchTexts(of: value, dbs.definition))
                        for (t, v) in zip(document.terms, document.values) { record[t] = v }
                        terms = terms ?? document.terms
                    }
                }
                var reported = false
                for term in terms ?? [] {
                    let word = String(decoding: term, as: UTF8.self)
                    let keyTerm = routing.keyTerm(term, of: number)
                    let found = try SearchPostings.block(keyTerm, at: number, in: postingDatabase, snap.lmdb)
                    let block = try found.map { f in try f.value.withUnsafeBytes { try PostingBlock($0) } }
                    guard let groups = block?.groups(of: number) else {
                        problem("\(place): record \(name): no posting for '\(word)'")
                        reported = true
                        continue
                    }
                    if let occurrences = record[term], occurrences != Array(groups) {
                        problem("\(place): record \(name): wrong occurrences of '\(word)'")
                        reported = true
                    }
                }
                if !reported { problem("\(place): record \(name): its postings differ from its text or its term list") }
            }
            if unlisted == 0 && !uncounted && collectionPostings != expectedPostings {
                problem("\(place): \(collectionPostings) postings, the documents list \(expectedPostings)")
            }
            postings += collectionPostings
            if state.documents != UInt64(documents) || state.totals != totals {
                problem("\(place): counters (\(state.documents) documents) disagree with the documents (\(documents))")
            }
            if let highest, highest >= state.nextNumber {
                problem("\(place): document number \(highest) at or past the next number \(state.nextNumber)")
            }
        }
        return postings
    }

    /// The paths whose text verify's record walk checksums (``WalkedRecordKeys``): a
    /// full-text index that keeps checks and whose fields all have paths; nil otherwise.
    static func checkedSearchText(_ snap: borrowing Snapshot, _ c: RegisteredCollection) -> SearchTextPaths? {
        guard let dbs = c.search, dbs.definition.isRecomputable,
            (try? SearchState.stored(dbs, snap.lmdb))?.checkedDocuments == true
        else { return nil }
        return SearchTextPaths(dbs.definition)
    }

    /// Posting blocks read together by verify, on every core.
    static let postingBatch = 8_192

    /// Documents whose wrong postings verify names term by term; the others are counted.
    static let namedDocumentLimit = 100

    /// Records analysed together by verify, on every core.
    static let verifyBatch = 2_048

    /// The postings digest of each record (decoded with `fields`; nil for one that does not
    /// decode), computed by `Parallelism.parts` threads.
    static func digests(
        of records: [UnsafeRawBufferPointer], _ definition: SearchDefinition, _ fields: FieldTable,
        _ options: CompactDecoder.Options, _ rules: TokenizerOptions
    ) -> [SearchPostingDigest?] {
        let (mapped, paths) = (MappedRecords(records: records), SearchTextPaths(definition))
        return Parallelism.inParts(count: records.count) { range in
            var analyzer = SearchAnalyzer(capacity: 1 << 12, options: rules)
            return range.map { i -> SearchPostingDigest? in
                guard let value = try? CompactValue.decode(from: mapped.records[i], fields: fields, options: options) else {
                    return nil
                }
                return SearchPostingDigest(analyzing: paths.texts(of: value), with: &analyzer)
            }
        }.flatMap { $0 }
    }

    /// A record's text by the fields' paths (arrays contribute each element).
    static func searchTexts(of value: CompactValue, _ definition: SearchDefinition) -> [SearchText] {
        SearchTextPaths(definition).texts(of: value)
    }
}

/// The fields' paths of a full-text index, split once (verify's record walk reads them for
/// every record).
struct SearchTextPaths: Sendable {
    private let fields: [(id: UInt8, path: [String])]

    init(_ definition: SearchDefinition) {
        fields = definition.fields.compactMap { field in
            field.path.map { (field.id, $0.split(separator: ".").map(String.init)) }
        }
    }

    /// Calls `body` with each piece of text the paths find in `value`, field by field in the
    /// definition's order, an array's elements in order.
    func forEachText(in value: CompactValue, _ body: (UInt8, String) -> Void) {
        for (id, path) in fields {
            func walk(_ v: CompactValue, _ depth: Int) {
                if case .array(let items) = v {
                    for item in items { walk(item, depth) }
                    return
                }
                guard depth < path.count else {
                    if case .string(let s) = v { body(id, s) }
                    return
                }
                if let next = v[path[depth]] { walk(next, depth + 1) }
            }
            walk(value, 0)
        }
    }

    /// The pieces of text the paths find in `value`, in ``forEachText(in:_:)``'s order.
    func texts(of value: CompactValue) -> [SearchText] {
        var out: [SearchText] = []
        forEachText(in: value) { out.append(SearchText(field: $0, $1)) }
        return out
    }

    /// ``SearchDocumentCheck/textChecksum(_:)`` of the text the paths find in `value`.
    func textChecksum(of value: CompactValue) -> UInt32 {
        var checksum = SearchTextChecksum()
        forEachText(in: value) { checksum.add(field: $0, $1) }
        return checksum.value
    }
}

extension Store {
    /// The full-text index's databases as index statistics (`search:post`, `search:doc`,
    /// `search:num`, `search:stat`), for `storeStatistics()`.
    func searchStatistics(_ snap: borrowing Snapshot, _ c: RegisteredCollection) throws
        -> (indexes: [CollectionStatistics.Index], segments: Int?, merging: Bool?)
    {
        guard let dbs = c.search else { return ([], nil, nil) }
        let state = try SearchState.stored(dbs, snap.lmdb)
        let postings = try dbs.postings(state)
        let indexes = try zip(["post", "doc", "num", "stat"], [postings, dbs.documents, dbs.numbers, dbs.state]).map {
            name, db in
            let st = try snap.statistics(of: db)
            return CollectionStatistics.Index(name: "search:" + name, entries: st.entries, bytes: st.bytes)
        }
        let segments = state.segmented ? try state.segmentKeys.starts(try snap.lmdb.cursor(in: postings)).count : 0
        return (indexes, segments, state.merging)
    }
}

/// What a document's postings add up to, compared without holding them: their count and
/// order-independent sums of hashes of their terms and of their terms with their occurrences.
struct SearchPostingDigest: Equatable {
    var count = 0
    var terms: UInt64 = 0
    var occurrences: UInt64 = 0
    var checksOccurrences = false
    /// What the low 32 bits of `occurrences` must be by a document's stored check
    /// (``SearchDocumentCheck``): then only they are compared.
    var storedOccurrences: UInt32?
    /// Whether a mismatch is checked again against the record's text before it is reported
    /// (`storedOccurrences` came from a check mixed with the text's checksum).
    var recheck = false

    init() {}

    /// What the postings of a document must add up to by its stored check.
    init(stored occurrences: UInt32, recheck: Bool = false) {
        storedOccurrences = occurrences
        checksOccurrences = true
        self.recheck = recheck
    }

    /// Whether `seen` (the sums of the postings read; their count is not kept) adds up to this
    /// digest (the expected one).
    func matches(_ seen: SearchPostingDigest) -> Bool {
        if let storedOccurrences { return UInt32(truncatingIfNeeded: seen.occurrences) == storedOccurrences }
        return seen.terms == terms && (!checksOccurrences || seen.occurrences == occurrences)
    }

    /// The digest of the postings a text makes: every term with its occurrences.
    init(analyzing texts: [SearchText], with analyzer: inout SearchAnalyzer) {
        var digest = SearchPostingDigest()
        analyzer.forEachTerm(texts) { term, groups in digest.add(term: UnsafeRawBufferPointer(term), groups: groups) }
        digest.checksOccurrences = true
        self = digest
    }

    /// The digest of a document's postings: its terms and their encoded occurrences.
    init(_ document: SearchDocumentTerms) {
        document.withTerms { terms in
            for t in 0..<terms.count { add(term: terms.term(t), groups: terms.groups(t)) }
        }
        checksOccurrences = true
    }

    /// The digest of a list of terms, without occurrences.
    init(terms list: [[UInt8]]) {
        for term in list { term.withUnsafeBytes { add(termHash: Self.hash($0), groups: nil) } }
    }

    mutating func add(term: UnsafeRawBufferPointer, groups: UnsafeRawBufferPointer?) {
        add(termHash: Self.hash(term), groups: groups)
    }

    /// Adds a posting whose term hashes to `h` (``hash(_:)``): a block's postings share it.
    mutating func add(termHash h: UInt64, groups: UnsafeRawBufferPointer?) {
        count += 1
        terms &+= h
        if let groups { occurrences &+= Self.occurrenceHash(termHash: h, groups: groups) }
    }

    /// What a posting of the term hashing to `termHash` with `groups` adds to `occurrences`:
    /// the groups taken 8 bytes at a time (little-endian) through a multiply-xorshift mix, a
    /// posting's groups are a few bytes. Fixed by the format (``SearchDocumentCheck``); every
    /// posting of a bulk load computes one, so it costs a few multiplies, not one a byte.
    static func occurrenceHash(termHash: UInt64, groups: UnsafeRawBufferPointer) -> UInt64 {
        func mix(_ x: UInt64) -> UInt64 {
            var x = x
            x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
            return x ^ (x >> 32)
        }
        var h = termHash ^ 0x9E37_79B9_7F4A_7C15 &* UInt64(groups.count + 1)
        var i = 0
        while i + 8 <= groups.count {
            h = mix(h ^ UInt64(littleEndian: groups.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i += 8
        }
        var tail: UInt64 = 0
        for j in i..<groups.count { tail |= UInt64(groups[j]) << (8 * UInt64(j - i)) }
        return mix(mix(h ^ tail))
    }

    /// FNV-1a, 64 bits.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var h = seed
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }
}
