import Foundation
import QuireCodec
internal import QuireLMDB
import Synchronization

/// What `Store.verify()` found.
public struct VerificationReport: Sendable, Hashable {
    /// Records decoded.
    public var records = 0
    /// Index entries checked.
    public var indexEntries = 0
    /// Relation entries checked.
    public var relationEntries = 0
    /// Full-text postings checked.
    public var postings = 0
    /// Each problem found, in words (empty when the store is sound).
    public var problems: [String] = []

    /// True when nothing is wrong.
    public var isSound: Bool { problems.isEmpty }
}

extension Store {
    /// Checks the whole store in one snapshot: every record decodes and matches its checksum (any
    /// changed byte of a format 2 record is found); every index entry points to a
    /// record, and (for indexes over one field) every record has exactly its expected entries;
    /// every relation member exists; every long key's stored form matches the key `_longkeys`
    /// maps it to; every full-text index matches its records. Works without the Swift types.
    /// Records are decoded in batches on every core; problems are reported in key order.
    ///
    /// - Parameters:
    ///   - progress: called with the number of records checked so far.
    ///   - isCancelled: polled every 2,048 records and every 1,024 entries of the indexes, the
    ///     relations and the full-text index; true stops the walk with `StoreError(.cancelled)`.
    ///   - reading: when given, told which part of the store the walk reads, record by record
    ///     (`collection 'articles', records, after key …`), for a caller that must say where it
    ///     was if the process faults on a damaged page.
    /// - Throws: `StoreError(.corrupted)` naming the collection and key range being read when
    ///   LMDB meets a damaged page; `StoreError(.cancelled)` when `isCancelled` said so.
    public func verify(
        progress: ((Int) -> Void)? = nil, isCancelled: (() -> Bool)? = nil, reading: ((String) -> Void)? = nil
    ) throws(StoreError) -> VerificationReport {
        let registered = registry.withLock { $0 }
        let relationDBs = relations.withLock { $0 }
        // Where the walk is, for the error when LMDB meets a damaged page.
        var position = VerifyPosition()
        // First, before the walks read through them: page headers LMDB's reads never check, and
        // its writes and compacting copies trust (a damaged bound lost an intact record). Named
        // too when a walk then stops on the damage.
        var damagedPages: [String] = []
        var context: String { "while reading \(position.description)" + (damagedPages.first.map { "; \($0)" } ?? "") }
        do {
            position.part = "the pages' structure"
            damagedPages = try read { snap in try snap.lmdb.pageStructureProblems(limit: 20, isCancelled: isCancelled ?? { false }) }
            if isCancelled?() == true { throw CancellationError() }
            let relationTargets = try storedRelationTargets()
            var report = try verifyWalk(registered, relationDBs, relationTargets, progress, isCancelled, reading, &position)
            report.problems.insert(contentsOf: damagedPages, at: 0)
            return report
        } catch let error as StoreError where error.code == .corrupted {
            guard let lmdb = error.underlying as? LMDBError else { throw error }
            throw StoreError.corruption(lmdb, path: environment.path, context: context)
        } catch let error as LMDBError where error.isCorruption {
            throw StoreError.corruption(error, path: environment.path, context: context)
        } catch {
            throw StoreError.wrap(error, "\(environment.path): verify, while reading \(position.description)")
        }
    }

