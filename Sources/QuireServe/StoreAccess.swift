import Foundation
import Quire
import Synchronization

// Every read of the store that QuireServe makes is in this file, through the store's public
// by-name inspection API (`Store.read` with `genericValue(_:inCollectionNamed:)`,
// `fields(_:of:inCollectionNamed:)`, `forEachGeneric`, `forEachIndexEntry`, `indexKeyCounts`,
// `indexKeyCount`, `indexHasEntry`, `definition(ofCollectionNamed:)`, `storeStatistics()`,
// `storedCollections()`), the way `quire dump` and `quire get` read.
// Nothing here reaches the LMDB layer, so the server keeps working when that API is sealed.

/// Why a read could not be answered.
enum AccessFailure: Error {
    /// The store cannot be read now (absent, being created, unreadable): 503.
    case unavailable(String)
    /// The request asks for something this store cannot do: 400.
    case unsupported(String)
}

/// One page of a list request.
struct ArticlePage {
    /// Each record as `quire dump` writes it (JSON, dump's field names).
    var records: [[UInt8]]
    /// Where the next page starts; nil on the last page.
    var next: PageCursor?
    /// A search stopped at ``ArticleQuery/maxSearchDepth`` hits while more matched.
    var truncated = false
}

/// What the change poller compares between two looks at the store.
struct CommitMark: Equatable, Sendable {
    var lastTransaction: Int
    var records: [String: Int]
}

/// The server's read-only view of a store, by collection name.
final class StoreAccess: Sendable {
    /// The collection the API serves.
    static let collection = "articles"

    private enum Source {
        case path(String)
        case shared(Store)
    }
    private let source: Source
    private let opened = Mutex<(store: Store?, lastAttempt: ContinuousClock.Instant?, reason: String)>(
        (nil, nil, "the store is not open yet"))
    /// The data file the store was opened from (device and inode), and when it was last compared
    /// with the one at the path: a cluster member that installs a peer's snapshot replaces the
    /// store's directory, and a server kept on the old one would serve it, unlinked, for ever.
    private let openedFile = Mutex<(identity: FileIdentity?, checked: ContinuousClock.Instant)>((nil, .now))
    /// How many times the store was opened: a replaced store may have the transaction ids the
    /// old one had, so answers cached for one are not the other's.
    private let openings = Atomic<Int>(0)
    /// Why the store is not read any more: LMDB found one of its pages damaged. It may follow
    /// another damaged page's bad pointer and end the whole process, so once a request has met
    /// such damage no other goes near it; a replaced data file (a restored backup) is read
    /// again. (A record or an index entry failing Quire's own checks is that request's 503 only.)
    private let damage = Mutex<String?>(nil)
    private let sectionCache = Mutex<(mark: Int, sections: [(name: String, count: Int)])?>(nil)

    /// Serves the store at `path`, opened read-only on first use (and again after a failure,
    /// at most every 250 ms), so the server can start before the store exists.
    init(path: String) { source = .path(path) }

    /// Serves a store the embedding program opened (and keeps open).
    init(store: Store) {
        source = .shared(store)
        opened.withLock { $0.store = store }
    }

    /// Closes the store if this object opened it.
    func close() {
        guard case .path = source else { return }
        let store = opened.withLock { state -> Store? in
            defer { state.store = nil }
            return state.store
        }
        store?.close()
    }

