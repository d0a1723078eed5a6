import Foundation

/// A fresh directory for one test, removed afterwards (tests run in parallel).
func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
    let path = NSTemporaryDirectory() + "quire-lmdb-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
func string(_ b: UnsafeRawBufferPointer) -> String { String(decoding: b, as: UTF8.self) }
