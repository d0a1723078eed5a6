internal import QuireLMDB
import QuireText

extension SearchDefinition {
    /// Whether every field has a path, so that tools that do not know the Swift type
    /// (`quire verify`) can read a record's text back from its generic value.
    var isRecomputable: Bool { fields.allSatisfy { $0.path != nil } }
}

/// The databases of a collection's full-text index:
///
/// - `s:<c>:post`: term bytes, `0x00`, big-endian `UInt32` document number → the term's
///   occurrences in that document (``SearchOccurrences``); a term's postings are one key range;
/// - `s:<c>:doc`: physical record key, or an 8-byte hash of it (``SearchDocumentEntries``) →
///   document number (4 bytes). Entries written before Quire 0.1's final format also list the
///   document's distinct terms; newer ones do not (they took half the index): an upsert or a
///   delete finds the old terms by tokenizing the record it replaces, read before it is
///   overwritten;
/// - `s:<c>:num`: document number → the document's field lengths (``SearchState/lengthFields``
///   of them) and its physical record key;
/// - `s:<c>:stat`: `state` → the next document number, the document count, the token totals
///   per field (BM25's average lengths), then (in indexes created now) the lengths a `num` entry
///   holds and the flags (bit 0: `doc` is keyed by hashes; bit 1: `num` entries hold checks;
///   bit 2: `post` may hold segments, ``SearchSegments``; bit 3: the postings are in
///   `s:<c>:post.1`; bit 4: a merge of the segments is under way, ``SegmentMergeProgress``;
///   bit 5: the segments' keys start below every term, ``SegmentKeys/low``).
struct SearchDatabases: Sendable {
    let definition: SearchDefinition
    /// `s:<c>:post` and `s:<c>:post.1`, which take turns holding the postings
    /// (``SearchState/secondPostings``): a load's compaction writes the other one in several
    /// transactions, so that its memory stays bounded, then switches in one. The second is nil
    /// in a read-only store written before it existed.
    let postingDatabases: (first: Database, second: Database?)
    let documents: Database
    let numbers: Database
    let state: Database

    static func names(_ collection: String) -> [String] {
        ["s:\(collection):post", "s:\(collection):doc", "s:\(collection):num", "s:\(collection):stat", "s:\(collection):post.1"]
    }

    /// The database that holds the postings by `state`.
    func postings(_ state: SearchState) throws -> Database {
        guard state.secondPostings else { return postingDatabases.first }
        guard let second = postingDatabases.second else {
            throw StoreError(.corrupted, "search index: its postings are in a database the store lacks")
        }
        return second
    }

    /// The posting database that does not hold the postings by `state` (a compaction's target).
    func otherPostings(_ state: SearchState) -> Database? {
        state.secondPostings ? postingDatabases.first : postingDatabases.second
    }

    static let stateKey = Array("state".utf8)
    /// The `s:<c>:stat` entry a compaction writes while it copies the postings into the other
    /// posting database over several transactions; every write to the index deletes it
    /// (``SearchIndexWriter/flush(_:)``), so a copy that a write overtook is not switched to.
    static let rewriteKey = Array("rewrite".utf8)
    /// The `s:<c>:stat` entry of a merge of the segments in progress (``SegmentMergeProgress``).
    static let mergeKey = Array("merge".utf8)

    /// `term 0x00 number`.
    static func postingKey(_ term: UnsafeBufferPointer<UInt8>, _ number: UInt32) -> [UInt8] {
        var key = [UInt8]()
        key.reserveCapacity(term.count + 5)
        setPostingKey(&key, term, number)
        return key
    }

    /// `key` becomes `term 0x00 number` (its capacity kept: a bulk run reuses one key).
    static func setPostingKey(_ key: inout [UInt8], _ term: some Collection<UInt8>, _ number: UInt32) {
        key.removeAll(keepingCapacity: true)
        key.append(contentsOf: term)
        key.append(0)
        appendNumber(number, to: &key)
    }

    /// Overwrites the 4 bytes of `key` with `number`, big-endian.
    static func setNumber(_ number: UInt32, in key: inout [UInt8]) {
        for i in 0..<4 { key[i] = UInt8(truncatingIfNeeded: number >> (24 - 8 * UInt32(i))) }
    }

    static func appendNumber(_ number: UInt32, to out: inout [UInt8]) {
        withUnsafeBytes(of: number.bigEndian) { out.append(contentsOf: $0) }
    }

