import Foundation
import Synchronization
import Testing
@testable import Quire

/// A loader outlives `withBulkLoader` only as a reference: a submit after the load ended throws
/// (it staged values nothing would write, and returned as if they were), and a submit the body
/// left running is waited for and written.
@Suite struct BulkLoaderEndTests {
    @Test func aSubmitAfterTheLoadEndedThrowsAndOneLeftRunningIsWritten() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            defer { store.close() }
            try store.register(rows)
            let all = scrambledRows(3_000, name: "end")
            let kept = Mutex<BulkLoader<Row>?>(nil)
            try await store.withBulkLoader(into: rows, options: BulkInsertOptions(chunkSize: 500)) { loader in
                kept.withLock { $0 = loader }
                try await loader.submit(all[0..<1_000])
                // Not awaited by the body: the load's end waits for it.
                Task { try await loader.submit(all[1_000..<2_000]) }
                try await Task.sleep(for: .milliseconds(1))
            }
            let loader = try #require(kept.withLock { $0 })
            await #expect {
                try await loader.submit(all[2_000..<3_000])
            } throws: { ($0 as? StoreError)?.code == .cancelled }
            let stored = try store.read { try $0.values(of: rows) }
            #expect(stored.count == 1_000 || stored.count == 2_000)
            #expect(Set(stored.map(\.id)).isSubset(of: Set(all[0..<2_000].map(\.id))))
            #expect(try store.verify().isSound)
        }
    }

    /// Submits from tasks of their own take turns: every value is written once.
    @Test func overlappingSubmitsWaitForEachOther() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            defer { store.close() }
            try store.register(rows)
            let all = scrambledRows(4_000, name: "turns")
            try await store.withBulkLoader(into: rows, options: BulkInsertOptions(chunkSize: 500)) { loader in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for part in stride(from: 0, to: all.count, by: 500) {
                        group.addTask { try await loader.submit(all[part..<part + 500]) }
                    }
                    try await group.waitForAll()
                }
            }
            let stored = try store.read { try $0.values(of: rows) }
            #expect(Set(stored) == Set(all))
            #expect(try store.verify().isSound)
        }
    }
}
