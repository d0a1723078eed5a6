import Foundation
import QuireLMDB
import QuireTestSupport

/// A fresh directory for one test, removed afterwards (tests run in parallel).
func withScratchDirectory<R>(_ body: (String) throws -> R) throws -> R {
    try withTemporaryDirectory("cli-lmdb", body)
}

/// ``withScratchDirectory(_:)`` for async bodies.
func withScratchDirectory<R>(_ body: (String) async throws -> R) async throws -> R {
    try await withTemporaryDirectory("cli-lmdb", body)
}

/// A database's persistent flags and its pairs in order (duplicates included).
struct DatabaseContents: Equatable, CustomStringConvertible {
    var isDuplicateSort: Bool
    var pairs: [[UInt8]]

    var description: String { "dupsort=\(isDuplicateSort) \(pairs.count / 2) pairs" }
}

/// An environment with the cases a dump must get right, written and closed.
enum LMDBFixture {
    /// Not the QuireLMDB default (64 MiB), so a dump that imposes its own map size shows.
    static let mapSize = 5 << 20

    /// Named databases and their contents as `build` writes them.
    static let expected: [String: DatabaseContents] = {
        var alpha: [[UInt8]: [UInt8]] = [
            [0x00]: [0xFF], [0xFF]: [0x00], [0x00, 0x00, 0xFF]: [], [0x7F, 0x80]: Array(0...255),
            Array("key".utf8): Array("value".utf8),
        ]
        alpha[Array(repeating: 0xFF, count: 511)] = Array(repeating: 0x00, count: 9_000)  // overflow pages
        var many: [[UInt8]: [UInt8]] = [:]
        for i in 0..<1_500 {
            many[Array(String(format: "k%05d", i).utf8)] = Array(repeating: UInt8(truncatingIfNeeded: i), count: i % 97)
        }
        func sortedPairs(_ map: [[UInt8]: [UInt8]]) -> [[UInt8]] {
            map.sorted { $0.key.lexicographicallyPrecedes($1.key) }.flatMap { [$0.key, $0.value] }
        }
        let duplicates: [[UInt8]] = [
            [0x00], [0x00], [0x00], [0x01, 0xFF], [0x00], [0xFF, 0xFF],
            Array("b".utf8), Array("x".utf8), Array("b".utf8), Array("y".utf8),
        ]
        return [
            "alpha": DatabaseContents(isDuplicateSort: false, pairs: sortedPairs(alpha)),
            "dups": DatabaseContents(isDuplicateSort: true, pairs: duplicates),
            "empty": DatabaseContents(isDuplicateSort: false, pairs: []),
            "many": DatabaseContents(isDuplicateSort: false, pairs: sortedPairs(many)),
            "name with spaces/ü": DatabaseContents(isDuplicateSort: false, pairs: [[0x01], [0x02]]),
        ]
    }()

    /// Writes the fixture into `path`, plus plain data in the main database (which `mdb_dump -a`
    /// skips), then closes it.
    static func build(at path: String) throws {
        var options = EnvironmentOptions()
        options.mapSize = mapSize
        let environment = try Environment(path: path, options: options)
        defer { environment.close() }
        for (name, contents) in expected.sorted(by: { $0.key < $1.key }) {
            let database = try environment.openDatabase(
                name, flags: contents.isDuplicateSort ? [.create, .duplicateSort] : [.create])
            try environment.write { txn in
                for index in stride(from: 0, to: contents.pairs.count, by: 2) {
                    try txn.put(contents.pairs[index + 1], forKey: contents.pairs[index], in: database)
                }
            }
        }
        let main = try environment.openDatabase(nil, flags: [])
        try environment.write { txn in
            try txn.put(Array("plain value".utf8), forKey: Array("plain-key".utf8), in: main)
            try txn.put([1], forKey: Array("with\u{0}nul".utf8), in: main)
        }
    }

    /// Every named database of the environment at `path`, read back with QuireLMDB.
    static func contents(at path: String) throws -> [String: DatabaseContents] {
        var options = EnvironmentOptions()
        options.readOnly = true
        options.mapSize = 0
        let environment = try Environment(path: path, options: options)
        defer { environment.close() }
        var result: [String: DatabaseContents] = [:]
        for name in expected.keys {
            guard let database = try? environment.openDatabase(name, flags: []) else { continue }
            result[name] = try environment.read { txn in
                let flags = try txn.flags(of: database)
                var pairs: [[UInt8]] = []
                for entry in txn.entries(in: database) {
                    pairs.append(entry.keyBytes)
                    pairs.append(entry.valueBytes)
                }
                return DatabaseContents(isDuplicateSort: flags.contains(.duplicateSort), pairs: pairs)
            }
        }
        return result
    }
}

/// The LMDB command-line tools (lmdb-utils), when installed.
enum LMDBTools {
    static func url(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/bin", "/usr/local/bin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return URL(fileURLWithPath: candidate) }
        }
        return nil
    }

    static let available = url("mdb_dump") != nil && url("mdb_load") != nil

    /// Runs a tool and returns its status, stdout and stderr.
    static func run(_ name: String, _ arguments: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
        guard let executable = url(name) else { throw QuireRunError(description: "\(name) is not installed") }
        let scratch = NSTemporaryDirectory() + "quire-tool-\(UUID().uuidString)"
        try Data().write(to: URL(fileURLWithPath: scratch + ".out"))
        try Data().write(to: URL(fileURLWithPath: scratch + ".err"))
        defer {
            try? FileManager.default.removeItem(atPath: scratch + ".out")
            try? FileManager.default.removeItem(atPath: scratch + ".err")
        }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch + ".out"))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch + ".err"))
        let process = ChildProcess()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        let stdout = try Data(contentsOf: URL(fileURLWithPath: scratch + ".out"))
        let stderr = try String(decoding: Data(contentsOf: URL(fileURLWithPath: scratch + ".err")), as: UTF8.self)
        return (process.terminationStatus, stdout, stderr)
    }
}
