import Foundation
import QuireCodec
import Testing

indirect enum Shape: Codable, Hashable {
    case circle(radius: Double)
    case rectangle(width: Int, height: Int)
    case labeled(String, Shape?)
    case empty
}

struct AllInts: Codable, Hashable {
    var i: Int, i8: Int8, i16: Int16, i32: Int32, i64: Int64
    var u: UInt, u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64
}

struct Floats: Codable, Hashable {
    var d: Double, f: Float, tiny: Double, negZero: Double, inf: Double
}

struct Misc: Codable, Hashable {
    var data: Data
    var url: URL
    var dates: [Date]
    var flags: [Bool]
    var nested: [[String?]]
    var byName: [String: Int]
    var byNumber: [Int: String]
    var shapes: [Shape]
    var optionalInt: Int?
    var optionalNested: Headline?
}

@Suite struct RoundTripTests {
    func roundTrip<T: Codable & Equatable>(_ value: T) throws {
        var fields = FieldTable()
        let bytes = try CompactEncoder().encode(value, fields: &fields)
        #expect(try CompactDecoder().decode(T.self, from: bytes, fields: fields) == value)
        let standalone = try CompactEncoder().encodeStandalone(value)
        #expect(try CompactDecoder().decodeStandalone(T.self, from: standalone) == value)
    }

    @Test func article() throws {
        for seed in 0..<20 { try roundTrip(Fixtures.article(UInt64(seed))) }
    }

    @Test func allIntegerWidths() throws {
        try roundTrip(AllInts(i: .min, i8: .min, i16: .min, i32: .min, i64: .min, u: .max, u8: .max, u16: .max, u32: .max, u64: .max))
        try roundTrip(AllInts(i: .max, i8: .max, i16: .max, i32: .max, i64: .max, u: 0, u8: 0, u16: 0, u32: 0, u64: 0))
        try roundTrip(AllInts(i: -1, i8: -1, i16: 300, i32: -70000, i64: 1 << 40, u: 1, u8: 128, u16: 300, u32: 70000, u64: 1 << 63))
    }

    @Test func floats() throws {
        try roundTrip(Floats(d: 0.1, f: 1.5e-3, tiny: .leastNonzeroMagnitude, negZero: -0.0, inf: .infinity))
        var fields = FieldTable()
        let bytes = try CompactEncoder().encode([Double.nan], fields: &fields)
        #expect(try CompactDecoder().decode([Double].self, from: bytes, fields: fields)[0].isNaN)
    }

    @Test func miscKinds() throws {
        let value = Misc(
            data: Data([0, 1, 2, 255]), url: URL(string: "https://example.com/a?b=c#d")!,
            dates: [
                Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -86_400.5),
                Date(timeIntervalSinceReferenceDate: 123.456_789_012), Date(timeIntervalSince1970: 1_560_000_000.123),
            ],
            flags: [true, false], nested: [["a", nil], [], [nil]],
            byName: ["zeta": 1, "alpha": 2, "01": 3, "7": 4], byNumber: [3: "c", -1: "a", 2: "b"],
            shapes: [.circle(radius: 2), .rectangle(width: 3, height: 4), .labeled("x", .empty), .labeled("y", nil), .empty],
            optionalInt: nil, optionalNested: Headline(main: "m", kicker: nil, printHeadline: "p"))
        try roundTrip(value)
    }

    @Test func dictionariesAreDeterministic() throws {
        var first: [String: Int] = [:]
        var second: [String: Int] = [:]
        let keys = (0..<50).map { "key\($0)" }
        for key in keys { first[key] = key.count }
        for key in keys.reversed() { second[key] = key.count }
        var fields = FieldTable()
        let a = try CompactEncoder().encode(first, fields: &fields)
        let b = try CompactEncoder().encode(second, fields: &fields)
        #expect(a == b)
        #expect(fields.count == 0, "dictionary keys are data, not field names")
        let value = try CompactValue.decode(from: a, fields: fields)
        guard case .object(let entries) = value else { Issue.record("not an object"); return }
        #expect(entries.map(\.key) == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    struct Shared: Codable, Equatable {
        var first: String
        var padding: [String]
        var nested: [String: String]
        var again: [Headline]
        var url: URL
    }

    @Test func referencesSurviveWidenedContainersAndMaps() throws {
        let target = "https://static.example.com/images/2024/one.jpg"
        let value = Shared(
            first: target,
            // The array after the target grows past 127 bytes, so its length slot widens and moves
            // every string after it: references must still find their strings.
            padding: [String(repeating: "p", count: 150), target, "https://static.example.com/images/2024/two.jpg"],
            nested: ["k": target, "j": "https://static.example.com/x"],
            again: [Headline(main: target, kicker: "kick", printHeadline: "kick")],
            url: URL(string: target)!)
        var fields = FieldTable()
        let bytes = try CompactEncoder().encode(value, fields: &fields)
        #expect(try CompactDecoder().decode(Shared.self, from: bytes, fields: fields) == value)
        let standalone = try CompactEncoder().encodeStandalone(value)
        #expect(try CompactDecoder().decodeStandalone(Shared.self, from: standalone) == value)
        let generic = try CompactValue.decode(from: bytes, fields: fields)
        #expect(generic["again"]?[0]?["main"] == .string(target))
        #expect(generic["padding"]?[2] == .string("https://static.example.com/images/2024/two.jpg"))
        #expect(generic["nested"]?["k"] == .string(target))
        // Plain: the target in "first", in the map and as the URL; references elsewhere.
        #expect(bytes.count < 150 + 5 * target.utf8.count)  // six long strings would not fit without references
        let path = try bytes.withUnsafeBytes { try CompactField.value(at: "padding.1", in: $0, fields: fields) }
        #expect(path == .string(target))
    }

    @Test func nilOptionalsAreOmitted() throws {
        var fields = FieldTable()
        let withNil = try CompactEncoder().encode(Headline(main: "a", kicker: nil, printHeadline: nil), fields: &fields)
        let without = try CompactEncoder().encode(["main": "a"] as [String: String], fields: &fields)
        // Object: header, tag, length, id, short string "a" — nothing for the two nil fields.
        #expect(withNil == [0x01, 0x0D, 0x03, 0x00, 0x81, 0x61])
        #expect(without.count == withNil.count + 5)  // a map spells its key inline
    }

    @Test func typeMismatchNamesThePath() throws {
        struct Old: Codable { var keywords: [Keyword] }
        struct BadKeyword: Codable { var name: String; var value: String; var rank: String }
        struct New: Codable { var keywords: [BadKeyword] }
        var fields = FieldTable()
        let bytes = try CompactEncoder().encode(Old(keywords: [Keyword(name: "a", value: "b", rank: 1)]), fields: &fields)
        do {
            _ = try CompactDecoder().decode(New.self, from: bytes, fields: fields)
            Issue.record("expected a type mismatch")
        } catch DecodingError.typeMismatch(let type, let context) {
            #expect(ObjectIdentifier(type) == ObjectIdentifier(String.self))
            #expect(context.codingPath.map(\.stringValue) == ["keywords", "Index 0", "rank"])
            #expect(context.debugDescription.contains("keywords[0].rank"))
        }
    }

    @Test func missingRequiredFieldIsKeyNotFound() throws {
        struct Small: Codable { var a: Int }
        struct Big: Codable { var a: Int; var b: Int }
        var fields = FieldTable()
        let bytes = try CompactEncoder().encode(Small(a: 1), fields: &fields)
        #expect(throws: DecodingError.self) { try CompactDecoder().decode(Big.self, from: bytes, fields: fields) }
    }

    @Test func classWithSuperEncoder() throws {
        final class Base: Codable, Equatable {
            var x: Int
            init(x: Int) { self.x = x }
            static func == (a: Base, b: Base) -> Bool { a.x == b.x }
        }
        struct Wrapper: Codable, Equatable {
            var base: Base
            var y: Int
            init(base: Base, y: Int) { self.base = base; self.y = y }
            enum CodingKeys: CodingKey { case y }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try base.encode(to: container.superEncoder())
                try container.encode(y, forKey: .y)
            }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                base = try Base(from: container.superDecoder())
                y = try container.decode(Int.self, forKey: .y)
            }
        }
        try roundTrip(Wrapper(base: Base(x: 5), y: 6))
    }
}