    /// The store, opening it when needed.
    private func store() throws(AccessFailure) -> Store {
        guard case .path(let path) = source else {
            if let reason = damage.withLock({ $0 }) { throw .unavailable(reason) }
            return opened.withLock { $0.store! }
        }
        if let stale = replacedStore(path) {
            stale.close()
            damage.withLock { $0 = nil }
        }
        // Not read again after a write in place (another process committing into the damaged
        // store would clear it): only a file renamed over it is another file.
        if let reason = damage.withLock({ $0 }) { throw .unavailable(reason) }
        return try opened.withLock { state throws(AccessFailure) -> Store in
            if let store = state.store { return store }
            let now = ContinuousClock.now
            if let last = state.lastAttempt, now - last < .milliseconds(250) {
                throw .unavailable(state.reason)
            }
            state.lastAttempt = now
            guard FileManager.default.fileExists(atPath: path + "/data.mdb") else {
                state.reason = "no store at \(Self.shownName(path)) yet"
                throw .unavailable(state.reason)
            }
            var options = StoreOptions()
            options.readOnly = true
            options.initialMapSize = 0  // adopt the size recorded in the file
            do {
                let identity = FileIdentity(path + "/data.mdb")
                let store = try Store(path: path, options: options)
                state.store = store
                openedFile.withLock { $0 = (identity, .now) }
                openings.add(1, ordering: .relaxed)
                return store
            } catch let error as StoreError where error.code == .alreadyOpen {
                // The data file was replaced: requests still reading the old one hold it open.
                state.reason = "the store at \(Self.shownName(path)) is being opened again (its data file was replaced); retry"
                throw .unavailable(state.reason)
            } catch {
                state.reason = Self.hidingPath("the store at \(path) cannot be opened: \(error)", path)
                throw .unavailable(state.reason)
            }
        }
    }

    /// The open store, taken out to be closed, when the data file at `path` is no longer the one
    /// it was opened from (compared at most every 250 ms); nil otherwise.
    private func replacedStore(_ path: String) -> Store? {
        let now = ContinuousClock.now
        let identity = openedFile.withLock { file -> FileIdentity?? in
            guard now - file.checked >= .milliseconds(250) else { return .none }
            file.checked = now
            return .some(file.identity)
        }
        guard case .some(let openedIdentity?) = identity, FileIdentity(path + "/data.mdb") != openedIdentity else { return nil }
        return opened.withLock { state -> Store? in
            defer { (state.store, state.lastAttempt) = (nil, nil) }
            return state.store
        }
    }

    /// Runs a read, turning storage failures into ``AccessFailure/unavailable(_:)``.
    private func reading<R>(_ body: (Store) throws -> R) throws(AccessFailure) -> R {
        let store = try store()
        // A data file cut short or overwritten in place while open would fault on the next page
        // read and end the server: refused until it is whole again.
        if let problem = store.dataFileProblem() {
            throw .unavailable(Self.hidingPath("the store cannot be read: \(problem)", store.path))
        }
        do {
            return try body(store)
        } catch let failure as AccessFailure {
            throw failure
        } catch {
            if (error as? StoreError)?.isDamagedPage == true {
                damage.withLock {
                    $0 = $0 ?? Self.hidingPath("the store is damaged (\(error)); it is not read again until its data file is replaced: run quire verify, and restore a backup (copied to another name in the store's directory, then renamed over data.mdb)", store.path)
                }
            }
            throw .unavailable(Self.hidingPath("the store cannot be read: \(error)", store.path))
        }
    }

    /// The store's last committed transaction id (it names the state every answer is made from).
    func lastTransaction() throws(AccessFailure) -> Int {
        try reading { try $0.lastTransactionID() }
    }

    /// The state answers are made from, for the response cache: the transaction a snapshot
    /// taken now sees, in this opening of the store (transaction ids below 2^40). Not the meta
    /// page's id, which a commit raises a moment before snapshots see it: an answer read then
    /// was cached under the new id and served stale until the next commit.
    func cacheMark() throws(AccessFailure) -> Int {
        let transaction = try reading { store in try store.read { snap in snap.transactionID } }
        return openings.load(ordering: .relaxed) << 40 | transaction
    }

