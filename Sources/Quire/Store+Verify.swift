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
    /// Checks the whole store in one snapshot: every record decodes; every index entry points to a
    /// record, and (for indexes over one field) every record has exactly its expected entries;
    /// every relation member exists; every long key's stored form matches the key `_longkeys`
    /// maps it to. Works without the Swift types.
    ///
    /// - Parameter progress: called with the number of records checked so far.
    public func verify(progress: ((Int) -> Void)? = nil) throws -> VerificationReport {
        let registered = registry.withLock { $0 }
        let relationDBs = relations.withLock { $0 }
        let relationTargets = try storedRelationTargets()
        return try read { snap in
            var report = VerificationReport()
            func problem(_ text: String) {
                if report.problems.count < 1000 { report.problems.append(text) }
            }
            for name in registered.keys.sorted() {
                let c = registered[name]!
                var expected = Array(repeating: 0, count: c.indexes.count)
                for entry in snap.entries(in: c.records) {
                    let (key, keySound) = try snap.verifiedLogicalKey(entry.key)
                    if !keySound { problem(Store.longKeyProblem(name, key)) }
                    report.records += 1
                    if report.records % 10_000 == 0 { progress?(report.records) }
                    let value: CompactValue
                    do {
                        value = try snap.genericValue(entry.value, options: c.decoder.options)
                    } catch {
                        problem("\(name): record \(key): does not decode: \(error)")
                        continue
                    }
                    for (i, index) in c.definition.indexes.enumerated() {
                        guard let field = index.field else { continue }
                        for indexKey in Store.indexKeys(of: value[field], kind: index.kind) {
                            expected[i] += 1
                            let stored = longKeys.physical(indexKey.bytes)
                            let found = snap.duplicates(of: stored, in: c.indexes[i]).contains {
                                $0.value.elementsEqual(entry.key)
                            }
                            if !found { problem("\(name): record \(key): missing from index '\(index.name)'") }
                        }
                    }
                }
                for (i, index) in c.definition.indexes.enumerated() {
                    var entries = 0
                    for entry in snap.entries(in: c.indexes[i]) {
                        entries += 1
                        let (indexKey, indexKeySound) = try snap.verifiedLogicalKey(entry.key)
                        if !indexKeySound { problem(Store.longKeyProblem("\(name): index '\(index.name)'", indexKey)) }
                        if try !snap.contains(entry.valueBytes, in: c.records) {
                            let key = try snap.logicalKey(entry.value)
                            problem("\(name): index '\(index.name)' points to missing record \(key)")
                        }
                    }
                    report.indexEntries += entries
                    if index.field != nil && entries != expected[i] {
                        problem("\(name): index '\(index.name)' has \(entries) entries, the records imply \(expected[i])")
                    }
                }
            }
            report.postings = try verifySearch(snap, registered, problem)  // Search/Store+SearchVerify.swift
            for name in relationDBs.keys.sorted() {
                let target = relationTargets[name].flatMap { registered[$0] }
                for entry in snap.entries(in: relationDBs[name]!) {
                    report.relationEntries += 1
                    let (owner, ownerSound) = try snap.verifiedLogicalKey(entry.key)
                    if !ownerSound { problem(Store.longKeyProblem("relation '\(name)'", owner)) }
                    let (member, memberSound) = try snap.verifiedLogicalKey(entry.value)
                    if !memberSound { problem(Store.longKeyProblem("relation '\(name)'", member)) }
                    if let target, try !snap.contains(entry.valueBytes, in: target.records) {
                        problem("relation '\(name)': member \(member) does not exist")
                    }
                }
            }
            progress?(report.records)
            return report
        }
    }

    static func longKeyProblem(_ place: String, _ key: StoreKey) -> String {
        "\(place): long key \(describe(key.bytes)) (\(key.bytes.count) bytes) does not match its stored form"
    }

    /// The index keys a field value implies, as `StoreIndex` computes them for one-field indexes.
    static func indexKeys(of value: CompactValue?, kind: IndexKind) -> [StoreKey] {
        guard let value else { return [] }
        switch (kind, value) {
        case (.string, .string(let s)): return [.string(s)]
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
