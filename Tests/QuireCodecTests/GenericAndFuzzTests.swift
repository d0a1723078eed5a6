import CZstd
import Foundation
import QuireCodec
import Testing

@Suite struct CompactValueTests {
    @Test func jsonRendering() throws {
        let value = CompactValue.object([
            .init(key: "s", value: .string("a\"b\\c\n\t\u{1}é😀/")),
            .init(key: "n", value: .array([.int(-3), .uint(18_446_744_073_709_551_615), .double(0.1), .double(1e21), .double(.nan), .null])),
            .init(key: "d", value: .array([
                .date(Date(timeIntervalSince1970: 1_436_000_000)), .date(Date(timeIntervalSince1970: 1_436_000_000.25)),
                .date(Date(timeIntervalSince1970: -1)),
            ])),
            .init(key: "b", value: .bytes([0, 255, 16])),
            .init(key: "u", value: .url("https://x.y/z")),
            .init(key: "t", value: .bool(true)),
        ])
        #expect(
            value.jsonString()
                == #"{"s":"a\"b\\c\n\t\u0001é😀/","n":[-3,18446744073709551615,0.1,1e+21,null,null],"d":["2015-07-04T08:53:20Z","2015-07-04T08:53:20.25Z","1969-12-31T23:59:59Z"],"b":"AP8Q","u":"https://x.y/z","t":true}"#
        )
        var fields = FieldTable()
        let bytes = try CompactEncoder().encode(value, fields: &fields)
        let back = try CompactValue.decode(from: bytes, fields: fields)
        #expect(back.jsonString() == value.jsonString())
    }

    @Test func typedRecordAsGenericValue() throws {
        var fields = FieldTable()
        let article = Fixtures.article(7)
        let bytes = try CompactEncoder().encode(article, fields: &fields)
        let value = try CompactValue.decode(from: bytes, fields: fields)
        #expect(value["id"] == .string(article.id))
        #expect(value["webURL"] == .url(article.webURL.absoluteString))
        #expect(value["publishedAt"] == .date(article.publishedAt))
        #expect(value["keywords"]?[0]?["rank"] == .int(1))
        // Field order is stored order.
        guard case .object(let entries) = value else { Issue.record("not an object"); return }
        #expect(entries.first?.key == "id")
    }

    @Test func fromJSONSerialization() throws {
        let json = #"{"b":[1,2.5,true,null,"x"],"a":{"z":false,"big":9223372036854775807}}"#
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let value = try CompactValue(jsonObject: object)
        #expect(value.jsonString() == #"{"a":{"big":9223372036854775807,"z":false},"b":[1,2.5,true,null,"x"]}"#)
    }

    @Test func lazyFieldPaths() throws {
        var fields = FieldTable()
        let article = Fixtures.article(3)
        let bytes = try CompactEncoder().encode(article, fields: &fields)
        try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in
            #expect(try CompactField.value(at: "keywords.1.value", in: raw, fields: fields) == .string(article.keywords[1].value))
            #expect(try CompactField.value(at: "headline.main", in: raw, fields: fields) == .string(article.headline.main))
            #expect(try CompactField.value(at: [.key("wordCount")], in: raw, fields: fields) == .int(Int64(article.wordCount)))
            #expect(try CompactField.value(at: "keywords.99.value", in: raw, fields: fields) == nil)
            // newsDesk equals the kicker ("Metro"), so it is written as a reference to it.
            #expect(article.headline.kicker == article.newsDesk)
            #expect(try CompactField.value(at: "newsDesk", in: raw, fields: fields) == .string("Metro"))
            #expect(try CompactField.value(at: "nope", in: raw, fields: fields) == nil)
            #expect(try CompactField.value(at: "headline.main.x", in: raw, fields: fields) == nil)
        }
        let map = try CompactEncoder().encode(["k": [10: "ten"]], fields: &fields)
        try map.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in
            #expect(try CompactField.value(at: "k.10", in: raw, fields: fields) == .string("ten"))
        }
    }
}

