import Foundation
import Quire
import QuireCodec
import QuireLMDB  // --format mdb is an LMDB tool: it reads the environment itself

/// What `quire dump` does, given valid options (see `DumpOptions.swift`).
enum DumpCommand {
    static func run(_ options: DumpOptions, context: CommandContext) async throws {
        if options.format == .mdb {
            // A Quire store is opened as one first, which checks its format and field table (the
            // dump copies bytes); any other LMDB environment is dumped as it is, like mdb_dump.
            let probe = try ReadOnlyStore.open(context.storePath, command: "dump")
            let isQuireStore = (try? probe.openDatabase("_meta", flags: [])) != nil
            probe.close()
            var collections: [String] = []
            if isQuireStore {
                let store = try OpenStore.readOnly(context.storePath, command: "dump")
                defer { store.close() }
                collections = try store.storedCollections().map(\.name)
            }
            let env = try ReadOnlyStore.open(context.storePath, command: "dump")
            defer { env.close() }
            try writeMDBDump(environment: env, to: context.output, collections: collections)
            return
        }
        let store = try OpenStore.readOnly(context.storePath, command: "dump")
        defer { store.close() }
        if options.all {
            try WholeStoreDump.run(store, context: context)
            return
        }
        let names = try store.storedCollections().map(\.name)
        let collection = options.collection ?? "articles"
        guard names.contains(collection) else {
            if options.collection == nil { return }  // an empty store: nothing to dump
            throw RuntimeError("dump", "no collection named '\(collection)' (the store has: \(names.joined(separator: ", ")))")
        }
        let writer = RecordWriter(format: options.format, output: context.output, articleColumns: collection == "articles")
        try writer.begin()
        try store.read { snap throws in
            if try DumpCommand.canWriteJSONDirectly(snap, collection, options) {
                try DumpCommand.walkJSON(snap, collection, options) { json in
                    try writer.write(json: json)
                    return !context.isInterrupted
                }
            } else if options.format == .table, writer.articleColumns, options.section == nil, options.since == nil,
                options.until == nil
            {
                // The whole collection as a table: only a row's fields are read, on every core.
                var remaining = options.limit ?? .max
                guard remaining > 0 else { return }
                try snap.forEachFieldValues(inCollectionNamed: collection, paths: RecordWriter.tableFields) { key, values in
                    try writer.write(key: key, tableFields: values)
                    remaining -= 1
                    return remaining > 0 && !context.isInterrupted
                }
            } else {
                try DumpCommand.walk(snap, collection, options) { key, value in
                    try writer.write(key: key, value: value)
                    return !context.isInterrupted
                }
            }
        }
        try writer.end()
        if context.isInterrupted { throw InterruptedError(command: "dump") }
    }

    /// Whether the records can go out as JSON written straight from their bytes: JSON formats,
    /// and no section filter that needs each record's value (one without a section index).
    static func canWriteJSONDirectly(_ snap: borrowing Snapshot, _ collection: String, _ options: DumpOptions) throws -> Bool {
        guard options.format == .jsonl || options.format == .json else { return false }
        guard options.section != nil else { return true }
        let definition = try snap.definition(ofCollectionNamed: collection)
        guard sectionIndex(of: definition) != nil else { return false }
        // With both a date range and a section, the date index walks and each record's section is checked.
        return options.since == nil && options.until == nil
    }

