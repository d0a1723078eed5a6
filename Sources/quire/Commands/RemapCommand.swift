import Foundation
import Quire
import QuireFetch

/// What `quire remap` does, given valid options (see `RemapOptions.swift`).
enum RemapCommand {
    static func run(_ options: RemapOptions, context: CommandContext) async throws {
        let store = try OpenStore.readWrite(context.storePath, command: "remap")
        defer { store.close() }
        let sink: StoreFetchSink
        do {
            sink = try StoreFetchSink(store: store)
        } catch {
            throw RuntimeError("remap", "\(store.path): \(OpenStore.reason(error))")
        }
        let task = Task { try await sink.remap() }
        let summary: RemapSummary
        do {
            summary = try await InterruptFlag.value(of: task)
        } catch {
            throw RuntimeError("remap", OpenStore.reason(error))
        }
        if context.isInterrupted { throw InterruptedError(command: "remap") }
        if !options.quiet {
            var text = "remapped \(summary.remapped), still rejected \(summary.stillRejected)"
            if summary.rawUpdated + summary.rawUnchanged + summary.rawFailed > 0 {
                text += "; kept raw documents: \(summary.rawUpdated) updated, \(summary.rawUnchanged) unchanged"
                if summary.rawFailed > 0 { text += ", \(summary.rawFailed) no longer map (their articles are kept)" }
            }
            Diagnostics.write("quire: remap: \(text)\n")
        }
    }
}