    /// The record with identification key `id`, as dump's JSON (only `fields`, in their order,
    /// when given), or nil.
    func record(id: String, fields: [String]? = nil) throws(AccessFailure) -> [UInt8]? {
        try reading { store in
            do {
                return try store.read { snap in
                    guard let fields else { return try snap.jsonValue(.string(id), inCollectionNamed: Self.collection) }
                    guard let values = try snap.fields(fields, of: .string(id), inCollectionNamed: Self.collection) else {
                        return nil
                    }
                    return CompactValue.object(
                        zip(fields, values).compactMap { name, value in value.map { CompactValue.Field(key: name, value: $0) } }
                    ).jsonBytes()
                }
            } catch let error as StoreError where error.code == .unknownCollection {
                return nil  // a store with no articles yet
            }
        }
    }

    // MARK: Full-text search

    /// The filter fields of the articles' full-text index; nil when the articles have none.
    /// (Unavailable while the store is: a missing or replaced store is a 503, not "no index".)
    func searchFilters() throws(AccessFailure) -> Set<String>? {
        try reading { store in
            try store.storedCollections().first { $0.name == Self.collection }?.search.map { Set($0.filters.map(\.name)) }
        }
    }

    /// The articles matching a full-text query: one page of at most `limit` hits, ranked (or by
    /// date for `sort=newest|oldest`), filtered by `since`, `until` and `section`, after the
    /// cursor's offset; pages go as deep as ``ArticleQuery/maxSearchDepth`` hits.
    private func searchPage(_ query: ArticleQuery, _ text: String) throws(AccessFailure) -> ArticlePage {
        guard let filters = try searchFilters() else { throw .unsupported("this store has no search index") }
        let sort: SearchSort =
            switch query.sort {
            case .newest: .newest
            case .oldest: .oldest
            case .id: .relevance
            }
        // The section joins the query when the index has it as a filter (its index answers it);
        // an index without one is filtered on the records, from a few more hits.
        var sectionFilter: [String: String] = [:]
        var recordSection: String?
        if let section = query.section {
            if filters.contains("section") {
                sectionFilter["section"] = section
            } else {
                recordSection = section
            }
        }
        let offset = query.after?.searchOffset ?? 0
        let end = min(offset + query.limit, ArticleQuery.maxSearchDepth)
        // One hit past the page tells whether there is a next one.
        let wanted = recordSection == nil ? end + 1 : (end + 1) * 4
        defer { SearchMemory.returnFreed() }
        return try reading { store in
            do {
                return try store.read { snap in
                    let hits = try snap.search(
                        text, inCollectionNamed: Self.collection, limit: wanted, sort: sort, since: query.since,
                        until: query.untilExclusive.map { Date(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate.nextDown) },
                        filters: sectionFilter)
                    // Without a section, the first `offset` hits are the pages before; with one
                    // filtered on the records, the first `offset` records that pass it are.
                    var skip = recordSection == nil ? 0 : offset
                    var records: [[UInt8]] = []
                    var more = false
                    for hit in hits.dropFirst(recordSection == nil ? offset : 0) {
                        // One transaction writes the index and the records: a hit without its
                        // record is damage, not a hit to leave out silently.
                        guard let value = try Self.value(snap, hit.key, query) else {
                            throw StoreError.hitWithoutRecord(hit.key, collection: Self.collection)
                        }
                        if let section = recordSection, value["section"] != .string(section) { continue }
                        if skip > 0 {
                            skip -= 1
                            continue
                        }
                        if offset + records.count == end {
                            more = true
                            break
                        }
                        records.append(Self.json(value, fields: query.fields))
                    }
                    let next = more && end < ArticleQuery.maxSearchDepth
                        ? PageCursor(sort: query.sort, searchOffset: end, filters: query.filterTag) : nil
                    return ArticlePage(records: records, next: next, truncated: more && next == nil)
                }
            } catch let error as SearchError {
                throw AccessFailure.unsupported(error.message)
            }
        }
    }

    // MARK: Lists

