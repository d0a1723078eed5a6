internal import QuireLMDB

/// An error of the store layer, with what went wrong and where.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is: a struct over a private enum (as swift-nio's error codes),
    /// so new codes do not break a caller's `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Wrapped: Sendable, Hashable {
            case newerFormat, corrupted, invalidKey, keyCollision, codec, unknownCollection, definitionMismatch
            case readOnly, storage
        }

        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// The store was written by a newer format than this library reads.
        public static let newerFormat = Code(.newerFormat)
        /// The store's file, metadata, field table or a record is damaged.
        public static let corrupted = Code(.corrupted)
        /// A key is empty.
        public static let invalidKey = Code(.invalidKey)
        /// A key over 510 bytes has the same stored form (prefix and hash) as another key the
        /// store already holds; nothing was written for it (see docs/FORMAT.md, "Store keys").
        public static let keyCollision = Code(.keyCollision)
        /// A record could not be encoded or decoded.
        public static let codec = Code(.codec)
        /// The collection (or relation, or index) is not declared in this store.
        public static let unknownCollection = Code(.unknownCollection)
        /// A declaration differs from the registered one (indexes, compression, value type).
        public static let definitionMismatch = Code(.definitionMismatch)
        /// The store is read-only.
        public static let readOnly = Code(.readOnly)
        /// An I/O or LMDB operation failed (see `underlying`; a full disk shows up here).
        public static let storage = Code(.storage)

        public var description: String {
            switch wrapped {
            case .newerFormat: "newer format"
            case .corrupted: "corrupted"
            case .invalidKey: "invalid key"
            case .keyCollision: "key collision"
            case .codec: "codec"
            case .unknownCollection: "unknown collection"
            case .definitionMismatch: "definition mismatch"
            case .readOnly: "read-only"
            case .storage: "storage"
            }
        }

        /// Lets `catch StoreError.Code.storage` (or `case .storage` on an error) match a store error.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? StoreError)?.code == code
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong, naming the store, collection or key.
    public let message: String
    /// The error that caused this one, if any.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
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
