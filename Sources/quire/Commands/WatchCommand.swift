import Foundation
import Quire
import QuireNews
import QuireServe

/// What `quire watch` does, given valid options (see `WatchOptions.swift`).
enum WatchCommand {
    static func run(_ options: WatchOptions, context: CommandContext) async throws {
        let store = try OpenStore.readOnly(context.storePath, command: "watch")
        defer { store.close() }
        // Past the newest commit, nothing shows until the store gets there: say so, not nothing.
        if let since = options.since, let last = try? store.lastChangeSequence(), since > last {
            Diagnostics.write("quire: watch: the newest commit is \(last); --since \(since) shows commits after \(since) only\n")
        }
        // A store replaced under the watch (a cluster member installing a peer's snapshot swaps
        // its directory) has another change feed: stop and say so rather than follow the old file.
        let dataFile = context.storePath + "/data.mdb"
        let opened = FileIdentity(dataFile)
        let replaced = { @Sendable in FileIdentity(dataFile) != opened }
        let out = context.output
        let descriptor = out.fileDescriptor
        let readerGone = { @Sendable in OutputWriter.readerHasGone(descriptor) }
        let feed = (options.since.map { store.changes(since: $0) } ?? store.changes()).stopping {
            InterruptFlag.isRaised || replaced() || readerGone()
        }
        for await event in feed {
            switch options.format {
            case .jsonl: try out.write(bytes: jsonLine(event))
            case .table: try out.line(tableLine(event))
            }
            try out.flush()
        }
        if context.isInterrupted { throw InterruptedError(command: "watch") }
        if let failure = feed.failure { throw failure }
        // Like a write into a closed pipe: a quiet end.
        if readerGone() { throw OutputError.brokenPipe }
        // A snapshot installed by a cluster member renames directories: a moment without the
        // file is not a removal.
        if replaced(), !FileManager.default.fileExists(atPath: dataFile) {
            try? await Task.sleep(for: .seconds(1))
            if !FileManager.default.fileExists(atPath: dataFile) {
                throw RuntimeError("watch", "\(context.storePath): the store was removed while it was watched")
            }
        }
        if replaced() {
            throw RuntimeError(
                "watch",
                "\(context.storePath): the store was replaced (a cluster member installed a peer's snapshot, or its directory was swapped): its change feed is another's, numbered afresh; run watch again")
        }
    }

    static func jsonLine(_ event: ChangeFeedEvent) -> [UInt8] {
        let value: JSONValue
        switch event {
        case .gap(let range):
            value = object([("gap", object([("from", .int(Int(range.lowerBound))), ("to", .int(Int(range.upperBound)))]))])
        case .batch(let batch):
            value = object([
                ("sequence", .int(Int(batch.sequence))),
                ("committedAt", .string(NewsDate.iso8601String(batch.committedAt))),
                ("changes", .array(batch.changes.map { change in
                    object([
                        ("collection", .string(change.collection)), ("kind", .string(kindName(change.kind))),
                        ("keys", .array(change.keys.map { .string($0.description) })),
                    ])
                })),
            ])
        }
        return value.jsonBytes + [0x0A]
    }

    static func tableLine(_ event: ChangeFeedEvent) -> String {
        switch event {
        case .gap(let range): "gap \(range.lowerBound)…\(range.upperBound): trimmed before it was read"
        case .batch(let batch):
            "\(batch.sequence)  \(NewsDate.iso8601MillisecondsString(batch.committedAt))  "
                + batch.changes.map { "\($0.collection) \(kindName($0.kind)) \($0.keys.count)" }.joined(separator: ", ")
        }
    }

    private static func kindName(_ kind: StoreChange.Kind) -> String {
        switch kind {
        case .upsert: "upsert"
        case .delete: "delete"
        case .relation: "relation"
        }
    }

    private static func object(_ members: [(String, JSONValue)]) -> JSONValue {
        .object(JSONObject(members: Dictionary(uniqueKeysWithValues: members)))
    }
}
