public import Foundation

/// A fresh directory for one test, removed afterwards: Swift Testing runs tests in parallel, so no
/// two tests may share a path.
///
/// - Parameters:
///   - prefix: Names the directory (`quire-<prefix>-<uuid>`), to tell leftovers apart.
///   - create: Whether to create the directory (a store path given to LMDB may also be left for
///     the store to create).
public func withTemporaryDirectory<R>(
    _ prefix: String = "test", create: Bool = true, _ body: (String) throws -> R
) throws -> R {
    let path = try makeTemporaryPath(prefix, create: create)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// ``withTemporaryDirectory(_:create:_:)`` for async bodies.
public func withTemporaryDirectory<R>(
    _ prefix: String = "test", create: Bool = true, _ body: (String) async throws -> R
) async throws -> R {
    let path = try makeTemporaryPath(prefix, create: create)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// ``withTemporaryDirectory(_:create:_:)`` handing the directory over as a file URL.
public func withTemporaryDirectoryURL<R>(_ prefix: String = "test", _ body: (URL) throws -> R) throws -> R {
    try withTemporaryDirectory(prefix) { path in try body(URL(fileURLWithPath: path, isDirectory: true)) }
}

/// ``withTemporaryDirectoryURL(_:_:)`` for async bodies.
public func withTemporaryDirectoryURL<R>(
    _ prefix: String = "test", _ body: (URL) async throws -> R
) async throws -> R {
    try await withTemporaryDirectory(prefix) { path in try await body(URL(fileURLWithPath: path, isDirectory: true)) }
}

private func makeTemporaryPath(_ prefix: String, create: Bool) throws -> String {
    let path = NSTemporaryDirectory() + "quire-\(prefix)-\(UUID().uuidString)"
    if create { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    return path
}