    /// The walk of ``verify(progress:)``; `at` follows which part of the store it reads.
    private func verifyWalk(
        _ registered: [String: RegisteredCollection], _ relationDBs: [String: Database],
        _ relationTargets: [String: String], _ progress: ((Int) -> Void)?, _ isCancelled: (() -> Bool)?,
        _ reading: ((String) -> Void)?, _ at: inout VerifyPosition
    ) throws -> VerificationReport {
        try read { snap in
            var report = VerificationReport()
            var poll = CancellationPoll(every: 1_024)  // the index and relation walks
            var walkedKeys: [String: WalkedRecordKeys] = [:]
            func problem(_ text: String) {
                if report.problems.count < 1000 { report.problems.append(text) }
            }
            for name in registered.keys.sorted() {
                let c = registered[name]!
                var expected = Array(repeating: 0, count: c.indexes.count)
                var missing = Array(repeating: 0, count: c.indexes.count)
                let checked = {
                    var options = c.decoder.options
                    options.verifyChecksums = true
                    return options
                }()
                at = VerifyPosition(part: "collection '\(name)', records")
                // Records are decoded in batches on every core (the map holds their bytes for as
                // long as this read lasts); keys, lookups and problems stay in key order here.
                var fields: FieldTable? = try? snap.withFieldRetry { $0 }
                // Text checksums for a full-text index that keeps checks (Search/SearchDocumentCheck.swift).
                let search = Self.checkedSearchText(snap, c)
                var walking = WalkedRecordKeys.Builder(capacity: try snap.count(of: c.records))
                // The next batch is decoded on every core while this thread checks the current
                // batch's keys and looks up its index entries: serial work about as long as the decoding.
                let (indexes, longKeys) = (c.definition.indexes, longKeys)
                var batches = EntryBatchPipeline<[WalkedRecord?]>(snap.entries(in: c.records), batchSize: Self.verifyBatch) {
                    batch in
                    guard let table = fields else { return nil }
                    let (keys, values) = (MappedRecords(records: batch.map(\.key)), MappedRecords(records: batch.map(\.value)))
                    return BackgroundWork {
                        Self.walkedRecords(keys.records, values.records, indexes, longKeys, search, table, checked)
                    }
                }
                // One cursor an index for all the walk's lookups, not one opened and closed for each.
                let indexCursors = try c.indexes.map { try snap.lmdb.cursor(in: $0) }
                while let (batch, decoded) = batches.next() {
                    var keys: [StoreKey] = []
                    keys.reserveCapacity(batch.count)
                    for entry in batch {
                        let (key, keySound) = try snap.verifiedLogicalKey(entry.key)
                        if !keySound { problem(Store.longKeyProblem(name, key)) }
                        keys.append(key)
                    }
                    at.lastKey = keys[0]
                    reading?(at.description)
                    if isCancelled?() == true { throw CancellationError() }
                    for (j, entry) in batch.enumerated() {
                        let key = keys[j]
                        at.lastKey = key
                        // Every 256th key: the description is formatted text, a twelfth of a whole
                        // verify when made for every record ("after key" stays true).
                        if report.records % 256 == 0 { reading?(at.description) }
                        report.records += 1
                        if report.records % 10_000 == 0 { progress?(report.records) }
                        var walked: WalkedRecord? = decoded.flatMap { $0[j] }
                        if walked == nil {
                            // Not decoded with the table in hand (a field added since, or damage):
                            // again through the snapshot, which retries with the stored table.
                            do {
                                let value = try snap.genericValue(entry.value, options: checked)
                                fields = try? snap.withFieldRetry { $0 }
                                walked = WalkedRecord(entry.key, value, c.definition.indexes, longKeys, search)
                            } catch {
                                problem("\(name): record \(key.clippedDescription): does not decode: \(error)")
                                walking.add(hash: WalkedRecordKeys.hash(entry.key), textChecksum: nil)
                                continue
                            }
                        }
                        walking.add(hash: walked!.keyHash, textChecksum: walked!.textChecksum)
                        for (i, index) in c.definition.indexes.enumerated() {
                            for (indexKey, stored) in walked!.indexKeys[i] {
                                expected[i] += 1
                                at.indexKey = indexKey
                                // One exact lookup (MDB_GET_BOTH), not a scan of the key's duplicates:
                                // a section index has a few keys with a million records each.
                                let found = try indexCursors[i].seek(exactly: stored, value: entry.key)
                                try snap.checkIntact()
                                at.indexKey = nil
                                if !found {
                                    missing[i] += 1
                                    problem("\(name): record \(key.clippedDescription): missing from index '\(index.name)'")
                                }
                            }
                        }
                    }
                }
                try snap.checkIntact()
                let seen = walking.sealed()
                walkedKeys[name] = seen
                for (i, index) in c.definition.indexes.enumerated() {
                    var entries = 0
                    at = VerifyPosition(part: "collection '\(name)', index '\(index.name)'")
                    for entry in snap.entries(in: c.indexes[i]) {
                        entries += 1
                        try poll.step(isCancelled)
                        let (indexKey, indexKeySound) = try snap.verifiedLogicalKey(entry.key)
                        if !indexKeySound { problem(Store.longKeyProblem("\(name): index '\(index.name)'", indexKey)) }
                        at.lastKey = indexKey
                        if entries % 256 == 1 { reading?(at.description) }
                        if !seen.contains(entry.value) {
                            let key = try snap.logicalKey(entry.value)
                            problem("\(name): index '\(index.name)' points to missing record \(key.clippedDescription)")
                        }
                    }
                    try snap.checkIntact()
                    report.indexEntries += entries
                    if index.field != nil && entries != expected[i] {
                        problem("\(name): index '\(index.name)' has \(entries) entries, the records imply \(expected[i])")
                    }
                    if index.field != nil && (entries != expected[i] || missing[i] > 0) {
                        at = VerifyPosition(part: "collection '\(name)', index '\(index.name)', its entries' records")
                        for text in try Self.strayIndexEntries(snap, c, i, checked, isCancelled) { problem(text) }
                    }
                }
            }
            report.postings = try verifySearch(snap, registered, walkedKeys, problem, &at, reading: reading, isCancelled: isCancelled)  // Search/Store+SearchVerify.swift
            for name in relationDBs.keys.sorted() {
                let target = relationTargets[name].flatMap { walkedKeys[$0] }
                at = VerifyPosition(part: "relation '\(name)'")
                for entry in snap.entries(in: relationDBs[name]!) {
                    at.lastKey = StoreKey(bytes: entry.keyBytes)
                    if report.relationEntries % 256 == 0 { reading?(at.description) }
                    try poll.step(isCancelled)
                    report.relationEntries += 1
                    let (owner, ownerSound) = try snap.verifiedLogicalKey(entry.key)
                    if !ownerSound { problem(Store.longKeyProblem("relation '\(name)'", owner)) }
                    let (member, memberSound) = try snap.verifiedLogicalKey(entry.value)
                    if !memberSound { problem(Store.longKeyProblem("relation '\(name)'", member)) }
                    if let target, !target.contains(entry.value) {
                        problem("relation '\(name)': member \(member.clippedDescription) does not exist")
                    }
                }
            }
            // The change feed: every commit readable, in order (watch and serve stop on one that is not).
            if let feed = changesDatabase {
                at = VerifyPosition(part: "the change feed")
                var previous: UInt64 = 0
                for entry in snap.entries(in: feed) {
                    try poll.step(isCancelled)
                    guard let number = ChangeFeedRecord.sequence(of: entry.key), number > previous,
                        ChangeFeedRecord.decode(entry.value) != nil
                    else {
                        problem("the change feed: the entry after commit \(previous) is unreadable")
                        continue
                    }
                    previous = number
                    at.lastKey = .int(Int64(clamping: number))
                }
            }
            // Page counts no file can hold (a damaged meta page or database record) throw here.
            at = VerifyPosition(part: "the databases' page counts")
            _ = try snap.lmdb.countedPages()
            try snap.checkIntact()
            progress?(report.records)
            return report
        }
    }

