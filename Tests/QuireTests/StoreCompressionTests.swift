import Foundation
import Testing
@testable import Quire
import QuireLMDB  // white-box: damages the stored dictionary
import QuireNews

@Suite struct StoreCompressionTests {
    static let packed = StoreCollection<Article>(name: "packed", key: { .string($0.id) }, compressed: true)

    @Test func dictionaryIsTrainedKeptAndTransparent() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(600, seed: 99)
            let firstHalf = Array(sample[..<300])
            let secondHalf = Array(sample[300...])
            var plainBytes = 0
            var dictionaryBytes = 0
            do {
                let store = try Store(path: path)
                try store.register(Self.packed)
                try await store.bulkInsert(firstHalf, into: Self.packed)
                plainBytes = try size(store, firstHalf)
                let trained = try await store.trainCompressionDictionary(for: Self.packed)
                #expect(trained > 0)
                await #expect(throws: StoreError.self) { try await store.trainCompressionDictionary(for: Self.packed) }
                try await store.bulkInsert(secondHalf, into: Self.packed)
                dictionaryBytes = try size(store, secondHalf)
                store.close()
            }
            // Records compressed with the dictionary are smaller per record than zstd alone.
            #expect(Double(dictionaryBytes) / 300 < Double(plainBytes) / 300)
            // A new process (here: a reopen) reads both kinds, typed, generic and lazily.
            let store = try Store(path: path)
            try store.register(Self.packed)
            try store.read { snap throws in
                for article in [sample[0], sample[599]] {
                    #expect(try snap.get(.string(article.id), from: Self.packed) == article)
                    #expect(try snap.genericValue(.string(article.id), inCollectionNamed: "packed")?["id"] == .string(article.id))
                    #expect(try snap.field("url", of: .string(article.id), in: Self.packed) == article.url.map { .string($0) })
                }
                #expect(try snap.count(of: Self.packed) == 600)
            }
            #expect(try store.verify().isSound)
        }
    }
}

/// The stored bytes of `articles` in the packed collection.
private func size(_ store: Store, _ articles: [Article]) throws -> Int {
    try store.read { snap in
        try articles.reduce(0) { total, a in
            total + (try snap.withRecordBytes(.string(a.id), in: StoreCompressionTests.packed) { $0.byteCount } ?? 0)
        }
    }
}

/// Dictionaries trained by the store itself, records of before and after side by side, and
/// backups that rewrite the older ones.
@Suite struct AutomaticCompressionTests {
    static let packed = StoreCollection<Article>(name: "packed", key: { .string($0.id) }, compressed: true)
    static let plain = StoreCollection<Article>(name: "packed", key: { .string($0.id) })

    /// The header byte of a stored record: 0x10 compressed, 0x40 with the dictionary.
    static func headers(_ store: Store, _ sample: ArraySlice<Article>) throws -> [UInt8] {
        try store.read { snap in
            try sample.map { article in
                try #require(try snap.withRecordBytes(.string(article.id), in: packed) { bytes in bytes.unsafeLoad(as: UInt8.self) })
            }
        }
    }

