import Foundation
import Testing
@testable import Quire

/// Inside a write transaction, bytes lent to a closure that may itself write are not pointers
/// into the transaction's pages: a put or delete there moves, rewrites or frees those pages.
@Suite struct WriteBorrowTests {
    @Test func recordBytesLentInsideAWriteStayWhatTheyWere() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(JSONWalkTests.items)
            let first = JSONWalkTests.item(5)
            try await store.write { txn in
                for i in 1...40 { try txn.put(JSONWalkTests.item(i), in: JSONWalkTests.items) }
                let before = try txn.withRecordBytes(.string(first.id), in: JSONWalkTests.items) { span in
                    span.withUnsafeBytes { Array($0) }
                }
                let after = try txn.withRecordBytes(.string(first.id), in: JSONWalkTests.items) { span in
                    // The page it is on changes under it: its record deleted, others put before it.
                    _ = try txn.delete(.string(first.id), from: JSONWalkTests.items)
                    for i in 0..<20 {
                        try txn.put(JSONWalkTests.Item(id: "a\(i)", title: String(repeating: "x", count: 90), count: i), in: JSONWalkTests.items)
                    }
                    return span.withUnsafeBytes { Array($0) }
                }
                #expect(before != nil && after == before)
            }
        }
    }

    @Test func aJSONWalkInsideAWriteMayWrite() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(JSONWalkTests.items)
            try await store.write { txn in
                for i in 0..<5_000 { try txn.put(JSONWalkTests.item(i), in: JSONWalkTests.items) }
            }
            let walked = try await store.write { txn in
                var out: [[UInt8]] = []
                try txn.forEachJSON(inCollectionNamed: "items") { key, json in
                    if out.isEmpty {
                        // Records the walk has still to hand out (batches of them already
                        // collected, as pointers into their pages), rewritten longer.
                        for i in 2_000..<5_000 {
                            var item = JSONWalkTests.item(i)
                            item.title = "rewritten " + String(repeating: "y", count: 60) + " \(i)"
                            try txn.put(item, in: JSONWalkTests.items)
                        }
                    }
                    out.append(json)
                    return true
                }
                return out
            }
            // Handed out as they were when reached: the rewritten ones rewritten.
            #expect(walked == (try JSONWalkTests.oneByOne(store).map(\.1)))
        }
    }
}
