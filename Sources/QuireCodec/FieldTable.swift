/// Interned field names: a record carries small field ids instead of names.
///
/// An id is the index of its name in ``names``. The table is append-only: an id, once given,
/// always means the same name, so a record written with an older table stays readable with a newer
/// one. A reader whose table is older than a record gets ``CompactDecodingError/Kind/unknownFieldID(_:)``
/// (never a silently wrong name) and can reload its table and retry.
public struct FieldTable: Sendable, Hashable {
    /// The names, in id order.
    public private(set) var names: [String]
    private var ids: [String: UInt32]

    /// Creates a table from names in id order. A repeated name keeps its first id.
    public init(names: [String] = []) {
        self.names = names
        var ids: [String: UInt32] = [:]
        ids.reserveCapacity(names.count)
        for (index, name) in names.enumerated() where ids[name] == nil {
            ids[name] = UInt32(index)
        }
        self.ids = ids
    }

    /// The number of interned names.
    public var count: Int { names.count }

    /// The id of `name`, or nil when it was never interned.
    public func id(of name: String) -> UInt32? { ids[name] }

    /// The name for `id`, or nil when the id is not in this table.
    public func name(of id: UInt32) -> String? {
        Int(id) < names.count ? names[Int(id)] : nil
    }

    /// Returns the id of `name`, appending it when it is new.
    @discardableResult
    public mutating func intern(_ name: String) -> UInt32 {
        if let id = ids[name] { return id }
        let id = UInt32(names.count)
        names.append(name)
        ids[name] = id
        return id
    }

    public static func == (lhs: FieldTable, rhs: FieldTable) -> Bool { lhs.names == rhs.names }
    public func hash(into hasher: inout Hasher) { hasher.combine(names) }
}
