import Foundation

extension Store {
    /// Runs `body` with a new, empty store in a temporary directory, then closes the store and
    /// deletes the directory: for tests and throwaway work.
    ///
    /// - Parameters:
    ///   - schema: What to declare in the store before `body` runs.
    ///   - options: How to open it (`readOnly` is ignored: the store is new).
    ///   - body: The work, given the open store.
    public static func withTemporary<R>(
        schema: StoreSchema = StoreSchema(), options: StoreOptions = StoreOptions(), _ body: (Store) async throws -> R
    ) async throws -> R {
        let path = NSTemporaryDirectory() + "quire-temporary-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var writable = options
        writable.readOnly = false
        let store = try Store(path: path, schema: schema, options: writable)
        defer { store.close() }
        return try await body(store)
    }
}
