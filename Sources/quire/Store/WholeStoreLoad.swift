import Foundation
import Quire
import QuireFetch
import QuireNews

/// `quire load` of a whole-store dump (`quire dump --all`): each section's records go into the
/// collection or relation its header names, in transactions of up to 1,000; the `articles`
/// section, last in the dump, goes through the fast `ArticleLoader`.
enum WholeStoreLoad {
    /// Records of one section, decoded and waiting for their transaction.
    private protocol Section: AnyObject {
        var pending: Int { get }
        func add(_ line: [UInt8], number: Int) throws
        /// Writes the pending records; returns how many, and how many of them have an id this
        /// section had not seen (an id read twice is one record, as for articles).
        func commit(_ store: Store) async throws -> (lines: Int, distinct: Int)
    }

    private final class CollectionSection<V: Codable & Sendable>: Section {
        let collection: StoreCollection<V>
        var values: [V] = []
        let decoder: JSONDecoder
        /// The ids written so far (these collections are small beside the articles).
        private var seen: Set<[UInt8]> = []

        init(_ collection: StoreCollection<V>) {
            self.collection = collection
            decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .custom { decoder in
                let text = try decoder.singleValueContainer().decode(String.self)
                guard let date = NewsDate.parse(text) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a date: \(text)"))
                }
                return date
            }
        }

        var pending: Int { values.count }
        func add(_ line: [UInt8], number: Int) throws {
            let parsed = try WholeStoreLoad.parsed(line)
            try Self.refuseNonWholeNumbers(parsed)
            let value = try decoder.decode(V.self, from: Data(parsed.jsonBytes))
            guard !collection.key(value).bytes.isEmpty else { throw LineProblem("the id is empty") }
            if case .object(let given) = parsed { try Self.refuseUnknownFields(given, of: value) }
            values.append(value)
        }

        /// None of these records has a field that takes a fraction: `JSONDecoder` rounded
        /// `1300.9999999999999999` to 1301 (another record's id) and took `1e3` as 1000. A
        /// number with a fraction or an exponent, or beyond 64 bits, is refused at its field, as
        /// for articles.
        private static func refuseNonWholeNumbers(_ value: JSONValue) throws {
            func check(_ value: JSONValue, _ path: String) throws {
                switch value {
                case .double:
                    // Not the value as read back (1300.9999999999999999 reads as 1301.0).
                    let field = path.isEmpty ? "" : WholeStoreLoad.excerpt(path) + ": "
                    throw LineProblem(
                        "\(field)expected a whole number written without a fraction or an exponent, found a number with one (or beyond 64 bits)")
                case .array(let items):
                    for (i, item) in items.enumerated() { try check(item, path + "[\(i)]") }
                case .object(let object):
                    for (key, member) in object.members.sorted(by: { $0.key < $1.key }) {
                        try check(member, path.isEmpty ? key : path + "." + key)
                    }
                default: break
                }
            }
            try check(value, "")
        }

