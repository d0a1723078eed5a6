import Foundation
import Quire
import QuireCodec

/// `quire dump --all`: every collection and relation as JSON Lines that `quire load` reads back
/// into an identical store.
///
/// Sections, each opened by a header line: `{"@quire":"collection","name":"lists"}` followed by
/// the collection's records as `dump` writes them, or `{"@quire":"relation","name":"list-articles"}`
/// followed by `{"owner":"…","member":"…"}` lines. Collections come in name order, then the
/// relations, then `articles` last: `load` hands the rest of its input to the fast article
/// loader once it reaches that header.
enum WholeStoreDump {
    /// The header's first bytes, how `load` recognises a whole-store dump.
    static let headerPrefix = #"{"@quire":"#

    static func header(_ kind: String, _ name: String) -> [UInt8] {
        var out = Array(headerPrefix.utf8)
        out += CompactValue.string(kind).jsonBytes()
        out += Array(#","name":"#.utf8)
        out += CompactValue.string(name).jsonBytes()
        out.append(UInt8(ascii: "}"))
        return out
    }

    static func run(_ store: Store, context: CommandContext) throws {
        let output = context.output
        let names = try store.storedCollections().map(\.name).sorted()
        let relations = try store.storedRelations().sorted()
        try store.read { snap throws in
            for name in names where name != "articles" { try writeCollection(name, snap, context) }
            for name in relations {
                try output.write(bytes: header("relation", name))
                try output.write("\n")
                try snap.forEachRelationEntry(named: name) { owner, member in
                    try output.write(bytes: try relationLine(owner, member, name))
                    try output.write("\n")
                    return !context.isInterrupted
                }
            }
            if names.contains("articles") { try writeCollection("articles", snap, context) }
        }
        if context.isInterrupted { throw InterruptedError(command: "dump") }
    }

    /// A collection's section: its header, then its records as `dump` writes them.
    private static func writeCollection(_ name: String, _ snap: borrowing Snapshot, _ context: CommandContext) throws {
        let output = context.output
        try output.write(bytes: header("collection", name))
        try output.write("\n")
        try snap.forEachJSONBytes(inCollectionNamed: name) { _, json in
            try output.write(bytes: json)
            try output.write("\n")
            return !context.isInterrupted
        }
    }

    /// `{"owner":"…","member":"…"}`; relation keys are text (list ids, query tags, article ids).
    static func relationLine(_ owner: StoreKey, _ member: StoreKey, _ relation: String) throws -> [UInt8] {
        func text(_ key: StoreKey) throws -> CompactValue {
            guard let string = String(validating: key.bytes, as: UTF8.self) else {
                throw RuntimeError("dump", "relation '\(relation)' has a key that is not text; --all cannot write it")
            }
            return .string(string)
        }
        return CompactValue.object([.init(key: "owner", value: try text(owner)), .init(key: "member", value: try text(member))])
            .jsonBytes()
    }
}