    /// Names the entries of a collection's index `i` that their record does not imply (a
    /// planted entry, or one left behind under an old value), at most `limit`. A lookup and a
    /// decode an entry, so `verify` runs it only when the index's counts are off: entries
    /// pointing to missing records, and records that do not decode, are reported by the walk.
    static func strayIndexEntries(
        _ snap: borrowing Snapshot, _ c: RegisteredCollection, _ i: Int, _ options: CompactDecoder.Options,
        _ isCancelled: (() -> Bool)?, limit: Int = 20
    ) throws -> [String] {
        let index = c.definition.indexes[i]
        var poll = CancellationPoll(every: 1_024)
        var stray: [String] = []
        for entry in snap.entries(in: c.indexes[i]) {
            try poll.step(isCancelled)
            let implied: [[UInt8]]?? = try snap.withValue(forKey: entry.value, in: c.records) { bytes in
                guard let value = try? snap.genericValue(bytes, options: options) else { return nil }
                return indexKeys(of: value, [index], snap.store.longKeys)[0].map(\.stored)
            }
            guard case let implied?? = implied, !implied.contains(where: { $0.elementsEqual(entry.key) }) else {
                continue
            }
            let (indexKey, record) = (try snap.logicalKey(entry.key), try snap.logicalKey(entry.value))
            let keys = try implied.map { stored in try stored.withUnsafeBytes { try snap.logicalKey($0).clippedDescription } }
            let implies = keys.isEmpty ? "no entry" : keys.joined(separator: ", ")
            stray.append(
                "\(c.definition.name): index '\(index.name)' has \(indexKey.clippedDescription) for record \(record.clippedDescription), which implies \(implies)")
            if stray.count == limit { break }
        }
        return stray
    }