    /// One page of articles: by publication date (newest or oldest first) or by id.
    func page(_ query: ArticleQuery) throws(AccessFailure) -> ArticlePage {
        if let text = query.text { return try searchPage(query, text) }
        return try reading { store in
            do {
                return try store.read { snap in try Self.page(snap, query) }
            } catch let error as StoreError where error.code == .unknownCollection {
                return ArticlePage(records: [], next: nil)  // a store with no articles yet
            }
        }
    }

    private static func page(_ snap: borrowing Snapshot, _ query: ArticleQuery) throws -> ArticlePage {
        var records: [[UInt8]] = []
        var bytes = 0
        var last: PageCursor?
        var more = false
        let filters = query.filterTag
        // The previous page's last record: its date's index key and its key (a long one comes in
        // its compact form, which keeps the cursor short). Records are compared by that form:
        // it is the store's order (a long key's hash orders it past byte 495).
        let resume = try query.after.map {
            DateEntry(indexKey: StoreKey(bytes: $0.indexKey ?? []), key: try snap.key(fromCompactForm: $0.key), compact: $0.key)
        }
        let resumesInIndex = query.after?.indexKey != nil
        // Collects up to `limit` matching records, then looks for one more to know whether a
        // next page exists.
        func take(_ indexKey: StoreKey?, _ key: StoreKey, _ json: () throws -> [UInt8]?) rethrows -> Bool {
            if records.count == query.limit {
                // One more match means a next page: only whether it passes the filter counts.
                if try json() != nil { more = true }
                return !more
            }
            guard let record = try json() else { return true }
            // A page of huge records ends early, its cursor where the next begins: whole pages
            // of 4 MB abstracts held for 16 slow readers took 2.7 GB.
            if !records.isEmpty && bytes + record.count > Self.largestPageBytes {
                more = true
                return false
            }
            records.append(record)
            bytes += record.count
            last = PageCursor(sort: query.sort, indexKey: indexKey?.bytes, key: snap.compactForm(of: key), filters: filters)
            return true
        }
        let definition = try snap.definition(ofCollectionNamed: collection)
        let sectionIndex = Self.sectionIndex(of: definition)
        func record(_ key: StoreKey) throws -> [UInt8]? { try Self.record(snap, key, query, sectionIndex: sectionIndex) }
        switch query.sort {
        case .id:
            func list(_ keys: [StoreKey]) throws {
                let after = resume?.compact
                let ordered = keys.map { (key: $0, compact: snap.compactForm(of: $0)) }
                    .sorted { $0.compact.lexicographicallyPrecedes($1.compact) }
                for (key, compact) in ordered where after.map({ $0.lexicographicallyPrecedes(compact) }) ?? true {
                    guard try take(nil, key, { try record(key) }) else { break }
                }
            }
            if let keys = try smallSectionKeys(snap, query, sectionIndex: sectionIndex) {
                try list(keys)
                break
            }
            // As by date below: a walk that reads past its budget gives way to the listing.
            let budget = try walkBudget(snap, query, sectionIndex: sectionIndex)
            var walked = 0
            func step(_ key: StoreKey) throws -> Bool {
                walked += 1
                return try walked <= budget && take(nil, key) { try record(key) }
            }
            if let resume {
                try snap.forEachKey(inCollectionNamed: collection, afterCompactForm: resume.compact, step)
            } else {
                try snap.forEachKey(inCollectionNamed: collection, step)
            }
            if walked > budget, let keys = try sectionKeys(snap, query, sectionIndex: sectionIndex, atMost: .max) {
                (records, bytes, last, more) = ([], 0, nil, false)
                try list(keys)
            }
        case .newest, .oldest:
            guard let index = definition.indexes.first(where: { $0.kind == .date }) else {
                throw AccessFailure.unsupported("the articles collection has no date index; use sort=id")
            }
            let reverse = query.sort == .newest
            var lower = query.since.map { StoreKeyRange.Bound.inclusive(.date($0)) }
            var upper = query.untilExclusive.map { StoreKeyRange.Bound.exclusive(.date($0)) }
            let after = resumesInIndex ? resume : nil
            func list(_ entries: [DateEntry]) throws {
                for entry in entries where entry.isAfter(after, reverse: reverse) {
                    guard try take(entry.indexKey, entry.key, { try record(entry.key) }) else { break }
                }
            }
            if let keys = try smallSectionKeys(snap, query, sectionIndex: sectionIndex),
                let entries = try sectionEntriesByDate(snap, query, keys: keys, dateIndex: index)
            {
                try list(entries)
                break
            }
            if let after {
                if reverse { upper = .inclusive(after.indexKey) } else { lower = .inclusive(after.indexKey) }
            }
            // A large section's records can all lie far from where the walk starts (an archive's
            // old articles, newest first): past a few times the section's size in records read,
            // the walk gives way to the section listed from its index, which costs that size.
            let budget = try walkBudget(snap, query, sectionIndex: sectionIndex)
            var walked = 0
            try snap.forEachIndexEntry(
                collection, index.name, range: StoreKeyRange(lower: lower, upper: upper), reverse: reverse
            ) { indexKey, key in
                walked += 1
                if walked > budget { return false }
                if let after, indexKey == after.indexKey {
                    // Duplicates of one date come in key order (descending in reverse): skip
                    // up to and including the last record of the previous page.
                    let compact = snap.compactForm(of: key)
                    let order = compact == after.compact ? 0 : compact.lexicographicallyPrecedes(after.compact) ? -1 : 1
                    if reverse ? order >= 0 : order <= 0 { return true }
                }
                return try take(indexKey, key) { try record(key) }
            }
            if walked > budget, let keys = try sectionKeys(snap, query, sectionIndex: sectionIndex, atMost: .max),
                let entries = try sectionEntriesByDate(snap, query, keys: keys, dateIndex: index)
            {
                (records, bytes, last, more) = ([], 0, nil, false)
                try list(entries)
            }
        }
        return ArticlePage(records: records, next: more ? last : nil)
    }

