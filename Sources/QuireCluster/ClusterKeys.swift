/// Where a cluster keeps its state in etcd: every key under one prefix, so several clusters
/// (or tests) can share one etcd.
///
/// | key | value |
/// |---|---|
/// | `<prefix>log/<source>/<version>/<part>` | a compressed ``LogEntry`` (one page, or part of one) |
/// | `<prefix>checkpoint/<source>` | the source's checkpoint after its last committed page |
/// | `<prefix>owner/<source>` | the member that fetches the source, on that member's lease |
/// | `<prefix>member/<id>` | a ``MemberStatus`` (applied revision, snapshot URL), on the member's lease |
/// | `<prefix>compacted` | the revision up to which the log was deleted (decimal text) |
public struct ClusterKeys: Sendable, Hashable {
    /// The prefix of every key (`/quire/`).
    public let prefix: String

    /// The keys of the cluster under `prefix`; a trailing `/` is added when missing.
    public init(prefix: String = "/quire/") {
        self.prefix = prefix.hasSuffix("/") ? prefix : prefix + "/"
    }

    /// Every log entry.
    public var log: EtcdKeyRange { .prefix(prefix + "log/") }

    /// The log's epoch: a random id the first member writes into a new (or wiped) etcd, kept by
    /// every replica, so that a store applied from an etcd whose data was wiped since is told
    /// apart even when the new etcd has the old one's cluster id (the same names and URLs).
    public var epoch: String { prefix + "epoch" }

    /// The key of part `part` of the page that takes `source`'s checkpoint to `version`.
    public func logEntry(source: String, version: Int64, part: Int) -> String {
        prefix + "log/" + source + "/" + Self.padded(version, width: 12) + "/" + Self.padded(Int64(part), width: 3)
    }

    /// The checkpoint of `source`.
    public func checkpoint(_ source: String) -> String { prefix + "checkpoint/" + source }

    /// The owner of `source`.
    public func owner(_ source: String) -> String { prefix + "owner/" + source }

    /// Every member's status.
    public var members: EtcdKeyRange { .prefix(prefix + "member/") }

    /// The status of member `id`.
    public func member(_ id: String) -> String { prefix + "member/" + id }

    /// The compaction floor.
    public var compacted: String { prefix + "compacted" }

    /// The `AppliedPage` id of the page a log entry's key names (`<source> <12 digits>`) when
    /// the key is the page's first part, else nil.
    func appliedPageID(ofFirstPart key: [UInt8]) -> String? {
        guard let source = logEntrySource(key), key.suffix(4) == Array("/000".utf8) else { return nil }
        return source + " " + String(decoding: key.suffix(17).dropFirst().prefix(12), as: UTF8.self)
    }

    /// The source a log entry's key names (`<prefix>log/<source>/<12 digits>/<3 digits>`), or
    /// nil when the key is not of that form.
    func logEntrySource(_ key: [UInt8]) -> String? {
        let head = Array((prefix + "log/").utf8)
        guard key.count > head.count + 17, key.starts(with: head) else { return nil }
        let tail = key.suffix(17)  // "/" 12 digits "/" 3 digits
        let isDigit = { (byte: UInt8) in byte >= 0x30 && byte <= 0x39 }
        guard tail.first == 0x2F, tail.dropFirst(13).first == 0x2F, tail.dropFirst().prefix(12).allSatisfy(isDigit),
            tail.suffix(3).allSatisfy(isDigit)
        else { return nil }
        return String(decoding: key[head.count..<(key.count - 17)], as: UTF8.self)
    }

    /// Zero-padded decimal, so keys sort as numbers.
    static func padded(_ value: Int64, width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
