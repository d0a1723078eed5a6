import Foundation
import Quire
import QuireCodec
import QuireFetch

/// What `quire get` does, given valid options (see `GetOptions.swift`).
enum GetCommand {
    /// The collections whose records are keyed by their `id` field (NewsSchema's, the fetch's).
    static let idKeyedCollections: Set<String> = [
        NewsSchema.articles.name, NewsSchema.lists.name, StoreFetchSink.rawDocuments.name, StoreFetchSink.rejects.name,
        StoreFetchSink.budgets.name,
    ]

    static func run(_ options: GetOptions, context: CommandContext) async throws {
        let store = try OpenStore.readOnly(context.storePath, command: "get")
        defer { store.close() }
        let collection = options.collection ?? "articles"
        guard try store.storedCollections().contains(where: { $0.name == collection }) else {
            throw RuntimeError("get", "\(options.id): no such record (the store has no '\(collection)' collection)")
        }
        // Keys are strings but for collections keyed by a number (Feedzilla's categories): an id
        // that is a whole number is tried as one when no string key matches.
        let value = try store.read { snap in
            try snap.genericValue(.string(options.id), inCollectionNamed: collection)
                ?? Int64(options.id).flatMap { try snap.genericValue(.int($0), inCollectionNamed: collection) }
        }
        guard let value else { throw RuntimeError("get", "\(options.id): no such record") }
        // The record's checksum covers its value, not its key: a damaged key byte served one
        // record under another's id. A record of a collection keyed by its `id` must name this
        // one (an embedder's collection may key by another field beside an `id`).
        if idKeyedCollections.contains(collection), case .object(let fields) = value,
            case .string(let named)? = fields.first(where: { $0.key == "id" })?.value,
            !named.utf8.elementsEqual(options.id.utf8)
        {
            throw RuntimeError(
                "get", "\(options.id): the record stored under this id names itself '\(named)': a damaged key (run quire verify, restore a backup)")
        }
        switch options.format {
        case .json:
            try context.output.write(bytes: value.jsonBytes())
            try context.output.write("\n")
        case .table:
            guard case .object(let fields) = value else {
                try context.output.line(value.jsonString())
                return
            }
            let width = fields.map(\.key.count).max() ?? 0
            for field in fields {
                let name = RecordWriter.cell(field.key).padding(toLength: width, withPad: " ", startingAt: 0)
                try context.output.line(name + "  " + RecordWriter.cell(RecordWriter.text(field.value)))
            }
        }
    }
}
