import Foundation
import QuireCodec

/// `encode.quire.many_strings`: one hostile document of 400,000 distinct short strings
/// (about 18 MB). Finding string references must stay linear in the number of strings: the
/// case reports strings per second, so a quadratic search shows as a collapse of the rate when
/// `--records` grows (it took 22 s before references were found by hash).
final class ManyStringsEncodeBenchmark: Benchmark {
    /// A document shaped like a feed that lists everything it knows.
    struct Document: Codable {
        var title: String
        var items: [Item]
    }

    struct Item: Codable {
        var id: String
        var text: String
    }

    private let count: Int
    private var document: Document?
    private var size = 0

    init(strings: Int = 400_000) { count = strings }

    var name: String { "encode.quire.many_strings" }
    var group: String { "encode.many_strings" }
    var isBaseline: Bool { true }
    var records: Int { count }
    var bytesPerRecord: Double? { size == 0 ? nil : Double(size) / Double(count) }
    var note: String? {
        "one document of \(count) distinct strings (\(size / 1_000_000) MB encoded); records/s counts strings"
    }

    func setUp() throws {
        // Half the strings are ids sharing a long head (the worst case for prefix references).
        let items = (0..<count / 2).map { i in
            Item(id: "urn:feed:item:\(String(i, radix: 16))", text: "entry \(i) of a document that never ends")
        }
        document = Document(title: "everything", items: items)
    }

    func run() throws -> Int {
        guard let document else { throw BenchError("not set up") }
        var table = FieldTable()
        let bytes = try CompactEncoder().encode(document, fields: &table)
        size = bytes.count
        return bytes.count
    }
}
