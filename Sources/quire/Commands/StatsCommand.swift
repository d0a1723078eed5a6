import Foundation
import Quire

/// What `quire stats` does, given valid options (see `StatsOptions.swift`).
enum StatsCommand {
    static func run(_ options: StatsOptions, context: CommandContext) async throws {
        let store = try OpenStore.readOnly(context.storePath, command: "stats")
        defer { store.close() }
        // Counting a large store's pages writes nothing: the first Ctrl-C ends it at once (with
        // --json, a stop answers on stdout: it stops after the count, as before).
        let stats = try options.json
            ? store.storeStatistics() : ImmediateStop.during("quire: stats: interrupted\n") { try store.storeStatistics() }
        if options.json {
            try context.output.write(bytes: try stats.jsonBytes())
            try context.output.write("\n")
            return
        }
        let out = context.output
        let g = ProgressReporter.grouped
        func counted(_ n: Int, _ one: String, _ many: String) -> String { "\(g(n)) \(n == 1 ? one : many)" }
        try out.line("store        \(TerminalText.escaped(stats.path))")
        try out.line("format       \(stats.formatVersion)   fields \(stats.fieldNames)   interned values \(stats.internedValues)")
        let use = stats.mapBytes > 0 ? Double(stats.usedBytes) * 100 / Double(stats.mapBytes) : 0
        try out.line("file         \(g(stats.fileBytes)) bytes   map \(g(stats.mapBytes)) bytes, \(String(format: "%.1f", use))% used   page \(stats.pageSize)")
        if stats.freeBytes > 0 {
            // Why a store can be larger than its records: say what a compacting copy would drop.
            try out.line("free pages   \(g(stats.freeBytes)) bytes, reused by later writes (quire copy --compact leaves them out)")
        }
        try out.line("readers      \(stats.activeReaders) active, \(counted(stats.readerSlotsUsed, "slot", "slots")) of \(stats.maxReaders)   last txn \(stats.lastTransactionID)")
        try out.line("records      \(g(stats.records))")
        for c in stats.collections {
            let perRecord = c.records > 0 ? ", \(g(c.bytesPerRecord)) bytes/record" : ""
            let dictionary = c.dictionaryBytes > 0 ? " (\(g(c.dictionaryBytes)) bytes)" : ""
            try out.line(
                "collection   \(c.name): \(counted(c.records, "record", "records")), \(g(c.bytes)) bytes\(perRecord), depth \(c.depth), "
                    + "compression \(c.compression)\(dictionary)")
            for i in c.indexes {
                try out.line("  index      \(i.name): \(counted(i.entries, "entry", "entries")), \(g(i.bytes)) bytes")
            }
            if let segments = c.searchSegments, segments > 0 {
                // Left by a load that was interrupted (or is under way): its end merges them.
                // The flag stays when the load that began the merge was killed: said as begun,
                // not as running (nothing may be).
                let merging = c.searchMerging == true ? ", part merged (a load's end began merging them)" : ""
                try out.line("  segments   \(g(segments)) in the full-text index\(merging); the next load's end merges them")
            }
        }
        for r in stats.relations {
            try out.line("relation     \(r.name): \(counted(r.entries, "entry", "entries")), \(g(r.bytes)) bytes")
        }
        // The rest of the file's used pages, so that the lines add up to it.
        if stats.duplicateBytes > 0 {
            try out.line(
                "duplicates   \(g(stats.duplicateBytes)) bytes: the ids under index keys and relation owners with many "
                    + "(sub-trees the lines above leave out)")
        }
        try out.line(
            "change feed  \(counted(stats.changeFeedEntries, "commit", "commits")), \(g(stats.changeFeedBytes)) bytes   "
                + "metadata \(g(stats.metadataBytes)) bytes")
    }
}
