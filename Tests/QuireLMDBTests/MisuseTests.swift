import Foundation
import Testing
@testable import QuireLMDB

@Suite struct MisuseTests {
    /// A sequence smuggled out of its closure traps on use instead of reading freed memory.
    @Test func escapedSequenceTraps() async {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        await #expect(processExitsWith: .failure) { [dir = dir as String] in try useEscapedSequence(dir) }
    }

    /// A cursor used after its write transaction committed traps too.
    @Test func cursorAfterCommitTraps() async {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        await #expect(processExitsWith: .failure) { [dir = dir as String] in try useCursorAfterCommit(dir) }
    }

    /// The trapping child's environment: this process removes it, the child cannot.
    private static func directory() -> String { NSTemporaryDirectory() + "quire-misuse-\(UUID().uuidString)" }
}

private func useEscapedSequence(_ dir: String) throws {
    let env = try Environment(path: dir)
    let db = try env.openDatabase("x")
    try env.write { txn in try txn.put([1], forKey: [1], in: db) }
    nonisolated(unsafe) var escaped: EntrySequence?
    try env.read { txn in escaped = txn.entries(in: db) }
    _ = escaped!.map { $0.keyBytes }
}

private func useCursorAfterCommit(_ dir: String) throws {
    let env = try Environment(path: dir)
    let db = try env.openDatabase("x")
    nonisolated(unsafe) var escaped: Cursor?
    try env.write { txn in escaped = try txn.cursor(in: db) }
    _ = try escaped!.first()
}