    static func number(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32? {
        guard bytes.count >= offset + 4 else { return nil }
        var n: UInt32 = 0
        for i in 0..<4 { n = n << 8 | UInt32(bytes[offset + i]) }
        return n
    }

    /// A `s:<c>:doc` value: the document number, and its distinct terms when the entry lists
    /// them (nil: an entry of the current format, which does not).
    static func documentEntry(_ bytes: UnsafeRawBufferPointer) throws -> (number: UInt32, terms: [[UInt8]]?) {
        guard let number = number(bytes, at: 0) else { throw StoreError(.corrupted, "search index: short document entry") }
        if bytes.count == 4 { return (number, nil) }
        var offset = 4
        var terms: [[UInt8]] = []
        while offset < bytes.count {
            let length = Int(clamping: try SearchVarint.read(bytes, &offset))
            guard length <= bytes.count - offset else { throw StoreError(.corrupted, "search index: short term") }
            terms.append(Array(bytes[offset..<(offset + length)]))
            offset += length
        }
        return (number, terms)
    }

    /// The block bound at the end of a posting key.
    static func postingNumber(_ key: UnsafeRawBufferPointer) -> UInt32? {
        guard key.count >= 6, key[key.count - 5] == 0 else { return nil }
        return number(key, at: key.count - 4)
    }
}

/// Unsigned LEB128, as QuireText's posting lists.
enum SearchVarint {
    static func append(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    static func read(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
            if shift > 63 { break }
        }
        throw StoreError(.corrupted, "search index: truncated or overlong varint at byte \(offset)")
    }
}

/// One document's occurrences of one term: the `group+` of QuireText's posting format
/// (docs/SEARCH.md, "Posting lists"): `header = count << 5 | field << 1 | isLastGroup`, then the
/// positions, the first absolute and the others as deltas.
enum SearchOccurrences {
    static func encode(_ occurrences: UnsafeBufferPointer<Occurrence>, into out: inout [UInt8]) {
        var i = 0
        while i < occurrences.count {
            let field = occurrences[i].field
            var end = i
            while end < occurrences.count && occurrences[end].field == field { end += 1 }
            let last: UInt64 = end == occurrences.count ? 1 : 0
            SearchVarint.append(UInt64(end - i) << 5 | UInt64(field & 15) << 1 | last, to: &out)
            var previous: UInt32 = 0
            for j in i..<end {
                let p = occurrences[j].position
                SearchVarint.append(UInt64(j == i ? p : p - previous), to: &out)
                previous = p
            }
            i = end
        }
    }

    /// Calls `body` with each field and its count of occurrences.
    static func forEachField(_ bytes: UnsafeRawBufferPointer, _ body: (UInt8, UInt32) -> Void) throws {
        var offset = 0
        while true {
            let header = try SearchVarint.read(bytes, &offset)
            let count = header >> 5
            guard count > 0, count < 1 << 32 else { throw StoreError(.corrupted, "search index: empty occurrence group") }
            for _ in 0..<count { _ = try SearchVarint.read(bytes, &offset) }
            body(UInt8((header >> 1) & 15), UInt32(count))
            if header & 1 == 1 { break }
        }
        guard offset == bytes.count else { throw StoreError(.corrupted, "search index: bytes after the last group") }
    }

    /// Appends each occurrence, in (field, position) order.
    static func decode(_ bytes: UnsafeRawBufferPointer, into out: inout [Occurrence]) throws {
        var offset = 0
        while true {
            let header = try SearchVarint.read(bytes, &offset)
            let count = header >> 5
            guard count > 0, count < 1 << 32 else { throw StoreError(.corrupted, "search index: empty occurrence group") }
            let field = UInt8((header >> 1) & 15)
            var position: UInt64 = 0
            for j in 0..<count {
                let v = try SearchVarint.read(bytes, &offset)
                position = j == 0 ? v : position + v
                guard position <= UInt64(UInt32.max) else { throw StoreError(.corrupted, "search index: position overflow") }
                out.append(Occurrence(field: field, position: UInt32(position)))
            }
            if header & 1 == 1 { break }
        }
        guard offset == bytes.count else { throw StoreError(.corrupted, "search index: bytes after the last group") }
    }
}

/// The `state` entry of `s:<c>:stat`.
struct SearchState: Sendable, Hashable {
    var nextNumber: UInt32 = 0
    var documents: UInt64 = 0
    /// Token totals per field id.
    var totals = [UInt64](repeating: 0, count: 16)
    /// The field lengths each `s:<c>:num` entry holds, for field ids `0..<lengthFields`: the
    /// definition's highest id + 1 in an index created now (6 for articles), 16 in indexes
    /// created before (whose state has no such number). Lengths of ids past it are not kept
    /// (no declared field has them, so no score reads them): 10 bytes an article less.
    var lengthFields = 16
    /// Whether `s:<c>:doc` is keyed by a hash of the physical key (``SearchDocumentEntries``):
    /// in indexes created by the builds of 2026-12-02 to 12-04; those created before and after
    /// are keyed by the physical key.
    var hashedDocuments = false
    /// Whether each `s:<c>:num` entry holds the document's ``SearchDocumentCheck`` after its
    /// lengths: in indexes created now, so that `verify` checks postings without tokenizing
    /// every record again.
    var checkedDocuments = false
    /// Whether `s:<c>:post` may hold segments (``SearchSegments``): set when a bulk chunk writes
    /// one, cleared when the load's end merges them. Builds that predate segments refuse such an
    /// index instead of missing the segments' postings.
    var segmented = false
    /// Whether the postings are in `s:<c>:post.1` rather than `s:<c>:post`
    /// (``SearchDatabases/postings(_:)``).
    var secondPostings = false
    /// Whether a merge of the segments is under way (``SegmentMergeProgress``): writes route
    /// by its progress. Builds that predate it refuse the index rather than write postings where
    /// nothing reads them.
    var merging = false
    /// Whether the segments' keys start with `0x00`, below every term (``SegmentKeys/low``),
    /// rather than `0xFF` (``SegmentKeys/high``, the segments of builds before 2026-12-04): set
    /// with the first segment of a load, cleared with `segmented`. Builds that predate it refuse
    /// the index while it is set instead of reading segment blocks as terms.
    var lowSegments = false
    /// Whether the merge under way stopped inside a term (``SegmentMergeProgress/nextSegment``):
    /// builds that predate it refuse the index meanwhile instead of routing that term's writes
    /// by the term alone.
    var mergingInsideTerm = false