@Suite struct CompressionTests {
    @Test func roundTripWithAndWithoutDictionary() throws {
        var fields = FieldTable()
        let articles = (0..<300).map { Fixtures.article(UInt64($0)) }
        let plain = try articles.map { try CompactEncoder().encode($0, fields: &fields) }
        let dictionary = try ZstdDictionary.train(samples: plain, capacity: 8 * 1024)
        #expect(!dictionary.isEmpty)

        let noDict = CompactEncoder(options: .init(compression: .init(threshold: 64)))
        let withDict = CompactEncoder(options: .init(compression: .init(threshold: 64, dictionary: dictionary)))
        let decoder = CompactDecoder(options: .init(dictionary: dictionary))
        var compressedSize = 0
        var jsonSize = 0
        for article in articles.prefix(50) {
            let a = try noDict.encode(article, fields: &fields)
            let b = try withDict.encode(article, fields: &fields)
            #expect(a[0] == 0x11)
            #expect(b[0] == 0x51)
            #expect(try CompactDecoder().decode(Article.self, from: a, fields: fields) == article)
            #expect(try decoder.decode(Article.self, from: b, fields: fields) == article)
            try b.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in
                #expect(try CompactField.value(at: "headline.main", in: raw, fields: fields, options: .init(dictionary: dictionary)) == .string(article.headline.main))
            }
            #expect(throws: CompactDecodingError.self) { try CompactDecoder().decode(Article.self, from: b, fields: fields) }
            compressedSize += b.count
            jsonSize += try JSONEncoder().encode(article).count
        }
        #expect(Double(compressedSize) / Double(jsonSize) <= 0.4)
        let standalone = try withDict.encodeStandalone(articles[0])
        #expect(try decoder.decodeStandalone(Article.self, from: standalone) == articles[0])
    }

    /// A body larger than a reader decompresses by default is stored as it is: compressed, a
    /// record of 64 MiB of text was written and then refused by every read.
    @Test func aBodyOverTheDecompressionLimitIsLeftUncompressed() throws {
        var fields = FieldTable()
        let encoder = CompactEncoder(options: .init(compression: .init(threshold: 64)))
        let limit = CompactDecoder.Options.defaultMaxDecompressedSize
        let big = String(repeating: "a", count: limit)
        let bytes = try encoder.encode(["text": big], fields: &fields)
        #expect(bytes[0] & 0x10 == 0, "compressed")
        #expect(try CompactDecoder().decode([String: String].self, from: bytes, fields: fields)["text"]?.count == limit)
        let small = try encoder.encode(["text": String(repeating: "a", count: 4_096)], fields: &fields)
        #expect(small[0] & 0x10 != 0 && small.count < 1_000)
    }

    /// Frames leave out their content size and dictionary id (the payload has both); frames
    /// that hold them, as builds before 2026-12-04 wrote, decode the same.
    @Test func framesCarryNoSizeNorDictionaryIdAndOlderFramesStillDecode() throws {
        var fields = FieldTable()
        let articles = (0..<300).map { Fixtures.article(UInt64($0)) }
        let plain = try articles.map { try CompactEncoder().encode($0, fields: &fields) }
        let dictionary = try ZstdDictionary.train(samples: plain, capacity: 8 * 1024)
        let encoder = CompactEncoder(options: .init(compression: .init(threshold: 64, dictionary: dictionary)))
        let decoder = CompactDecoder(options: .init(dictionary: dictionary))
        let cdict = try #require(dictionary.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, 3) })
        defer { ZSTD_freeCDict(cdict) }
        let cctx = try #require(ZSTD_createCCtx())
        defer { ZSTD_freeCCtx(cctx) }
        for (article, body) in zip(articles.prefix(20), plain) {
            let payload = try encoder.encode(article, fields: &fields)
            #expect(payload[0] == 0x51)  // version 1, compressed with the dictionary: header, size, frame
            // The frame follows the size's varint (two bytes for a body of 128 bytes to 16 KiB).
            let offset = 3
            #expect(Array(payload[offset..<(offset + 4)]) == [0x28, 0xB5, 0x2F, 0xFD])
            // The frame header descriptor: no content size (bits 7-6, and single segment, bit 5),
            // no dictionary id (bits 1-0).
            #expect(payload[offset + 4] & 0xE3 == 0)
            // The same body in a frame with both, behind the same header and size.
            let inner = Array(body.dropFirst())  // the plain payload's body, after its header
            #expect((128..<(16 << 10)).contains(inner.count))
            var frame = [UInt8](repeating: 0, count: ZSTD_compressBound(inner.count))
            let written = frame.withUnsafeMutableBytes { out in
                inner.withUnsafeBytes { ZSTD_compress_usingCDict(cctx, out.baseAddress, out.count, $0.baseAddress, $0.count, cdict) }
            }
            #expect(ZSTD_isError(written) == 0)
            #expect(frame[4] & 0xC3 != 0)
            let older = Array(payload[..<offset]) + frame.prefix(written)
            #expect(try decoder.decode(Article.self, from: older, fields: fields) == article)
            #expect(try decoder.decode(Article.self, from: payload, fields: fields) == article)
        }
    }

    @Test func corruptFrameThrows() throws {
        var fields = FieldTable()
        let encoder = CompactEncoder(options: .init(compression: .init(threshold: 16)))
        let bytes = try encoder.encode(Fixtures.article(1), fields: &fields)
        #expect(try CompactDecoder().decode(Article.self, from: bytes, fields: fields) == Fixtures.article(1))
        // A version 1 payload has no checksum of its own: changed literals decode as other text.
        // What zstd must refuse: the first block's type set to the reserved one (the frame's
        // header: magic, descriptor, window), and the frame cut short.
        let frame = try #require((0..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == [0x28, 0xB5, 0x2F, 0xFD] })
        #expect(bytes[frame + 4] & 0x20 == 0)  // not a single segment: a window byte follows
        var reserved = bytes
        reserved[frame + 6] |= 0b110
        #expect(throws: CompactDecodingError.self) { try CompactDecoder().decode(Article.self, from: reserved, fields: fields) }
        let cut = Array(bytes.dropLast(9))
        #expect(throws: CompactDecodingError.self) { try CompactDecoder().decode(Article.self, from: cut, fields: fields) }
        // A declared size beyond the limit is refused before any allocation.
        let bomb: [UInt8] = [0x11, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x28, 0xB5, 0x2F, 0xFD]
        #expect(throws: CompactDecodingError.self) { try CompactValue.decode(from: bomb, fields: fields) }
    }
}

