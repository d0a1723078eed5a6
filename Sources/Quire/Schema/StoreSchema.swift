/// The collections and relations of a store, declared together so that a store opened with them
/// (``Store/init(path:schema:options:)``) can be written to at once.
///
/// ```swift
/// let schema = StoreSchema(notes, bookmarks).relations(tagged)
/// let store = try Store(path: "app.db", schema: schema)
/// ```
public struct StoreSchema: Sendable {
    fileprivate var declarations: [@Sendable (Store) throws -> Void] = []
    /// The names declared, in order (collections and relations).
    public private(set) var names: [String] = []

    /// An empty schema.
    public init() {}

    /// A schema of collections (of any value types).
    public init<each V>(_ collections: repeat StoreCollection<each V>) {
        for collection in repeat each collections { add(collection) }
    }

    /// This schema plus `collection`.
    public func collection<V>(_ collection: StoreCollection<V>) -> StoreSchema {
        var copy = self
        copy.add(collection)
        return copy
    }

    /// This schema plus `relations`.
    public func relations(_ relations: StoreRelation...) -> StoreSchema {
        var copy = self
        for relation in relations {
            copy.declarations.append { store in try store.register(relation) }
            copy.names.append(relation.name)
        }
        return copy
    }

    /// This schema plus everything `other` declares.
    public func merging(_ other: StoreSchema) -> StoreSchema {
        var copy = self
        copy.declarations += other.declarations
        copy.names += other.names
        return copy
    }

    private mutating func add<V>(_ collection: StoreCollection<V>) {
        declarations.append { store in try store.register(collection) }
        names.append(collection.name)
    }

    /// Declares everything in `store`, in order (what opening a store with the schema does).
    public func declare(in store: Store) throws(StoreError) {
        try StoreError.boundary("\(store.path): declaring the schema") {
            for declaration in declarations { try declaration(store) }
        }
    }
}

extension Store {
    /// Opens (creating unless read-only) the store at `path` and declares `schema` in it, so
    /// every collection and relation is ready before the first read or write.
    ///
    /// - Throws: what ``init(path:options:)`` and ``register(_:)-(StoreCollection<V>)`` throw.
    public convenience init(path: String, schema: StoreSchema, options: StoreOptions = StoreOptions()) throws(StoreError) {
        try self.init(path: path, options: options)
        do {
            try schema.declare(in: self)
        } catch {
            close()
            throw error
        }
    }
}