    /// A record's place in the date index: its date's index key, then its key, which orders
    /// duplicates of one date by its compact (stored) form.
    private struct DateEntry {
        var indexKey: StoreKey
        var key: StoreKey
        var compact: [UInt8]

        /// Whether `self` comes before `other` in the index (ascending).
        func precedes(_ other: DateEntry) -> Bool {
            indexKey == other.indexKey ? compact.lexicographicallyPrecedes(other.compact) : indexKey < other.indexKey
        }

        /// Whether it comes after `mark` (the previous page's last record) in the walk's order.
        func isAfter(_ mark: DateEntry?, reverse: Bool) -> Bool {
            guard let mark else { return true }
            return reverse ? precedes(mark) : mark.precedes(self)
        }
    }

    /// The keys of the records of the query's section, from the section index, when it has few:
    /// nil when it has too many, or the collection no section index (`sectionIndex` nil).
    ///
    /// Walked by date or by key, a section filter reads records until it has a page: a rare or
    /// absent section read the whole store for every page (5.5 s at 1M articles, for an empty
    /// answer). A section with few records is listed from its own: up to √((limit + 1) · records)
    /// of them, whose cost bounds the walk's for larger sections too, which finds a page in
    /// (limit + 1) · records / size reads on average.
    private static func smallSectionKeys(
        _ snap: borrowing Snapshot, _ query: ArticleQuery, sectionIndex: IndexDefinition?
    ) throws -> [StoreKey]? {
        let records = try snap.count(ofCollectionNamed: collection)
        let most = max(2_000, Int((Double(query.limit + 1) * Double(records)).squareRoot()))
        return try sectionKeys(snap, query, sectionIndex: sectionIndex, atMost: most)
    }