        /// A field the record's type does not have would be dropped without a word (a typo, a
        /// dump of another collection): an error, as for articles. Fields that are null are
        /// left out of what the type encodes, and are not unknown.
        private static func refuseUnknownFields(_ given: JSONObject, of value: V) throws {
            let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any] ?? [:]
            let unknown = given.members.filter { encoded[$0.key] == nil && $0.value != .null }.keys.sorted()
            if let first = unknown.first {
                throw LineProblem("\(excerpt(first)): unknown field, not a record of this collection (a dump of another one?)")
            }
        }

        func commit(_ store: Store) async throws -> (lines: Int, distinct: Int) {
            let (batch, collection) = (values, self.collection)
            values.removeAll(keepingCapacity: true)
            guard !batch.isEmpty else { return (0, 0) }
            try await store.write { txn in for value in batch { try txn.put(value, in: collection) } }
            let distinct = batch.reduce(0) { $0 + (seen.insert(collection.key($1).bytes).inserted ? 1 : 0) }
            return (batch.count, distinct)
        }
    }

    /// A relation's entries go to the spool, written once the articles are loaded.
    private final class RelationSection: Section {
        struct Entry: Codable, Sendable {
            var owner: String
            var member: String
        }
        let index: Int
        let spool: RelationSpool

        init(index: Int, spool: RelationSpool) {
            self.index = index
            self.spool = spool
        }

        var pending: Int { 0 }
        func add(_ line: [UInt8], number: Int) throws {
            let parsed = try WholeStoreLoad.parsed(line)
            if case .object(let given) = parsed, let unknown = given.members.keys.sorted().first(where: { !["owner", "member"].contains($0) }) {
                throw LineProblem("\(excerpt(unknown)): unknown field, not a relation entry (an owner and a member)")
            }
            let entry = try JSONDecoder().decode(Entry.self, from: Data(parsed.jsonBytes))
            // Said at its line, not when the relations are written after every record.
            if entry.owner.isEmpty { throw LineProblem("owner: empty (a relation entry needs an owner id)") }
            if entry.member.isEmpty { throw LineProblem("member: empty (a relation entry needs a member id)") }
            try spool.append(.init(section: index, line: number, owner: entry.owner, member: entry.member))
        }
        func commit(_ store: Store) async throws -> (lines: Int, distinct: Int) { (0, 0) }
    }

    /// The relations a dump can hold, in the spool's numbering.
    private static let relations = [NewsSchema.listArticles, NewsSchema.queryArticles]

    private struct Header: Decodable {
        var kind: String
        var name: String
        enum CodingKeys: String, CodingKey {
            case kind = "@quire", name
        }
    }

    /// Whether the input is a whole-store dump (its first line is a section header, blank lines
    /// before it skipped as everywhere else in a dump: it was read as articles).
    static func isWholeStoreDump(_ reader: LineBlockReader) throws(LoadError) -> Bool {
        let prefix = Array(WholeStoreDump.headerPrefix.utf8)
        return try reader.peekPastBlankSpace(prefix.count) == prefix
    }

    /// The section for `header`, its collection registered: only the collections the dump
    /// names, so the copy's own `dump --all` has the same sections (the news collections are
    /// registered by every writing command).
    private static func section(_ header: Header, _ store: Store, _ spool: () throws -> RelationSpool) throws
        -> (any Section)?
    {
        func registered<V>(_ collection: StoreCollection<V>) throws -> CollectionSection<V> {
            try store.register(collection)
            return CollectionSection(collection)
        }
        switch (header.kind, header.name) {
        case ("collection", DemoMarker.collection.name): return try registered(DemoMarker.collection)
        case ("collection", NewsSchema.lists.name): return CollectionSection(NewsSchema.lists)
        case ("collection", NewsSchema.categories.name): return CollectionSection(NewsSchema.categories)
        case ("collection", StoreFetchSink.sources.name): return try registered(StoreFetchSink.sources)
        case ("collection", StoreFetchSink.tags.name): return try registered(StoreFetchSink.tags)
        case ("collection", StoreFetchSink.rawDocuments.name): return try registered(StoreFetchSink.rawDocuments)
        case ("collection", StoreFetchSink.rejects.name): return try registered(StoreFetchSink.rejects)
        case ("collection", StoreFetchSink.budgets.name): return try registered(StoreFetchSink.budgets)
        case ("relation", _):
            guard let index = relations.firstIndex(where: { $0.name == header.name }) else { return nil }
            return RelationSection(index: index, spool: try spool())
        default: return nil
        }
    }

    /// The collections `load --collection` takes: those `dump --collection` writes.
    static let loadableCollections = [
        NewsSchema.articles.name, NewsSchema.lists.name, NewsSchema.categories.name, StoreFetchSink.sources.name,
        StoreFetchSink.tags.name, StoreFetchSink.rawDocuments.name, StoreFetchSink.rejects.name,
        StoreFetchSink.budgets.name,
    ]

    /// Loads a plain dump of one collection other than the articles (`dump --collection NAME`,
    /// JSON Lines or the array of `--format json`), a transaction a thousand records; returns
    /// the records written (an id read twice counted once) and those read.
    static func runCollection(
        _ name: String, _ reader: LineBlockReader, into store: Store, progress: ProgressReporter
    ) async throws -> (written: Int, read: Int) {
        guard let section = try section(Header(kind: "collection", name: name), store, { throw LineProblem("no relation") }) else {
            throw LoadError(.input, "this quire cannot load the collection '\(name)'", line: nil)
        }
        var total = 0
        var distinct = 0
        // The articles' loader's grammar: JSON Lines, or `--format json`'s array with a record
        // a line, each but the last ending in a comma.
        var (layout, open, closed, edge): (ArticleLoader.Layout?, Bool, Bool, ArticleLoader.LineEdge?) = (nil, false, false, nil)
        var lastLine = 0
        func flush() async throws {
            let written = try await section.commit(store)
            total += written.lines
            distinct += written.distinct
            progress.advance(by: written.lines)
        }
        /// Stops the load at `line`, the records before it committed.
        func stop(_ message: String, line: Int) async throws -> Never {
            try await flush()
            throw LoadError(.input, message, line: line, recordsBefore: distinct)
        }
        while true {
            let number = reader.nextLineNumber
            guard let line = try await nextLine(reader, flush: flush, committed: { distinct }) else { break }
            guard let content = line.withUnsafeBufferPointer({ ArticleLoader.lineContent($0, $0.indices) }) else { continue }
            lastLine = number
            // `lineContent` found something on the line: it has a first byte that is not a space.
            let shape = layout ?? ArticleLoader.Layout(firstByte: line.first { ![32, 9, 13].contains($0) }!)
            layout = shape
            if let problem = ArticleLoader.structureProblem(content, shape, open: open, closed: closed, after: edge) {
                try await stop(problem, line: number)
            }
            edge = content.edge
            switch content.kind {
            case .open: open = true
            case .close: closed = true
            case .empty: (open, closed) = (true, true)
            case .record(let range):
                if line[range].starts(with: WholeStoreDump.headerPrefix.utf8) {
                    try await stop("a whole-store dump (dump --all) loads without --collection", line: number)
                }
                try await add(line[range], line: number, to: section, committed: { distinct }, flush: flush)
            }
        }
        if layout == .array && !closed {
            try await stop("the input ends after line \(lastLine), inside the JSON array: its closing ']' is missing (a cut file?)", line: lastLine)
        }
        try await flush()
        return (distinct, total)
    }

    /// The reader's next line. An interrupt (or a line too long) while it read commits the
    /// records read before it, as a line that cannot be stored does, and says what this load
    /// committed, as the load's summary does.
    private static func nextLine(
        _ reader: LineBlockReader, flush: () async throws -> Void, committed: () -> Int
    ) async throws -> [UInt8]? {
        do {
            return try reader.nextLine()
        } catch {
            try await flush()
            var counted = error
            counted.recordsBefore = committed()
            throw counted
        }
    }

    /// Adds a record line to `section`, committing what the section holds every thousand records,
    /// at an interrupt, and before a line that cannot be stored (every record before it is
    /// committed, as for articles), which stops the load at its line.
    private static func add(
        _ text: ArraySlice<UInt8>, line number: Int, to section: any Section, committed: () -> Int,
        flush: () async throws -> Void
    ) async throws {
        do {
            try section.add(Array(text), number: number)
        } catch {
            try await flush()
            throw LoadError(.record, describe(error), line: number, recordsBefore: committed())
        }
        if section.pending >= 1_000 { try await flush() }
        if InterruptFlag.isRaised {
            try await flush()
            // As the articles' loader says it: `--json` then answers with the count.
            throw LoadError(.interrupted, "interrupted", recordsBefore: committed())
        }
    }

    /// Loads the dump; returns the records and relation entries written (the articles' ids
    /// read twice counted once), and those read. The relations are written last, once the
    /// articles they name are stored, so a load that stops part way leaves none that names a
    /// missing article.
    static func run(
        _ reader: LineBlockReader, into store: Store, loader: ArticleLoader, progress: ProgressReporter
    ) async throws -> (written: Int, read: Int) {
        var total = 0
        var distinct = 0
        var current: (any Section)?
        var spool: RelationSpool?
        func openSpool() throws -> RelationSpool {
            if let spool { return spool }
            // In the store's own directory, as the sort's spill files: the one a load can write to.
            let opened = try RelationSpool(directory: store.path)
            spool = opened
            return opened
        }
        func flush() async throws {
            guard let section = current else { return }
            let written = try await section.commit(store)
            total += written.lines
            distinct += written.distinct
            progress.advance(by: written.lines)
        }
        while true {
            let number = reader.nextLineNumber
            guard let line = try await nextLine(reader, flush: flush, committed: { distinct }) else { break }
            let text = line.drop { $0 == 32 || $0 == 9 }
            if text.isEmpty { continue }
            if text.starts(with: WholeStoreDump.headerPrefix.utf8) {
                try await flush()
                guard let header = try? JSONDecoder().decode(Header.self, from: Data(text)) else {
                    throw LoadError(.input, "not a section header", line: number, recordsBefore: distinct)
                }
                if header.kind == "collection" && header.name == NewsSchema.articles.name {
                    var loader = loader
                    let before = total
                    loader.progress = { [progress] load in progress.show(load, after: before) }
                    let report: ArticleLoader.Report
                    do {
                        report = try await loader.run(from: reader, into: store)
                    } catch {
                        var counted = error
                        counted.recordsBefore += distinct
                        if error.kind == .record, error.field == "@quire" {
                            // Not an article with a strange field: a second dump run on after the first.
                            counted.message = "a section header after the articles section, which ends a whole-store dump (load concatenated dumps one at a time)"
                            counted.field = nil
                        }
                        // A bad article line: every entry of the relations (all on lines before it)
                        // whose article is loaded is written too, as the records before it are.
                        if [.record, .input].contains(error.kind), let spool {
                            let relations = try await writeRelations(spool, store, loadedBefore: counted.recordsBefore, progress, skippingMissing: true)
                            counted.recordsBefore += relations.written
                            if relations.skipped > 0 {
                                counted.message += "; \(relations.skipped) relation entr\(relations.skipped == 1 ? "y names an article" : "ies name articles") not loaded, and \(relations.skipped == 1 ? "is" : "are") left out"
                            }
                        }
                        throw counted
                    }
                    if spool != nil { progress.beginStage("writing relations", completed: total + report.records, total: nil) }
                    let relations = try await writeRelations(spool, store, loadedBefore: distinct + report.distinctRecords, progress)
                    return (distinct + report.distinctRecords + relations.distinct, total + report.records + relations.written)
                }
                guard let next = try section(header, store, openSpool) else {
                    let what =
                        ["collection", "relation"].contains(header.kind)
                        ? "this quire cannot load the \(header.kind) '\(header.name)'"
                        : "unknown section kind '\(header.kind)' (a collection or a relation)"
                    throw LoadError(.input, what, line: number, recordsBefore: distinct)
                }
                current = next
                continue
            }
            guard let section = current else {
                throw LoadError(.input, "a record before any section header", line: number)
            }
            try await add(text, line: number, to: section, committed: { distinct }, flush: flush)
        }
        try await flush()
        let relations = try await writeRelations(spool, store, loadedBefore: distinct, progress)
        return (distinct + relations.distinct, total + relations.written)
    }

    /// Writes the spooled relation entries, a transaction a thousand. An entry whose article
    /// the store does not hold stops the load at its line, the entries before it written (the
    /// records are all loaded by then); `skippingMissing` leaves such entries out instead, for a
    /// load that stopped at a bad article. Returns the entries written and those left out.
    private static func writeRelations(
        _ spool: RelationSpool?, _ store: Store, loadedBefore: Int, _ progress: ProgressReporter,
        skippingMissing: Bool = false
    ) async throws -> (written: Int, skipped: Int, distinct: Int) {
        guard let spool else { return (0, 0, 0) }
        var (written, skipped) = (0, 0)
        // Each distinct entry's hash, to count an entry read twice once (8 bytes an entry).
        var seen: Set<Int> = []
        while true {
            let batch = try spool.next(upTo: 1_000)
            if batch.isEmpty { return (written, skipped, seen.count) }
            let before = loadedBefore + written
            let (added, left, dangling) = try await store.write { txn -> (Int, Int, LoadError?) in
                var (added, left) = (0, 0)
                for entry in batch {
                    let relation = relations[entry.section]
                    let member = StoreKey.string(entry.member)
                    if relation.memberCollection == NewsSchema.articles.name, try !txn.contains(member, in: NewsSchema.articles) {
                        if skippingMissing {
                            left += 1
                            continue
                        }
                        let error = LoadError(
                            .record,
                            "relation '\(relation.name)' names article '\(entry.member)', which the store does not hold (relations are written once every record is loaded)",
                            line: entry.line, recordsBefore: before + added)
                        return (added, left, error)
                    }
                    try txn.addMembers([member], to: .string(entry.owner), in: relation)
                    added += 1
                }
                return (added, left, nil)
            }
            written += added
            skipped += left
            // The entries added are the batch's first ones when none is skipped (the count is
            // not needed when some are: that load stops).
            for entry in batch.prefix(skippingMissing ? 0 : added) {
                var hasher = Hasher()
                hasher.combine(entry.section)
                hasher.combine(Array(entry.owner.utf8))
                hasher.combine(Array(entry.member.utf8))
                seen.insert(hasher.finalize())
            }
            progress.advance(by: added)
            if let dangling { throw dangling }
            if InterruptFlag.isRaised { throw LoadError(.interrupted, "interrupted", recordsBefore: loadedBefore + written) }
        }
    }

    /// The line parsed as strictly as an article's (RFC 8259), to be decoded from its value:
    /// `JSONDecoder` alone took a trailing comma and skipped the text of members it does not
    /// read (a lone surrogate, invalid UTF-8), which turned the checks made on the parsed value
    /// off, and kept the first of a repeated member where articles keep the last.
    private static func parsed(_ line: [UInt8]) throws -> JSONValue {
        do {
            return try JSONParser.parse(line)
        } catch {
            throw LineProblem(ArticleLoader.message(error))
        }
    }

    /// Why a line that decodes cannot be stored.
    private struct LineProblem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A name or value of megabytes, cut (it made a line of megabytes of the error).
    private static func excerpt(_ text: String) -> String { NewsMappingError.excerpt(text) }

    /// A decoding error of one line, naming the field.
    static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            // An array position's key has an int value and no name of its own ("Index 2"); a
            // model's int-backed coding keys have both, and are named by their name.
            context.codingPath.map { key in
                guard let index = key.intValue, ["Index \(index)", "\(index)"].contains(key.stringValue) else {
                    return ".\(key.stringValue)"
                }
                return "[\(index)]"
            }.joined().trimmingPrefix(".").description
        }
        func at(_ context: DecodingError.Context) -> String {
            let field = path(context)
            return field.isEmpty ? "" : field + ": "
        }
        switch decoding {
        case .dataCorrupted(let c): return c.codingPath.isEmpty ? "not valid JSON" : "\(excerpt(path(c))): \(excerpt(c.debugDescription))"
        case .keyNotFound(let key, let c):
            let prefix = path(c)
            return "missing field '\(prefix.isEmpty ? key.stringValue : prefix + "." + key.stringValue)'"
        case .typeMismatch(let type, let c): return "\(at(c))expected \(jsonName(of: type))"
        case .valueNotFound(let type, let c): return "\(at(c))expected \(jsonName(of: type)), found null"
        @unknown default: return "\(error)"
        }
    }

    /// What a Swift type is called in JSON (`an object` for a dictionary), for error messages.
    static func jsonName(of type: Any.Type) -> String {
        let name = String(describing: type)
        if name.hasPrefix("Dictionary<") { return "an object" }
        if name.hasPrefix("Array<") { return "an array" }
        switch name {
        case "String": return "a string"
        case "Bool": return "true or false"
        case "Int", "Int64", "Int32", "UInt", "UInt64", "UInt32", "Double", "Float": return "a number"
        default: return "a \(name)"
        }
    }
}
