import Foundation
import Testing
@testable import QuireLMDB

@Suite struct MisuseTests {
    /// A sequence smuggled out of its closure traps on use instead of reading freed memory.
    @Test func escapedSequenceTraps() async {
        await #expect(processExitsWith: .failure) { try useEscapedSequence() }
    }

    /// A cursor used after its write transaction committed traps too.
    @Test func cursorAfterCommitTraps() async {
        await #expect(processExitsWith: .failure) { try useCursorAfterCommit() }
    }
}

private func useEscapedSequence() throws {
    let dir = NSTemporaryDirectory() + "quire-misuse-\(UUID().uuidString)"
    let env = try Environment(path: dir)
    let db = try env.openDatabase("x")
    try env.write { txn in try txn.put([1], forKey: [1], in: db) }
    nonisolated(unsafe) var escaped: EntrySequence?
    try env.read { txn in escaped = txn.entries(in: db) }
    _ = escaped!.map { $0.keyBytes }
}

private func useCursorAfterCommit() throws {
    let dir = NSTemporaryDirectory() + "quire-misuse-\(UUID().uuidString)"
    let env = try Environment(path: dir)
    let db = try env.openDatabase("x")
    nonisolated(unsafe) var escaped: Cursor?
    try env.write { txn in escaped = try txn.cursor(in: db) }
    _ = try escaped!.first()
}