    /// ``walk(_:_:_:_:)`` for the JSON formats: each record's JSON made from its bytes, by the
    /// date index for a date range, by the section index for a section, else in key order.
    static func walkJSON(
        _ snap: borrowing Snapshot, _ collection: String, _ options: DumpOptions,
        _ body: (UnsafeBufferPointer<UInt8>) throws -> Bool
    ) throws {
        let definition = try snap.definition(ofCollectionNamed: collection)
        var remaining = options.limit ?? .max
        guard remaining > 0 else { return }
        func emit(_ json: UnsafeBufferPointer<UInt8>) throws -> Bool {
            remaining -= 1
            return try body(json) && remaining > 0
        }
        if options.since != nil || options.until != nil {
            guard let index = definition.indexes.first(where: { $0.kind == .date }) else {
                throw RuntimeError("dump", "collection '\(collection)' has no date index for --since/--until")
            }
            try snap.forEachJSONBytes(inCollectionNamed: collection, byIndex: index.name, range: dateRange(options)) { _, json in
                try emit(json)
            }
        } else if let section = options.section,
            let index = sectionIndex(of: definition)
        {
            try snap.forEachJSONBytes(inCollectionNamed: collection, byIndex: index.name, range: .exactly(.string(section))) { _, json in
                try emit(json)
            }
        } else {
            try snap.forEachJSONBytes(inCollectionNamed: collection) { _, json in try emit(json) }
        }
    }

    /// The collection's index of its records' `section` (exact string values), if it has one.
    static func sectionIndex(of definition: CollectionDefinition) -> IndexDefinition? {
        definition.indexes.first { $0.field == "section" && $0.kind == .string }
    }

    /// The date index range of `--since` and `--until` (a whole day: before the next midnight).
    static func dateRange(_ options: DumpOptions) -> StoreKeyRange {
        let lower = options.since.map { StoreKeyRange.Bound.inclusive(.date($0)) }
        let upper = options.until.map { StoreKeyRange.Bound.exclusive(.date($0.addingTimeInterval(86_400))) }
        return StoreKeyRange(lower: lower, upper: upper)
    }

    /// Visits the records the filters select: by date index when a date is given, else by
    /// section index when a section is, else in key order.
    static func walk(
        _ snap: borrowing Snapshot, _ collection: String, _ options: DumpOptions,
        _ body: (StoreKey, CompactValue) throws -> Bool
    ) throws {
        let definition = try snap.definition(ofCollectionNamed: collection)
        var remaining = options.limit ?? .max
        guard remaining > 0 else { return }
        func emit(_ key: StoreKey, _ value: CompactValue) throws -> Bool {
            if let section = options.section, value["section"] != .string(section) { return true }
            remaining -= 1
            return try body(key, value) && remaining > 0
        }
        if options.since != nil || options.until != nil {
            guard let index = definition.indexes.first(where: { $0.kind == .date }) else {
                throw RuntimeError("dump", "collection '\(collection)' has no date index for --since/--until")
            }
            // A section with an index is checked there (one lookup), not on each decoded record:
            // `--section X --since D` decoded every record since D (7.9 s at 1M articles for a
            // section with none).
            let section = options.section.flatMap { name in sectionIndex(of: definition).map { (name: name, index: $0.name) } }
            if let section {
                var any = false
                try snap.forEachIndexEntry(collection, section.index, range: .exactly(.string(section.name))) { _, _ in
                    any = true
                    return false
                }
                guard any else { return }
            }
            try snap.forEachIndexEntry(collection, index.name, range: dateRange(options)) { _, key in
                if let section,
                    try !snap.indexHasEntry(collection, section.index, indexKey: .string(section.name), key: key)
                {
                    return true
                }
                guard let value = try snap.genericValue(key, inCollectionNamed: collection) else { return true }
                return try emit(key, value)
            }
        } else if let section = options.section,
            let index = sectionIndex(of: definition)
        {
            try snap.forEachIndexEntry(collection, index.name, range: .exactly(.string(section))) { _, key in
                guard let value = try snap.genericValue(key, inCollectionNamed: collection) else { return true }
                return try emit(key, value)
            }
        } else {
            // No filter, or a section filter without an index: scan in key order.
            var scanned = 0
            var sawSection = false
            try snap.forEachGeneric(inCollectionNamed: collection) { key, value in
                scanned += 1
                sawSection = sawSection || value["section"] != nil
                return try emit(key, value)
            }
            // A collection whose records have no section matches none: said, not left silent.
            if options.section != nil, scanned > 0, !sawSection {
                Diagnostics.write("quire: dump: no record of '\(collection)' has a section, so --section matches none\n")
            }
        }
    }
}
