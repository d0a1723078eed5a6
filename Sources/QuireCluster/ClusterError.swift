/// A cluster operation that failed for a reason other than etcd being unreachable.
public struct ClusterError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// Another fetcher committed the source's checkpoint since this one read it, or this
        /// member no longer owns the source: the page was not committed (by anyone twice).
        case checkpointMoved
        /// A page is larger than one etcd transaction can carry, even split.
        case pageTooLarge
        /// A log entry could not be decoded.
        case corruptLogEntry
        /// The member's applied revision lies below the log's compaction floor and no peer
        /// offered a snapshot.
        case behindCompaction
        /// A snapshot from a peer could not be installed.
        case bootstrapFailed
        /// The store is not a replica of this cluster's log: it applied another etcd cluster's
        /// or another prefix's, etcd's data was replaced since, or it holds records of its own.
        case foreignStore
        /// A live node already runs under this member id.
        case memberInUse
        /// Another node runs on this store path (or its lock file cannot be taken).
        case storeInUse
        /// The prefix lies inside another cluster's log range on the same etcd, or another
        /// cluster's lies inside this one's: the outer cluster's compaction deletes every key
        /// in its log range, the inner cluster's too.
        case nestedPrefix

        public var description: String {
            switch self {
            case .checkpointMoved: "checkpoint moved"
            case .pageTooLarge: "page too large"
            case .corruptLogEntry: "corrupt log entry"
            case .behindCompaction: "behind the log compaction"
            case .bootstrapFailed: "bootstrap failed"
            case .foreignStore: "not this cluster's replica"
            case .memberInUse: "member id in use"
            case .storeInUse: "store in use"
            case .nestedPrefix: "prefix nested in another cluster's log"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// The details.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