@Suite struct FuzzTests {
    /// Random bytes and mutations of valid records: every input must either decode or throw.
    @Test func randomAndMutatedInputsNeverCrash() throws {
        var rng = SplitMix64(seed: 0x5EED)
        var fields = FieldTable()
        let seeds = try (0..<8).map { try CompactEncoder().encode(Fixtures.article(UInt64($0)), fields: &fields) }
            + [try CompactEncoder().encode(["a": [1: [true]], "b": [:]] as [String: [Int: [Bool]]], fields: &fields)]
            + [try CompactEncoder().encodeStandalone(Fixtures.article(9))]
            + [try CompactEncoder().encode(["https://example.com/a/long/path/1", "abcdef", "https://example.com/a/long/path/2", "abcdef"], fields: &fields)]
            + [try CompactEncoder().encode(Tagged(title: "title one", kind: "Business Day", tags: ["markets", "ab", "Business Day"], note: "Business Day"), fields: &fields)]
        let decoder = CompactDecoder(options: .init(depthLimit: 20))
        var accepted = 0
        var rejected = 0
        var unrenderable: [String] = []
        // Bounded for `swift test`; QUIRE_CODEC_FUZZ_ROUNDS=N runs longer.
        let rounds = Int(ProcessInfo.processInfo.environment["QUIRE_CODEC_FUZZ_ROUNDS"] ?? "") ?? 6_000
        for round in 0..<rounds {
            var bytes: [UInt8]
            if round % 4 == 0 {
                bytes = (0..<Int(rng.next() % 48)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if !bytes.isEmpty && rng.next() % 2 == 0 { bytes[0] = 0x01 }
            } else {
                bytes = seeds[Int(rng.next() % UInt64(seeds.count))]
                for _ in 0..<(1 + Int(rng.next() % 4)) {
                    let index = Int(rng.next() % UInt64(bytes.count))
                    switch rng.next() % 4 {
                    case 0: bytes[index] = UInt8(truncatingIfNeeded: rng.next())
                    case 1: bytes.removeSubrange(index...)
                    case 2: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: index)
                    default: bytes[index] ^= 1 << (rng.next() % 8)
                    }
                    if bytes.isEmpty { break }
                }
            }
            try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in
                if (try? decoder.decode(Article.self, from: raw, fields: fields)) != nil { accepted += 1 } else { rejected += 1 }
                _ = try? decoder.decode(Tagged.self, from: raw, fields: fields)
                _ = try? decoder.decode(ViaCodable<Tagged>.self, from: raw, fields: fields)
                // Whatever the generic decoder accepts renders as JSON that a JSON parser accepts.
                if let value = try? CompactValue.decode(from: raw, fields: fields),
                    (try? JSONSerialization.jsonObject(with: Data(value.jsonBytes()), options: [.fragmentsAllowed])) == nil,
                    unrenderable.count < 5
                {
                    unrenderable.append(value.jsonString())
                }
                _ = try? CompactField.value(at: "keywords.1.value", in: raw, fields: fields)
                _ = try? CompactField.value(at: "tags.2", in: raw, fields: fields)
                _ = try? decoder.decode([String].self, from: raw, fields: fields)
            }
        }
        #expect(unrenderable.isEmpty, "\(unrenderable)")
        #expect(accepted > 0, "some mutations (such as changed string bytes) stay valid")
        #expect(rejected > rounds / 2, "most random bytes and mutations are refused")
    }
}
