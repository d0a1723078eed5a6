import Foundation
import Testing
@testable import Quire
import QuireLMDB  // white-box: reaches under the store on purpose

/// A small record whose id and tag may be of any length.
private struct Doc: Codable, Sendable, Hashable {
    var id: String
    var tag: String
    var n: Int
}

private let docs = StoreCollection<Doc>(
    name: "docs", key: { .string($0.id) },
    indexes: [StoreIndex(name: "tag", kind: .string, field: "tag") { [.string($0.tag)] }])
private let related = StoreRelation(name: "related", memberCollection: "docs")

/// Keys over the LMDB limit of every kind: 600 and 5,000 bytes, multi-byte UTF-8 cut by the
/// 495-byte prefix in the middle of a character, and two that share their first 495 bytes.
private let shared = String(repeating: "s", count: 495)
/// A key of more than 510 bytes that begins with `shared` then `-name`.
private func twin(_ name: String) -> String { shared + "-" + name + String(repeating: ".", count: 20) }
private let longIDs: [String] = [
    String(repeating: "a", count: 600),
    String(repeating: "b", count: 5_000),
    String(repeating: "é", count: 300),  // 600 bytes; byte 495 is inside a character
    "c" + String(repeating: "€🗞", count: 120),  // 3- and 4-byte characters, 841 bytes
    twin("first"),
    twin("second"),
    String(repeating: "e", count: 510),  // the longest literal key
    String(repeating: "f", count: 511),  // the shortest hashed one: as long as its stored form
]

/// The range of one key, as an exact index lookup uses.
private func exactly(_ text: String) -> StoreKeyRange { .exactly(.string(text)) }

private func openDocs(_ path: String, _ configure: (inout StoreOptions) -> Void = { _ in }) throws -> Store {
    var options = StoreOptions()
    configure(&options)
    let store = try Store(path: path, options: options)
    try store.register(docs)
    try store.register(related)
    return store
}

private func sampleDocs() -> [Doc] {
    // Short neighbours around the long keys, so walks interleave both kinds.
    let long = longIDs.enumerated().map { Doc(id: $0.element, tag: "long-\($0.offset)", n: $0.offset) }
    let short = ["a", "b", "c", "s", "z"].enumerated().map { Doc(id: $0.element, tag: "short", n: 100 + $0.offset) }
    return long + short
}

@Suite struct LongKeyTests {
    /// A damaged index entry can name a "key" of megabytes: diagnostics show its first 120
    /// bytes and its size (verify wrote 16 MB of hex in one line, taking seconds to format it).
    @Test func diagnosticsClipAKeyToItsHead() {
        let binary = StoreKey(bytes: [UInt8](repeating: 0xFE, count: 8_000_000))
        #expect(binary.clippedDescription == String(repeating: "fe", count: 120) + "… (8000000 bytes)")
        let text = StoreKey.string(String(repeating: "é", count: 100))
        #expect(text.clippedDescription == String(repeating: "é", count: 60) + "… (200 bytes)")
        #expect(StoreKey.string("short").clippedDescription == "short")
    }

