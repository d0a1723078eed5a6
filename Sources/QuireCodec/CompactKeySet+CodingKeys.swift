extension CompactKeySet {
    /// A key set declared by a model's `CodingKeys`: one source of truth for the names and the
    /// positions, so a field added to the model cannot drift from its compact key.
    ///
    /// The keys' integer raw values must be their positions (`0, 1, 2, …` in declaration order,
    /// which an `Int`-backed `enum CodingKeys: Int, CodingKey, CaseIterable` gives; the
    /// synthesized `stringValue` is the case name).
    public convenience init<Key: CodingKey & CaseIterable & RawRepresentable>(_ keys: Key.Type, interned: Set<Key> = [])
    where Key.RawValue == Int {
        let all = Array(keys.allCases)
        for (position, key) in all.enumerated() {
            precondition(key.rawValue == position, "CompactKeySet: \(Key.self).\(key.stringValue) is not at its raw value")
        }
        self.init(all.map(\.stringValue), interned: Set(interned.map(\.stringValue)))
    }
}

extension CompactKey {
    /// The compact key of a coding key declared as in ``CompactKeySet/init(_:interned:)-(Key.Type,_)``.
    @inlinable
    public init<Key: CodingKey & RawRepresentable>(_ key: Key) where Key.RawValue == Int {
        self.init(key.rawValue)
    }
}