    /// Whether the index was made with the tokenizer's revision 2 (``TokenizerOptions/revision``:
    /// marks composed, format characters skipped): indexes created since 2026-12-06. Those made
    /// before keep revision 1 for every document, written or removed, and for their queries;
    /// builds that predate the flag refuse the index rather than remove terms it does not hold.
    var revisedText = false
    /// Whether the index was made with the tokenizer's revision 3 (compatibility forms read as
    /// NFKC reads them, kana and voiced sound marks composed): indexes created since 2026-12-07.
    /// Those made before keep their revision; builds that predate the flag refuse the index.
    var compatibleText = false
    /// Whether the index was made with the tokenizer's revision 4 (`ß` as `ss`, digits of every
    /// script as ASCII, Arabic hamza and madda folded, a run's last Han character a term of its
    /// own): indexes created since 2026-12-08. Those made before keep their revision; builds that
    /// predate the flag refuse the index.
    var foldedScripts = false

    /// The tokenizer rules of the index's documents and queries.
    var tokenizerOptions: TokenizerOptions {
        TokenizerOptions(revision: foldedScripts ? 4 : compatibleText ? 3 : revisedText ? 2 : 1)
    }

    /// How the segments' keys start.
    var segmentKeys: SegmentKeys { lowSegments ? .low : .high }

    /// The state of an index with nothing in it yet: its document entries keyed by the physical
    /// key (a load that appends its records in key order appends them too; keyed by hashes, they
    /// landed all over their tree, a page a record in each chunk's transaction), unless
    /// `hashedDocuments` (for tests of the layout that stores of 2026-12-02 to 12-04 have).
    init(newIndex definition: SearchDefinition, hashedDocuments: Bool = false) {
        lengthFields = min(16, Int(definition.fields.map(\.id).max() ?? 0) + 1)
        self.hashedDocuments = hashedDocuments
        checkedDocuments = true
        revisedText = true
        compatibleText = true
        foldedScripts = true
    }

    /// The state read from the stored entry, or that of a new index when there is none.
    static func stored<T: ReadableTransaction & ~Copyable>(_ dbs: SearchDatabases, _ txn: borrowing T) throws -> SearchState {
        try txn.withValue(forKey: SearchDatabases.stateKey, in: dbs.state) { try SearchState($0) }
            ?? SearchState(newIndex: dbs.definition)
    }

    init(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        nextNumber = UInt32(truncatingIfNeeded: try SearchVarint.read(bytes, &offset))
        documents = try SearchVarint.read(bytes, &offset)
        guard documents <= UInt64(UInt32.max) + 1 else { throw StoreError(.corrupted, "search index: \(documents) documents") }
        for f in 0..<16 { totals[f] = try SearchVarint.read(bytes, &offset) }
        if offset < bytes.count {
            let count = try SearchVarint.read(bytes, &offset)
            guard (1...16).contains(count) else { throw StoreError(.corrupted, "search index: \(count) field lengths a document") }
            lengthFields = Int(count)
        }
        if offset < bytes.count {
            let flags = try SearchVarint.read(bytes, &offset)
            guard flags <= 1023 else { throw StoreError(.corrupted, "search index: unknown state flags \(flags)") }
            hashedDocuments = flags & 1 == 1
            checkedDocuments = flags & 2 == 2
            segmented = flags & 4 == 4
            secondPostings = flags & 8 == 8
            merging = flags & 16 == 16
            lowSegments = flags & 32 == 32
            mergingInsideTerm = flags & 64 == 64
            revisedText = flags & 128 == 128
            compatibleText = flags & 256 == 256
            foldedScripts = flags & 512 == 512
        }
    }