/// Documents with very many strings encode in linear time (string references are found by hash
/// past a few dozen strings) and still read back exactly.
@Suite struct ManyStringsTests {
    struct Item: Codable, Equatable {
        var id: String
        var text: String
    }

    /// Strings that share no 8-byte head, so each is numbered and every later string is looked
    /// up among all of them: the case a scan would make quadratic.
    static func distinctStrings(_ count: Int) -> [String] {
        (0..<count).map { i in
            let head = String(UInt32(truncatingIfNeeded: i &* 0x9E37_79B1), radix: 16)
            return String(repeating: "0", count: 8 - head.count) + head + " of a document that never ends"
        }
    }

    @Test func oneDocumentWithManyDistinctStringsRoundTrips() throws {
        // 400,000 strings; half share a long head (prefix references), half share no head.
        let distinct = Self.distinctStrings(200_000)
        let items = (0..<200_000).map { i in Item(id: "urn:feed:item:\(String(i, radix: 16))", text: distinct[i]) }
        var table = FieldTable()
        let bytes = try CompactEncoder().encode(items, fields: &table)
        #expect(try CompactDecoder().decode([Item].self, from: bytes, fields: table) == items)
    }

    /// Four times the strings cost about four times the encoding, not sixteen. Measured in this
    /// thread's CPU time (the best of three), which other tests running beside it do not stretch;
    /// a wall-clock limit did, by a hundred times in the full suite.
    @Test func encodingCostGrowsLinearlyWithTheNumberOfStrings() throws {
        func cpuSeconds(_ count: Int) throws -> Double {
            let strings = Self.distinctStrings(count)
            var best = Double.infinity
            for _ in 0..<3 {
                var table = FieldTable()
                let start = threadCPUSeconds()
                let bytes = try CompactEncoder().encode(strings, fields: &table)
                best = min(best, threadCPUSeconds() - start)
                #expect(bytes.count > count * 8)
            }
            return best
        }
        let small = try cpuSeconds(16_000)
        let large = try cpuSeconds(64_000)
        #expect(large < small * 8, "16,000 strings took \(small) s of CPU, 64,000 took \(large) s")
    }

    private func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    @Test(arguments: [10, 31, 32, 33, 200, 2_000])
    func referencesPastTheIndexThresholdMatchAScan(count: Int) throws {
        // Repeats and shared prefixes before and after the index is built.
        let strings = (0..<count).flatMap { i in
            ["https://example.com/a/\(i % 37)", "word\(i % 11)", "https://example.com/a/\(i % 37)/x\(i)"]
        }
        var table = FieldTable()
        let bytes = try CompactEncoder().encode(strings, fields: &table)
        #expect(try CompactDecoder().decode([String].self, from: bytes, fields: table) == strings)
        let generic = try CompactValue.decode(from: bytes, fields: table)
        #expect(generic == .array(strings.map { .string($0) }))
        // References keep the encoding far below the text's size.
        #expect(bytes.count < strings.reduce(0) { $0 + $1.utf8.count } / 2)
    }
}