    /// One changed byte of the dictionary made its records decompress to other text, past
    /// every check (a record's checksum covers its compressed bytes): the store now refuses it.
    @Test func aDamagedDictionaryIsCorruptionNotOtherText() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(300, seed: 12)
            do {
                let store = try Store(path: path)
                try store.register(Self.packed)
                try await store.bulkInsert(sample, into: Self.packed)
                _ = try await store.trainCompressionDictionary(for: Self.packed)
                try await store.put(sample[0], in: Self.packed)
                store.close()
            }
            try damageStoredDictionary(path, collection: "packed")
            #expect {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(Self.packed)
                _ = try store.read { snap in try snap.get(.string(sample[0].id), from: Self.packed) }
            } throws: { error in
                (error as? StoreError)?.code == .corrupted && "\(error)".contains("dictionary")
            }
        }
    }

    @Test func theStoreTrainsTheDictionaryOnceACollectionHoldsEnoughRecords() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(400, seed: 5)
            var options = StoreOptions()
            options.dictionaryTrainingThreshold = 200
            let store = try Store(path: path, options: options)
            defer { store.close() }
            try store.register(Self.packed)
            for article in sample[..<150] { try await store.put(article, in: Self.packed) }
            #expect(try Self.headers(store, sample[..<150]).allSatisfy { $0 & 0x10 != 0 && $0 & 0x40 == 0 })
            _ = try await store.bulkInsert(Array(sample[150..<300]), into: Self.packed)  // reaches 200: trains after this commit
            try await store.write { txn in
                for article in sample[300...] { try txn.put(article, in: Self.packed) }
            }
            #expect(try Self.headers(store, sample[300...]).allSatisfy { $0 & 0x50 == 0x50 })
            try store.read { snap throws in
                for article in [sample[0], sample[149], sample[299], sample[399]] {
                    #expect(try snap.get(.string(article.id), from: Self.packed) == article)
                }
            }
            #expect(try store.verify().isSound)
        }
    }

    /// A load held in its sort window commits nothing before its end, so a dictionary trained
    /// after a commit came after every record was encoded: it trains first, from its values.
    @Test func aLoadThatReachesTheThresholdTrainsTheDictionaryBeforeItWrites() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(900, seed: 8)
            var options = StoreOptions()
            options.dictionaryTrainingThreshold = 300
            let store = try Store(path: path, options: options)
            defer { store.close() }
            try store.register(Self.packed)
            _ = try await store.bulkInsert(Array(sample[..<100]), into: Self.packed)  // below: no dictionary
            #expect(try Self.headers(store, sample[..<100]).allSatisfy { $0 & 0x50 == 0x10 })
            // Random ids, in chunks smaller than the input: held, merged and written at the end.
            var bulk = BulkInsertOptions(chunkSize: 200)
            bulk.sortWindow = 64 << 20
            let report = try await store.bulkInsert(Array(sample[100...]), into: Self.packed, options: bulk)
            #expect(report.records == 800)
            #expect(try Self.headers(store, sample[100...]).allSatisfy { $0 & 0x50 == 0x50 })
            let values = try store.read { snap in try snap.values(of: Self.packed) }
            #expect(values == sample.sorted { $0.id < $1.id })
            #expect(try store.verify().isSound)
        }
    }

    @Test func aCompactBackupRewritesRecordsWrittenBeforeTheDictionary() async throws {
        try await withTemporaryStorePath { path in
            try await withTemporaryStorePath { copy in
                let sample = generatedArticles(300, seed: 6)
                do {
                    // First uncompressed, then declared compressed: both kinds of old records.
                    let store = try Store(path: path)
                    try store.register(Self.plain)
                    _ = try await store.bulkInsert(Array(sample[..<100]), into: Self.plain)
                    store.close()
                }
                var options = StoreOptions()
                options.dictionaryTrainingThreshold = 250
                let store = try Store(path: path, options: options)
                defer { store.close() }
                try store.register(Self.packed)
                // 200 records stay below the threshold; the next load reaches it and trains first.
                _ = try await store.bulkInsert(Array(sample[100..<200]), into: Self.packed)
                _ = try await store.bulkInsert(Array(sample[200...]), into: Self.packed)
                let before = try Self.headers(store, sample[...])
                #expect(before[0] & 0x10 == 0 && before[150] & 0x50 == 0x10 && before[299] & 0x50 == 0x50)
                // Until the rewrite is done no data.mdb is in the destination: a copy killed
                // midway had left one missing records, taken for a finished backup.
                var polls = 0
                var sawDataFile = false
                try store.backup(to: copy, isCancelled: {
                    polls += 1
                    sawDataFile = sawDataFile || FileManager.default.fileExists(atPath: copy + "/data.mdb")
                    return false
                })
                #expect(polls > 1 && !sawDataFile)
                #expect(try FileManager.default.contentsOfDirectory(atPath: copy) == ["data.mdb"])
                let restored = try Store(path: copy)
                defer { restored.close() }
                try restored.register(Self.packed)
                #expect(try Self.headers(restored, sample[...]).allSatisfy { $0 & 0x50 == 0x50 })
                let values = try restored.read { snap in try snap.values(of: Self.packed) }
                #expect(values == sample.sorted { $0.id < $1.id })
                #expect(try restored.verify().isSound)
                let sourceBytes = try #require(FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int)
                let copyBytes = try #require(FileManager.default.attributesOfItem(atPath: copy + "/data.mdb")[.size] as? Int)
                #expect(copyBytes < sourceBytes)
            }
        }
    }
}

/// Flips one bit in the middle of a collection's stored dictionary, as a damaged page would.
private func damageStoredDictionary(_ path: String, collection: String) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let meta = try env.openDatabase(StoreLayout.meta, flags: [])
    let key = StoreLayout.dictionaryKey(collection)
    var dictionary = try #require(try env.read { txn in try txn.get(key, in: meta) })
    dictionary[dictionary.count / 2] ^= 0x04
    try env.write { txn in try txn.put(dictionary, forKey: key, in: meta) }
}
