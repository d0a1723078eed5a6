/// One key as etcd stores it: bytes, and the revisions that say when it was written.
public struct EtcdKeyValue: Sendable, Hashable {
    /// The key's bytes.
    public var key: [UInt8]
    /// The value's bytes.
    public var value: [UInt8]
    /// The revision that created the key (0 when it does not exist).
    public var createRevision: Int64
    /// The revision of the last write to the key.
    public var modRevision: Int64
    /// How many times the key was written since it was created.
    public var version: Int64
    /// The lease the key is attached to (0: none).
    public var lease: Int64

    /// Creates a key-value.
    public init(
        key: [UInt8], value: [UInt8], createRevision: Int64 = 0, modRevision: Int64 = 0, version: Int64 = 0,
        lease: Int64 = 0
    ) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.version = version
        self.lease = lease
    }

    /// The key as text (keys Quire writes are UTF-8).
    public var keyText: String { String(decoding: key, as: UTF8.self) }
}

/// The answer to a range request.
public struct EtcdRangeResult: Sendable, Hashable {
    /// The keys found, in the requested order.
    public var kvs: [EtcdKeyValue]
    /// Whether more keys matched than the limit let through.
    public var more: Bool
    /// The store's revision when the range was read.
    public var revision: Int64
    /// The etcd cluster that answered (its header's `cluster_id`; 0 when not given): a wiped and
    /// recreated etcd, or another one, has another.
    public var clusterID: UInt64 = 0
}

/// A range of keys: one key, or `[key, end)`.
public struct EtcdKeyRange: Sendable, Hashable {
    /// The first key.
    public var key: [UInt8]
    /// The key after the last one; `nil` for the single key `key`.
    public var end: [UInt8]?

    /// The single key `key`.
    public static func key(_ key: String) -> EtcdKeyRange { EtcdKeyRange(key: Array(key.utf8), end: nil) }

    /// Every key that starts with `prefix`.
    public static func prefix(_ prefix: String) -> EtcdKeyRange {
        var end = Array(prefix.utf8)
        // The prefix's successor: drop trailing 0xFF bytes, then add one to the last byte.
        while let last = end.last, last == 0xFF { end.removeLast() }
        if end.isEmpty { return EtcdKeyRange(key: Array(prefix.utf8), end: [0]) }
        end[end.count - 1] += 1
        return EtcdKeyRange(key: Array(prefix.utf8), end: end)
    }
}

/// The order of a range's answer.
public enum EtcdSortTarget: String, Sendable {
    /// By key (etcd's default).
    case key = "KEY"
    /// By the revision of the last write.
    case modRevision = "MOD"
}

/// A condition of a transaction.
public struct EtcdCompare: Sendable, Hashable {
    /// What to compare.
    public enum Target: Sendable, Hashable {
        /// The key's last write revision (0 when absent).
        case modRevision(Int64)
        /// The key's creation revision (0 when absent).
        case createRevision(Int64)
        /// The key's value bytes (false when absent).
        case value([UInt8])
    }

    /// How to compare.
    public enum Relation: String, Sendable {
        case equal = "EQUAL", notEqual = "NOT_EQUAL", greater = "GREATER", less = "LESS"
    }

    /// The key compared.
    public var key: [UInt8]
    /// The relation that must hold.
    public var relation: Relation
    /// The target and the value it is compared with.
    public var target: Target

    /// Creates a condition on `key`.
    public init(_ key: String, _ relation: Relation, _ target: Target) {
        self.key = Array(key.utf8)
        self.relation = relation
        self.target = target
    }
}

/// One operation of a transaction.
public enum EtcdOperation: Sendable, Hashable {
    /// Writes `value` at `key`, attached to `lease` when not 0.
    case put(key: [UInt8], value: [UInt8], lease: Int64)
    /// Reads a range.
    case range(EtcdKeyRange)
    /// Deletes a range.
    case delete(EtcdKeyRange)

    /// Writes `value` at `key`.
    public static func put(_ key: String, _ value: [UInt8], lease: Int64 = 0) -> EtcdOperation {
        .put(key: Array(key.utf8), value: value, lease: lease)
    }

    /// The bytes the operation carries (etcd limits a request's size).
    var payloadBytes: Int {
        switch self {
        case .put(let key, let value, _): key.count + value.count
        case .range(let range), .delete(let range): range.key.count + (range.end?.count ?? 0)
        }
    }
}

/// The answer to a transaction.
public struct EtcdTxnResult: Sendable, Hashable {
    /// Whether every comparison held (the success branch ran).
    public var succeeded: Bool
    /// The revision after the transaction (its own when it wrote).
    public var revision: Int64
    /// The answers of the branch's range operations, in order (nil for other operations).
    public var ranges: [EtcdRangeResult?]
}

/// A granted lease.
public struct EtcdLease: Sendable, Hashable {
    /// The lease's id.
    public var id: Int64
    /// Its time to live, in seconds, as granted.
    public var ttl: Int64
}