    @Test func hashMatchesMurmurHash3Vectors() {
        // Reference digests of MurmurHash3_x64_128, seed 0, as the bytes of h1 then h2 (little-endian).
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(KeyHash.murmur3x64_128([])) == "00000000000000000000000000000000")
        #expect(hex(KeyHash.murmur3x64_128(Array("hello".utf8))) == "029bbd41b3a7d8cb191dae486a901e5b")
        #expect(
            hex(KeyHash.murmur3x64_128(Array("The quick brown fox jumps over the lazy dog".utf8)))
                == "6c1b07bc7bbc4be347939ac4a93c437a")
        let bytes = (0..<768).map { UInt8($0 % 256) }
        #expect(hex(KeyHash.murmur3x64_128(bytes)) == "b626b903306c92cf3846f3e2e5d953fa")
    }

    @Test func physicalFormIsLiteralUpTo510BytesAndExactly511Beyond() {
        let scheme = LongKeys()
        let literal = Array(repeating: UInt8(0x41), count: 510)
        #expect(scheme.physical(literal) == literal)
        for count in [511, 512, 600, 5_000] {
            let key = Array(repeating: UInt8(0x42), count: count)
            let physical = scheme.physical(key)
            #expect(physical.count == 511)
            #expect(physical.prefix(495).elementsEqual(key.prefix(495)))
        }
        // Same first 495 bytes, different stored forms.
        #expect(scheme.physical(Array(twin("first").utf8)) != scheme.physical(Array(twin("second").utf8)))
    }

    @Test func longIDsRoundTripThroughGetContainsAndDelete() async throws {
        try await withTemporaryStorePath { path in
            let store = try openDocs(path)
            let sample = sampleDocs()
            for doc in sample { try await store.put(doc, in: docs) }
            try store.read { snap throws in
                #expect(try snap.count(of: docs) == sample.count)
                for doc in sample {
                    #expect(try snap.get(.string(doc.id), from: docs) == doc)
                    #expect(try snap.contains(.string(doc.id), in: docs))
                    let generic = try snap.genericValue(.string(doc.id), inCollectionNamed: "docs")
                    #expect(generic?["n"] == .int(Int64(doc.n)))
                    #expect(try snap.field("tag", of: .string(doc.id), in: docs) == .string(doc.tag))
                }
                // A long key that is not stored, but shares the 495-byte prefix of two that are.
                #expect(try snap.get(.string(twin("third")), from: docs) == nil)
                #expect(try !snap.contains(.string(String(repeating: "a", count: 601)), in: docs))
            }
            // Upsert keeps one record per long key; delete removes it and its index entry.
            try await store.put(Doc(id: longIDs[1], tag: "moved", n: 7), in: docs)
            try await store.delete(.string(longIDs[0]), from: docs)
            try store.read { snap throws in
                #expect(try snap.count(of: docs) == sample.count - 1)
                #expect(try snap.get(.string(longIDs[0]), from: docs) == nil)
                #expect(try snap.get(.string(longIDs[1]), from: docs) == Doc(id: longIDs[1], tag: "moved", n: 7))
                #expect(try snap.values(in: docs.indexes[0], of: docs, range: exactly("long-1")).isEmpty)
                #expect(try snap.keys(in: docs.indexes[0], of: docs, range: exactly("moved")) == [.string(longIDs[1])])
            }
            #expect(try store.verify().isSound)
        }
    }

    @Test func walksHandBackLogicalKeysInOrder() async throws {
        try await withTemporaryStorePath { path in
            let store = try openDocs(path)
            let sample = sampleDocs()
            try await store.write { txn in
                for doc in sample.reversed() { try txn.put(doc, in: docs) }
            }
            try store.read { snap throws in
                var walked: [String] = []
                for record in snap.records(in: docs) {
                    let (key, doc) = try record.get()
                    #expect(key == .string(doc.id))
                    walked.append(doc.id)
                }
                #expect(Set(walked) == Set(sample.map(\.id)))
                // Keys that differ before byte 495 come in their own order; the two that share
                // 495 bytes sit together, in the order of their hashes.
                let prefixes = sample.map { Array($0.id.utf8.prefix(495)) }.sorted { $0.lexicographicallyPrecedes($1) }
                #expect(walked.map { Array($0.utf8.prefix(495)) } == prefixes)
                #expect(try snap.values(of: docs).map(\.id) == walked)
                #expect(try snap.values(of: docs, reverse: true).map(\.id) == walked.reversed())
                var generic: [StoreKey] = []
                try snap.forEachGeneric(inCollectionNamed: "docs") { key, _ in
                    generic.append(key)
                    return true
                }
                #expect(generic == walked.map { .string($0) })
                // Range bounds longer than 495 bytes select exactly the logical keys in range.
                let first = Array(twin("first").utf8)
                #expect(try snap.values(of: docs, range: .exactly(StoreKey(bytes: first))).map(\.id) == [twin("first")])
                #expect(
                    Set(try snap.values(of: docs, range: .prefix(.string(shared + "-"))).map(\.id))
                        == [twin("first"), twin("second")])
                let second = try snap.values(of: docs, range: .prefix(.string(shared + "-s")))
                #expect(second.map(\.id) == [twin("second")])
                let bound = Array((shared + "-g").utf8)
                #expect(
                    try snap.values(of: docs, range: .from(StoreKey(bytes: bound))).map(\.id)
                        == walked.filter { KeyRange.compare(Array($0.utf8), bound) >= 0 })
            }
        }
    }

    @Test func indexLookupsFindLongValuesExactly() async throws {
        try await withTemporaryStorePath { path in
            let store = try openDocs(path)
            // Long tags, two of them sharing their first 495 bytes: the old 480-byte clamp made
            // both one key and exact lookups of either found nothing.
            let tags = [
                String(repeating: "t", count: 700), twin("x"), twin("y"), "é" + String(repeating: "ü", count: 400),
            ]
            let sample = tags.enumerated().map { Doc(id: "d\($0.offset)", tag: $0.element, n: $0.offset) }
                + [Doc(id: longIDs[1], tag: tags[1], n: 9)]
            for doc in sample { try await store.put(doc, in: docs) }
            try store.read { snap throws in
                for tag in tags {
                    let expected = sample.filter { $0.tag == tag }.map(\.id).sorted()
                    let found = try snap.keys(in: docs.indexes[0], of: docs, range: exactly(tag))
                    #expect(found.compactMap(\.stringValue).sorted() == expected)
                    let values = try snap.values(in: docs.indexes[0], of: docs, range: exactly(tag))
                    #expect(values.count == expected.count && values.allSatisfy { $0.tag == tag })
                }
                var entries: [(StoreKey, StoreKey)] = []
                try snap.forEachIndexEntry("docs", "tag") { indexKey, key in
                    entries.append((indexKey, key))
                    return true
                }
                #expect(entries.count == sample.count)
                for (indexKey, key) in entries {
                    let doc = try #require(try snap.get(key, from: docs))
                    #expect(indexKey == .string(doc.tag))
                }
                // The counts a key: the walk's entries grouped, the twins told apart.
                var grouped: [(key: StoreKey, count: Int)] = []
                for (indexKey, _) in entries {
                    if grouped.last?.key == indexKey { grouped[grouped.count - 1].count += 1 } else { grouped.append((indexKey, 1)) }
                }
                let counts = try snap.indexKeyCounts("docs", "tag")
                #expect(counts.map(\.key) == grouped.map(\.key) && counts.map(\.count) == grouped.map(\.count))
                #expect(counts.first { $0.key == .string(tags[1]) }?.count == 2)
                // One key's count, by one lookup: the same, long keys too; none for an absent key.
                for (key, count) in counts { #expect(try snap.indexKeyCount("docs", "tag", indexKey: key) == count) }
                #expect(try snap.indexKeyCount("docs", "tag", indexKey: .string("absent")) == 0)
                // An entry is found by its two keys exactly, long ones too; a twin's is not.
                for doc in sample {
                    #expect(try snap.indexHasEntry("docs", "tag", indexKey: .string(doc.tag), key: .string(doc.id)))
                    let other = doc.tag == tags[1] ? tags[2] : tags[1]
                    #expect(try !snap.indexHasEntry("docs", "tag", indexKey: .string(other), key: .string(doc.id)))
                }
            }
            // Moving a record off a long tag removes exactly its entry.
            try await store.put(Doc(id: longIDs[1], tag: "short", n: 9), in: docs)
            try store.read { snap throws in
                #expect(try snap.keys(in: docs.indexes[0], of: docs, range: exactly(tags[1])) == [.string("d1")])
                let counts = try snap.indexKeyCounts("docs", "tag")
                #expect(counts.first { $0.key == .string(tags[1]) }?.count == 1)
                #expect(counts.first { $0.key == .string("short") }?.count == 1)
                #expect(counts.reduce(0) { $0 + $1.count } == 5)
            }
            #expect(try store.verify().isSound)
        }
    }

    @Test func relationsKeepLongOwnersAndMembers() async throws {
        try await withTemporaryStorePath { path in
            let store = try openDocs(path)
            let sample = sampleDocs()
            try await store.bulkInsert(sample, into: docs)
            let owner = StoreKey.string("query:" + String(repeating: "q", count: 900))
            let twin = StoreKey.string(String(repeating: "q", count: 495) + String(repeating: "-twin", count: 5))
            let members = sample.prefix(4).map { StoreKey.string($0.id) } + [.string("a")]
            try await store.write { txn in
                try txn.setMembers(members, of: owner, in: related)
                try txn.addMembers([.string(longIDs[5])], to: twin, in: related)
            }
            try store.read { snap throws in
                let found = try snap.members(of: owner, in: related)
                #expect(Set(found) == Set(members))
                #expect(try found.compactMap { try snap.get($0, from: docs) }.count == members.count)
                #expect(try snap.members(of: twin, in: related) == [.string(longIDs[5])])
                let stranger = StoreKey.string(String(repeating: "q", count: 495) + String(repeating: "-other", count: 5))
                #expect(try snap.members(of: stranger, in: related).isEmpty)
            }
            let removed = try await store.write { txn in
                [
                    try txn.removeMember(.string(longIDs[1]), from: owner, in: related),
                    try txn.removeMember(.string(longIDs[1]), from: owner, in: related),
                ]
            }
            #expect(removed == [true, false])
            try store.read { snap throws in
                #expect(Set(try snap.members(of: owner, in: related)) == Set(members).subtracting([.string(longIDs[1])]))
            }
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
            #expect(report.relationEntries == members.count)
        }
    }

    @Test(arguments: [0, 4_096, 256 << 20])
    func bulkInsertStoresLongKeysInEitherPath(sortWindow: Int) async throws {
        try await withTemporaryStorePath { path in
            let store = try openDocs(path)
            // Random order, several chunks: chunks are held and merged with the window, written
            // one by one without it, spilled to a file and merged at the end with a small one; a
            // long key given twice keeps the value given last.
            var sample = sampleDocs()
            for i in 0..<300 { sample.append(Doc(id: String(format: "k%04d", (i * 7919) % 300), tag: "bulk", n: i)) }
            sample.append(Doc(id: longIDs[1], tag: twin("again"), n: 42))
            var rng = SystemRandomNumberGenerator()
            sample.shuffle(using: &rng)
            if let last = sample.lastIndex(where: { $0.id == longIDs[1] && $0.n == 42 }) {
                sample.append(sample.remove(at: last))  // the replacement comes after the original
            }
            try await store.bulkInsert(
                sample, into: docs, options: BulkInsertOptions(chunkSize: 64, sortWindow: sortWindow))
            try store.read { snap throws in
                #expect(try snap.count(of: docs) == longIDs.count + 5 + 300)
                for id in longIDs where id != longIDs[1] {
                    #expect(try snap.get(.string(id), from: docs)?.id == id)
                }
                #expect(try snap.get(.string(longIDs[1]), from: docs)?.n == 42)
                #expect(try snap.keys(in: docs.indexes[0], of: docs, range: exactly(twin("again"))) == [.string(longIDs[1])])
                #expect(try snap.keys(in: docs.indexes[0], of: docs, range: exactly("long-1")).isEmpty)
            }
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
            #expect(report.records == longIDs.count + 5 + 300)
        }
    }

    @Test func bulkInsertInOrderIntoAnEmptyStoreAppendsLongKeys() async throws {
        try await withTemporaryStorePath { path in
            let store = try openDocs(path)
            let sample = (0..<200).map { Doc(id: String(format: "%04d", $0) + String(repeating: "p", count: 600), tag: "t", n: $0) }
            let report = try await store.bulkInsert(sample, into: docs, options: BulkInsertOptions(chunkSize: 50))
            #expect(report.appendedChunks == 4)
            try store.read { snap throws in
                #expect(try snap.values(of: docs) == sample)
            }
            #expect(try store.verify().isSound)
        }
    }

    @Test func aCollidingLongKeyIsRefusedAndTheFirstRecordStays() async throws {
        try await withTemporaryStorePath { path in
            // Every long key gets the same hash: two keys sharing 495 bytes then collide.
            let store = try openDocs(path) { $0.longKeyDigest = { _ in Array(repeating: 0xAB, count: 16) } }
            let first = Doc(id: twin("first"), tag: "one", n: 1)
            let second = Doc(id: twin("second"), tag: "two", n: 2)
            try await store.put(first, in: docs)
            do {
                try await store.put(second, in: docs)
                Issue.record("a colliding key must be refused")
            } catch let error as StoreError {
                #expect(error.code == .keyCollision)
                #expect(error.message.contains("same stored form"))
            }
            // The same, through one transaction, a relation and a bulk insert.
            await #expect(throws: StoreError.self) {
                try await store.write { txn in try txn.addMembers([.string(second.id)], to: .string("o"), in: related) }
            }
            await #expect(throws: StoreError.self) {
                try await store.bulkInsert([Doc(id: "x", tag: "x", n: 0), second], into: docs)
            }
            await #expect(throws: StoreError.self) {
                try await store.bulkInsert([Doc(id: "y", tag: twin("tag-a"), n: 0), Doc(id: "z", tag: twin("tag-b"), n: 0)], into: docs)
            }
            try store.read { snap throws in
                #expect(try snap.get(.string(first.id), from: docs) == first)
                #expect(try snap.get(.string(second.id), from: docs) == nil)
                #expect(try !snap.contains(.string(second.id), in: docs))
                #expect(try snap.count(of: docs) == 1)
                #expect(try snap.members(of: .string("o"), in: related).isEmpty)
                #expect(try snap.values(of: docs) == [first])
            }
            #expect(try store.verify().isSound)
        }
    }

    @Test func aDamagedLongKeyMappingIsFoundByVerify() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try openDocs(path)
                try await store.put(Doc(id: longIDs[0], tag: "t", n: 0), in: docs)
                store.close()
            }
            try remapLongKey(path, longIDs[0], to: longIDs[1])
            let store = try openDocs(path)
            let report = try store.verify()
            #expect(!report.isSound)
            #expect(report.problems.contains { $0.contains("does not match its stored form") })
            // Reads compare the mapped key first: neither key finds the record.
            try store.read { snap throws in
                #expect(try snap.get(.string(longIDs[0]), from: docs) == nil)
                #expect(try snap.get(.string(longIDs[1]), from: docs) == nil)
            }
        }
    }

    @Test func shortKeysLeaveLongKeysEmpty() async throws {
        try await withTemporaryStorePath { path in
            let store = try openDocs(path)
            // 510 bytes: the longest keys stored as themselves.
            let sample = (0..<500).map {
                Doc(id: String(format: "%05d", $0) + String(repeating: "s", count: 505), tag: "t", n: $0)
            }
            let report = try await store.bulkInsert(sample, into: docs, options: BulkInsertOptions(chunkSize: 100))
            #expect(report.appendedChunks == 5)
            let widest = Doc(id: String(repeating: "x", count: 510), tag: String(repeating: "y", count: 510), n: 0)
            try await store.put(widest, in: docs)
            let mapped = try store.read { snap in try snap.count(of: try #require(store.longKeysDatabase)) }
            #expect(mapped == 0)
            #expect(try store.read { try $0.count(of: docs) } == 501)
        }
    }

    @Test func aLiteral511ByteKeyFromAnOlderStoreStillReads() async throws {
        try await withTemporaryStorePath { path in
            let legacy = String(repeating: "L", count: 511)
            do {
                let store = try openDocs(path)
                try await store.put(Doc(id: "x", tag: "t", n: 5), in: docs)
                store.close()
            }
            try moveRecordToLiteralKey(path, from: "x", to: legacy)
            let store = try openDocs(path)
            try store.read { snap throws in
                #expect(try snap.get(.string(legacy), from: docs)?.n == 5)
                #expect(try snap.contains(.string(legacy), in: docs))
                var keys: [StoreKey] = []
                for record in snap.records(in: docs) { keys.append(try record.get().key) }
                #expect(keys == [.string(legacy)])
            }
        }
    }

    /// A long key's stored form is 511 bytes anyone can compute (its first 495 bytes and a
    /// public hash): asked for as a key of its own, it is a key nobody stored, not the long
    /// key's record under another name (a get answered for it, and a delete removed it and
    /// told the change feed the wrong key).
    @Test func aLongKeysStoredFormIsNotAnotherNameForItsRecord() async throws {
        try await withTemporaryStorePath { path in
            let store = try openDocs(path)
            let victim = Doc(id: longIDs[0], tag: "victim", n: 1)
            try await store.put(victim, in: docs)
            let alias = StoreKey(bytes: LongKeys().physical(Array(victim.id.utf8)))
            #expect(alias.bytes.count == 511)
            try store.read { snap throws in
                #expect(try snap.get(alias, from: docs) == nil)
                #expect(try !snap.contains(alias, in: docs))
                #expect(try snap.genericValue(alias, inCollectionNamed: "docs") == nil)
            }
            try await store.delete(alias, from: docs)
            #expect(try store.read { try $0.get(.string(victim.id), from: docs) } == victim)
            #expect(try store.verify().isSound)
        }
    }

    @Test func emptyKeysStayAnError() async throws {
        try await withTemporaryStorePath { path in
            let store = try openDocs(path)
            for doc in [Doc(id: "", tag: "t", n: 0), Doc(id: "ok", tag: "", n: 0)] {
                do {
                    try await store.put(doc, in: docs)
                    Issue.record("an empty key must fail")
                } catch let error as StoreError {
                    #expect(error.code == .invalidKey)
                }
            }
            await #expect(throws: StoreError.self) {
                try await store.write { txn in try txn.addMembers([.string("")], to: .string("o"), in: related) }
            }
            #expect(try store.read { try $0.count(of: docs) } == 0)
        }
    }
}

/// Points the stored form of `key` at another key, behind the store's back.
private func remapLongKey(_ path: String, _ key: String, to other: String) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let db = try env.openDatabase("_longkeys")
    let physical = LongKeys().physical(Array(key.utf8))
    try env.write { txn in try txn.put(Array(other.utf8), forKey: physical, in: db) }
}

/// Stores the record of `key` under a literal key instead, as a store from before long keys could.
private func moveRecordToLiteralKey(_ path: String, from key: String, to literal: String) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let records = try env.openDatabase("c:docs")
    try env.write { txn in
        let bytes = try #require(try txn.get(Array(key.utf8), in: records))
        try txn.put(bytes, forKey: Array(literal.utf8), in: records)
        try txn.delete(Array(key.utf8), in: records)
    }
}
