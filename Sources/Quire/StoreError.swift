package import QuireLMDB

/// An error of the store layer, with what went wrong and where.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: Sendable, Hashable {
        /// The store was written by a newer format than this library reads.
        case newerFormat
        /// The store's metadata or field table is damaged.
        case corrupted
        /// A key is empty.
        case invalidKey
        /// A key over 510 bytes has the same stored form (prefix and hash) as another key the
        /// store already holds; nothing was written for it (see docs/FORMAT.md, "Store keys").
        case keyCollision
        /// A record could not be encoded or decoded.
        case codec
        /// The collection is not declared in this store.
        case unknownCollection
        /// A collection was reopened with a different definition.
        case definitionMismatch
        /// The store is read-only.
        case readOnly
        /// An LMDB operation failed (see `underlying`).
        case storage
    }

    public let code: Code
    public let message: String
    /// The error that caused this one, if any.
    public let underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        if let underlying { return "\(message): \(underlying)" }
        return message
    }

    /// The words every damaged-page error carries.
    public static let corruptionMessage = "the store is corrupted; run quire verify"

    /// A damaged page met by LMDB, as a store error naming the store.
    static func corrupted(_ error: LMDBError, path: String, context: String? = nil) -> StoreError {
        let whereText = context.map { " (\($0))" } ?? ""
        return StoreError(.corrupted, "\(path): \(corruptionMessage)\(whereText)", underlying: error)
    }

    /// Wraps any error from below as a store error, keeping LMDB errors' context.
    static func wrap(_ error: any Error, _ what: String) -> any Error {
        if error is StoreError { return error }
        if let lmdb = error as? LMDBError, lmdb.isCorruption {
            return corrupted(lmdb, path: lmdb.path ?? what)
        }
        if let lmdb = error as? LMDBError { return StoreError(.storage, what, underlying: lmdb) }
        return error
    }
}