    /// The keys of the records of the query's section, from the section index: nil when it has
    /// more than `most`, or the collection no section index (`sectionIndex` nil).
    private static func sectionKeys(
        _ snap: borrowing Snapshot, _ query: ArticleQuery, sectionIndex: IndexDefinition?, atMost most: Int
    ) throws -> [StoreKey]? {
        guard let section = query.section, let sectionIndex else { return nil }
        var keys: [StoreKey] = []
        try snap.forEachIndexEntry(collection, sectionIndex.name, range: .exactly(.string(section))) { _, key in
            keys.append(key)
            return keys.count <= most
        }
        return keys.count <= most ? keys : nil
    }

    /// How many date index entries a section's walk reads before the section is listed from
    /// its index instead: four times the section's size, so that the walk costs at most a few
    /// times the listing; no bound without a section filter, or for a section too large to list
    /// in a request's memory.
    private static func walkBudget(
        _ snap: borrowing Snapshot, _ query: ArticleQuery, sectionIndex: IndexDefinition?
    ) throws -> Int {
        guard let section = query.section, let sectionIndex else { return .max }
        let size = try snap.indexKeyCount(collection, sectionIndex.name, indexKey: .string(section))
        return size <= largestListedSection ? 4 * size : .max
    }

    /// The most bytes of records a list's page holds, past its first record: a page of fewer
    /// than `limit` then ends with a `next` cursor.
    static let largestPageBytes = 8 << 20

    /// The most records of a section a request lists from the section index (its keys and
    /// dates in memory, tens of megabytes).
    static let largestListedSection = 250_000

    /// The records of `keys` (a section's, from the section index) in the date index's order
    /// (newest first when `sort` says so), within `since` and `until`, their dates read from
    /// the records; nil without a date field to read.
    private static func sectionEntriesByDate(
        _ snap: borrowing Snapshot, _ query: ArticleQuery, keys: [StoreKey], dateIndex: IndexDefinition
    ) throws -> [DateEntry]? {
        guard let dateField = dateIndex.field else { return nil }
        let lower = query.since.map { StoreKey.date($0).bytes }
        let upper = query.untilExclusive.map { StoreKey.date($0).bytes }
        var entries: [DateEntry] = []
        for key in keys {
            // Undated records are not in the date index, so not in its walk either.
            let value = try snap.field(dateField, of: key, inCollectionNamed: collection)
            guard case .date(let date)? = value else { continue }
            let indexKey = StoreKey.date(date)
            if let lower, indexKey.bytes.lexicographicallyPrecedes(lower) { continue }
            if let upper, !indexKey.bytes.lexicographicallyPrecedes(upper) { continue }
            entries.append(DateEntry(indexKey: indexKey, key: key, compact: snap.compactForm(of: key)))
        }
        entries.sort { a, b in query.sort == .newest ? b.precedes(a) : a.precedes(b) }
        return entries
    }

    /// The record's JSON for a page, or nil when the section filter leaves it out. Without a
    /// field list the JSON is written straight from the record's bytes (no value tree).
    private static func record(
        _ snap: borrowing Snapshot, _ key: StoreKey, _ query: ArticleQuery, sectionIndex: IndexDefinition?
    ) throws -> [UInt8]? {
        if let section = query.section, try !hasSection(snap, key, section, sectionIndex) { return nil }
        guard query.fields != nil else { return try snap.jsonValue(key, inCollectionNamed: collection) }
        return try value(snap, key, query).map { json($0, fields: query.fields) }
    }

    /// Whether the record is in `section`: looked up in the section index (one exact lookup,
    /// about a fifth of the time of reading the field from the compressed record), else read.
    private static func hasSection(
        _ snap: borrowing Snapshot, _ key: StoreKey, _ section: String, _ sectionIndex: IndexDefinition?
    ) throws -> Bool {
        guard let sectionIndex else {
            return try snap.field("section", of: key, inCollectionNamed: collection) == .string(section)
        }
        return try snap.indexHasEntry(collection, sectionIndex.name, indexKey: .string(section), key: key)
    }

    /// The collection's index of its records' `section` (exact string values), if it has one.
    private static func sectionIndex(of definition: CollectionDefinition) -> IndexDefinition? {
        definition.indexes.first { $0.field == "section" && $0.kind == .string }
    }