    var bytes: [UInt8] {
        var out = [UInt8]()
        SearchVarint.append(UInt64(nextNumber), to: &out)
        SearchVarint.append(documents, to: &out)
        for t in totals { SearchVarint.append(t, to: &out) }
        if lengthFields != 16 || hashedDocuments || checkedDocuments || segmented || secondPostings || revisedText || compatibleText
            || foldedScripts
        {
            SearchVarint.append(UInt64(lengthFields), to: &out)
            let flags = (hashedDocuments ? 1 : 0) | (checkedDocuments ? 2 : 0) | (segmented ? 4 : 0) | (secondPostings ? 8 : 0)
                | (merging ? 16 : 0) | (lowSegments ? 32 : 0) | (mergingInsideTerm ? 64 : 0) | (revisedText ? 128 : 0)
                | (compatibleText ? 256 : 0) | (foldedScripts ? 512 : 0)
            SearchVarint.append(UInt64(flags), to: &out)
        }
        return out
    }

    /// The bytes of a `num` entry's check (after its lengths, before its key).
    var checkBytes: Int { checkedDocuments ? SearchDocumentCheck.byteCount : 0 }

    /// Skips the field lengths and the check at the start of a `num` entry; returns where its
    /// key starts.
    func keyOffset(inNumberEntry bytes: UnsafeRawBufferPointer) throws -> Int {
        var offset = 0
        for _ in 0..<lengthFields { _ = try SearchVarint.read(bytes, &offset) }
        guard bytes.count >= offset + checkBytes else { throw StoreError(.corrupted, "search index: short number entry") }
        return offset + checkBytes
    }

    func averageLengths(count: Int) -> [Double] {
        (0..<count).map { documents == 0 ? 0 : Double(totals[$0]) / Double(documents) }
    }
}

/// A tokenized document: its field lengths and, per distinct term, the term and its encoded
/// occurrences.
struct SearchDocument {
    var lengths = [UInt32](repeating: 0, count: 16)
    var terms: [[UInt8]] = []
    var values: [[UInt8]] = []
}

/// Tokenizes values into ``SearchDocument``s; one per write transaction or bulk chunk.
struct SearchAnalyzer {
    static let valueGap: UInt32 = 8
    private var tokenizer: Tokenizer
    private var buffer = TokenBuffer()
    private var table: TermTable
    private var encoded: [UInt8] = []

    /// An analyzer with the tokenizer rules `options` (the index's: ``SearchState/tokenizerOptions``).
    init(capacity: Int = 256, options: TokenizerOptions) {
        table = TermTable(capacity: capacity)
        tokenizer = Tokenizer(options: options)
    }

    /// Appends the distinct terms of `texts` and their groups to `document`, in byte order;
    /// returns the field lengths.
    @discardableResult
    mutating func analyze(_ texts: [SearchText], into document: inout SearchDocumentTerms) -> [UInt32] {
        let lengths = forEachTerm(texts) { term, groups in document.append(term: UnsafeRawBufferPointer(term), groups: groups) }
        document.sortByTerm()
        return lengths
    }

    mutating func analyze(_ texts: [SearchText]) -> SearchDocument {
        var document = SearchDocument()
        document.lengths = forEachTerm(texts) { term, groups in
            document.terms.append(Array(term))
            document.values.append(Array(groups))
        }
        return document
    }

    /// Tokenizes `texts` and calls `body` with each distinct term and its encoded occurrences
    /// (in reused buffers, valid during the call only); returns the field lengths.
    @discardableResult
    mutating func forEachTerm(_ texts: [SearchText], _ body: (UnsafeBufferPointer<UInt8>, UnsafeRawBufferPointer) -> Void)
        -> [UInt32]
    {
        buffer.removeAll()
        var next = [UInt32](repeating: 0, count: 16)
        var used = [Bool](repeating: false, count: 16)
        for piece in texts {
            let f = Int(piece.field & 15)
            let start = used[f] ? next[f] + Self.valueGap : 0
            next[f] = tokenizer.tokenize(piece.text, field: piece.field & 15, startingAt: start, into: &buffer)
            used[f] = true
        }
        var lengths = [UInt32](repeating: 0, count: 16)
        buffer.fieldLengths(into: &lengths)
        // Keep the table small: a long-lived table would grow with the vocabulary.
        if table.count > 1 << 16 { table = TermTable(capacity: 256) }
        var value = encoded
        buffer.forEachTerm(interning: &table) { _, term, occurrences in
            value.removeAll(keepingCapacity: true)
            SearchOccurrences.encode(occurrences, into: &value)
            value.withUnsafeBytes { body(term, $0) }
        }
        encoded = value
        return lengths
    }
}