    /// The index keys a record's fields imply, with their stored (physical) forms: one list a
    /// declared index (empty for indexes over no single field).
    typealias RecordIndexKeys = [[(key: StoreKey, stored: [UInt8])]]

    static func indexKeys(of value: CompactValue, _ indexes: [IndexDefinition], _ longKeys: LongKeys) -> RecordIndexKeys {
        indexes.map { index in
            guard let field = index.field else { return [] }
            return indexKeys(of: value[field], kind: index.kind).map { ($0, longKeys.physical($0.bytes)) }
        }
    }

    /// What the record walk learns of a decoded record: the index keys it implies, its key's
    /// hash and, when `search` is given, its text's checksum for the full-text check.
    struct WalkedRecord {
        var indexKeys: RecordIndexKeys
        var keyHash: UInt64
        var textChecksum: UInt32?

        init(
            _ key: UnsafeRawBufferPointer, _ value: CompactValue, _ indexes: [IndexDefinition], _ longKeys: LongKeys,
            _ search: SearchTextPaths?
        ) {
            indexKeys = Store.indexKeys(of: value, indexes, longKeys)
            keyHash = WalkedRecordKeys.hash(key)
            textChecksum = search?.textChecksum(of: value)
        }
    }

    /// Each record (physical key and bytes) decoded (checked with `options`) with `fields`, as
    /// ``WalkedRecord``, on `Parallelism.parts` threads; nil for a record that does not decode
    /// with that table.
    static func walkedRecords(
        _ keys: [UnsafeRawBufferPointer], _ records: [UnsafeRawBufferPointer], _ indexes: [IndexDefinition],
        _ longKeys: LongKeys, _ search: SearchTextPaths?, _ fields: FieldTable, _ options: CompactDecoder.Options
    ) -> [WalkedRecord?] {
        let (keys, records) = (MappedRecords(records: keys), MappedRecords(records: records))
        return Parallelism.inParts(count: records.records.count) { range in
            range.map { i -> WalkedRecord? in
                guard let value = try? CompactValue.decode(from: records.records[i], fields: fields, options: options) else {
                    return nil
                }
                return WalkedRecord(keys.records[i], value, indexes, longKeys, search)
            }
        }.flatMap { $0 }
    }

    static func longKeyProblem(_ place: String, _ key: StoreKey) -> String {
        "\(place): long key \(describe(key.bytes)) (\(key.bytes.count) bytes) does not match its stored form"
    }

    /// The index keys a field value implies, as `StoreIndex` computes them for one-field indexes.
    static func indexKeys(of value: CompactValue?, kind: IndexKind) -> [StoreKey] {
        guard let value else { return [] }
        switch (kind, value) {
        case (.string, .string(let s)): return s.isEmpty ? [] : [.string(s)]  // as `String.indexKeys`
        case (.int, .int(let i)): return [.int(i)]
        case (.int, .uint(let u)): return u <= UInt64(Int64.max) ? [.int(Int64(u))] : []
        case (.date, .date(let d)): return [.date(d)]
        case (_, .array(let items)): return items.flatMap { indexKeys(of: $0, kind: kind) }
        default: return []
        }
    }

    /// Relation name → member collection, from the stored metadata.
    func storedRelationTargets() throws -> [String: String] {
        try environment.read { txn in
            var out: [String: String] = [:]
            for entry in txn.entries(in: metaDB, range: .prefix(Array("relation:".utf8))) {
                if let object = try? JSONSerialization.jsonObject(with: Data(entry.value)) as? [String: String],
                    let name = object["name"], let members = object["members"]
                {
                    out[name] = members
                }
            }
            return out
        }
    }
}

/// Which part of the store `verify` reads, described only when LMDB fails there.
struct VerifyPosition {
    var part = "the metadata"
    /// The last key read in `part`.
    var lastKey: StoreKey?
    /// The index entry being looked up for the record at `lastKey`.
    var indexKey: StoreKey?
    /// False for parts whose keys are not followed (the full-text index's binary keys).
    var followsKeys = true

    var description: String {
        guard followsKeys else { return part }
        var text = part + (lastKey.map { ", after key \($0)" } ?? ", from the first key")
        if let indexKey { text += ", looking up index key \(indexKey)" }
        return text
    }
}
