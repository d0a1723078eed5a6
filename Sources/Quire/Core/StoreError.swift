internal import QuireLMDB
import QuireCodec

/// An error of the store layer, with what went wrong and where.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is: a struct over a private enum (as swift-nio's error codes),
    /// so new codes do not break a caller's `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Wrapped: Sendable, Hashable {
            case newerFormat, corrupted, invalidKey, keyCollision, codec, unknownCollection, definitionMismatch
            case readOnly, storage, mapFull, cancelled, closed, alreadyOpen
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
        /// The memory map could not grow further (the disk or the address space is exhausted);
        /// nothing of the failed write was committed.
        public static let mapFull = Code(.mapFull)
        /// The task was cancelled before the operation committed.
        public static let cancelled = Code(.cancelled)
        /// The store was closed (``Store/close()``): open it again to use it.
        public static let closed = Code(.closed)
        /// The store is open in this process already (perhaps under another path): share that
        /// instance; LMDB must not open one file twice in a process.
        public static let alreadyOpen = Code(.alreadyOpen)

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
            case .mapFull: "map full"
            case .cancelled: "cancelled"
            case .closed: "closed"
            case .alreadyOpen: "already open"
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

    /// Whether LMDB itself found one of the file's pages damaged (not a record or an index
    /// entry failing Quire's checks): such a file may hold other pages that LMDB follows
    /// blindly, which fault instead of failing with an error.
    public var isDamagedPage: Bool { code == .corrupted && underlying is LMDBError }

    /// A damaged page met by LMDB, as a store error naming the store.
    static func corruption(_ error: LMDBError, path: String, context: String? = nil) -> StoreError {
        let whereText = context.map { " (\($0))" } ?? ""
        // A file that is not LMDB's at all (a text file, SQLite, a pipe) is more likely not a
        // store than a damaged one: say both, without the advice for damaged stores.
        if error == .invalid {
            return StoreError(.corrupted, "\(path): not a store, or a store damaged at its start\(whereText)", underlying: error)
        }
        return StoreError(.corrupted, "\(path): \(corruptionMessage)\(whereText)", underlying: error)
    }

    /// Wraps any error from below as a store error, keeping LMDB errors' context: damaged pages
    /// are `.corrupted`, a closed or second open `.closed` / `.alreadyOpen`, other LMDB and I/O failures `.storage`, codec failures `.codec`.
    static func wrap(_ error: any Error, _ what: @autoclosure () -> String) -> StoreError {
        switch error {
        case let store as StoreError: return store
        case let lmdb as LMDBError where lmdb.isCorruption: return corruption(lmdb, path: lmdb.path ?? what())
        case let lmdb as LMDBError where lmdb == .mapFull: return StoreError(.mapFull, what(), underlying: lmdb)
        case let lmdb as LMDBError where lmdb == .closed: return StoreError(.closed, what(), underlying: lmdb)
        case let lmdb as LMDBError where lmdb == .alreadyOpen: return StoreError(.alreadyOpen, what(), underlying: lmdb)
        // A copy stopped by its `isCancelled`: a stop, not a storage failure.
        case let lmdb as LMDBError where lmdb == .cancelled: return StoreError(.cancelled, what(), underlying: lmdb)
        case let lmdb as LMDBError: return StoreError(.storage, what(), underlying: lmdb)
        case let decoding as CompactDecodingError: return StoreError(.codec, what(), underlying: decoding)
        case let coding as DecodingError: return StoreError(.codec, what(), underlying: coding)
        case let coding as EncodingError: return StoreError(.codec, what(), underlying: coding)
        case is CancellationError: return StoreError(.cancelled, what(), underlying: CancellationError())
        default: return StoreError(.storage, what(), underlying: error)
        }
    }

    /// Runs `body` at the store's boundary: whatever it throws comes out as a `StoreError`, so
    /// every public operation has one typed error.
    static func boundary<R>(_ what: @autoclosure () -> String, _ body: () throws -> R) throws(StoreError) -> R {
        do {
            return try body()
        } catch {
            throw wrap(error, what())
        }
    }

    /// ``boundary(_:_:)`` for asynchronous work.
    static func boundary<R>(
        _ what: @autoclosure () -> String, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
    ) async throws(StoreError) -> R {
        do {
            return try await body()
        } catch {
            throw wrap(error, what())
        }
    }
}

// `catch StoreError.corrupted` reads as well as `catch StoreError.Code.corrupted`.
extension StoreError {
    /// See ``Code-swift.struct/newerFormat``.
    public static var newerFormat: Code { .newerFormat }
    /// See ``Code-swift.struct/corrupted``.
    public static var corrupted: Code { .corrupted }
    /// See ``Code-swift.struct/invalidKey``.
    public static var invalidKey: Code { .invalidKey }
    /// See ``Code-swift.struct/keyCollision``.
    public static var keyCollision: Code { .keyCollision }
    /// See ``Code-swift.struct/codec``.
    public static var codec: Code { .codec }
    /// See ``Code-swift.struct/unknownCollection``.
    public static var unknownCollection: Code { .unknownCollection }
    /// See ``Code-swift.struct/definitionMismatch``.
    public static var definitionMismatch: Code { .definitionMismatch }
    /// See ``Code-swift.struct/readOnly``.
    public static var readOnly: Code { .readOnly }
    /// See ``Code-swift.struct/storage``.
    public static var storage: Code { .storage }
    /// See ``Code-swift.struct/mapFull``.
    public static var mapFull: Code { .mapFull }
    /// See ``Code-swift.struct/cancelled``.
    public static var cancelled: Code { .cancelled }
    /// See ``Code-swift.struct/closed``.
    public static var closed: Code { .closed }
    /// See ``Code-swift.struct/alreadyOpen``.
    public static var alreadyOpen: Code { .alreadyOpen }
}