    /// The record, or with `fields` only those fields (and `section` for the filter), each read
    /// on its own from the record's bytes without decoding the rest.
    private static func value(_ snap: borrowing Snapshot, _ key: StoreKey, _ query: ArticleQuery) throws -> CompactValue? {
        guard let fields = query.fields else { return try snap.genericValue(key, inCollectionNamed: collection) }
        var names = fields
        if query.section != nil, !names.contains("section") { names.append("section") }
        // The index and the records are written in one transaction: the record is there. Its
        // fields are read in one pass (a compressed record decompressed once, not once a field).
        guard let values = try snap.fields(names, of: key, inCollectionNamed: collection) else { return nil }
        let present = zip(names, values).compactMap { name, value in value.map { CompactValue.Field(key: name, value: $0) } }
        return .object(present)
    }

    /// A record's JSON, limited to `fields` when given (in their order, absent ones left out).
    private static func json(_ value: CompactValue, fields: [String]?) -> [UInt8] {
        guard let fields, case .object(let all) = value else { return value.jsonBytes() }
        return CompactValue.object(fields.compactMap { name in all.first { $0.key == name } }).jsonBytes()
    }

    /// The sections and how many articles each has, most articles first (cached per commit).
    func sections() throws(AccessFailure) -> [(name: String, count: Int)] {
        let mark = try cacheMark()
        if let cached = sectionCache.withLock({ $0 }), cached.mark == mark { return cached.sections }
        let sections: [(name: String, count: Int)] = try reading { store in
            guard try store.storedCollections().contains(where: { $0.name == Self.collection }) else { return [] }
            return try store.read { snap in
                guard let index = Self.sectionIndex(of: try snap.definition(ofCollectionNamed: Self.collection)) else {
                    return []
                }
                let counts = try snap.indexKeyCounts(Self.collection, index.name).map { entry in
                    (name: entry.key.stringValue ?? entry.key.description, count: entry.count)
                }
                return counts.sorted { $0.count != $1.count ? $0.count > $1.count : $0.name < $1.name }
            }
        }
        sectionCache.withLock { $0 = (mark, sections) }
        return sections
    }

    /// The store's statistics as `quire stats --json` prints them, but for the path: the store
    /// directory's name, not where it lies (a server on a network address told anyone the
    /// server's directory layout).
    func statisticsJSON() throws(AccessFailure) -> [UInt8] {
        try reading { store in
            var statistics = try store.storeStatistics()
            statistics.path = Self.shownName(statistics.path)
            return try statistics.jsonBytes()
        }
    }

    /// The last component of a store path, as answers show it.
    static func shownName(_ path: String) -> String { URL(fileURLWithPath: path).lastPathComponent }

    /// `text` with the store's path shown by its name: errors of the store name its path, which
    /// an answer to any client that reaches the port does not disclose.
    static func hidingPath(_ text: String, _ path: String) -> String {
        guard !path.isEmpty else { return text }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        return text.replacingOccurrences(of: absolute, with: shownName(path)).replacingOccurrences(of: path, with: shownName(path))
    }

    /// The last committed transaction and each collection's record count: cheap enough to
    /// look at every 250 ms. Picks up collections another process created meanwhile.
    func commitMark() throws(AccessFailure) -> CommitMark {
        try reading { store in
            let stats = try store.storeStatistics()
            var records: [String: Int] = [:]
            for c in stats.collections { records[c.name] = c.records }
            if try store.storedCollections().count != stats.collections.count {
                try store.refreshCollections()
            }
            return CommitMark(lastTransaction: stats.lastTransactionID, records: records)
        }
    }

    /// Changes committed through this process's store (an embedding program that writes);
    /// nil when the server opened the store itself, read-only.
    func inProcessChanges() -> Quire.ChangeFeed? {
        guard case .shared(let store) = source else { return nil }
        return store.changes()
    }
}
