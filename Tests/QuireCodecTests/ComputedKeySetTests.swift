import QuireCodec
import Testing

/// Two record types whose key sets are made anew at every use (a computed `compactKeys`), the
/// same names in opposite orders: a decoder that recognised a key set by its address alone could
/// read one with the other's table once a freed set's memory was reused.
private struct Forward: CompactCodable, Equatable {
    var first: String
    var second: String
    static var compactKeys: CompactKeySet { CompactKeySet(["first", "second"]) }

    init(first: String, second: String) {
        self.first = first
        self.second = second
    }

    func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(first, for: 0)
        writer.write(second, for: 1)
    }

    init(from reader: inout CompactObjectReader) throws {
        var first: String?
        var second: String?
        while let key = try reader.next() {
            switch key {
            case 0: first = try reader.readString()
            case 1: second = try reader.readString()
            default: break
            }
        }
        self.first = try reader.require(first, 0)
        self.second = try reader.require(second, 1)
    }
}

private struct Backward: CompactCodable, Equatable {
    var second: String
    var first: String
    static var compactKeys: CompactKeySet { CompactKeySet(["second", "first"]) }

    init(second: String, first: String) {
        self.second = second
        self.first = first
    }

    func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(second, for: 0)
        writer.write(first, for: 1)
    }

    init(from reader: inout CompactObjectReader) throws {
        var second: String?
        var first: String?
        while let key = try reader.next() {
            switch key {
            case 0: second = try reader.readString()
            case 1: first = try reader.readString()
            default: break
            }
        }
        self.second = try reader.require(second, 0)
        self.first = try reader.require(first, 1)
    }
}

@Suite struct ComputedKeySetTests {
    @Test func keySetsMadeAtEveryUseAreNeverMistakenForEachOther() throws {
        var fields = FieldTable()
        let forward = Forward(first: "one", second: "two")
        let backward = Backward(second: "two", first: "one")
        let forwardBytes = try CompactEncoder().encode(forward, fields: &fields)
        let backwardBytes = try CompactEncoder().encode(backward, fields: &fields)
        let decoder = CompactDecoder()
        var wrong: [String] = []
        for round in 0..<2_000 {
            let a = try decoder.decode(Forward.self, from: forwardBytes, fields: fields)
            if a != forward { wrong.append("round \(round): \(a)") }
            let b = try decoder.decode(Backward.self, from: backwardBytes, fields: fields)
            if b != backward { wrong.append("round \(round): \(b)") }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(3))")
    }
}
