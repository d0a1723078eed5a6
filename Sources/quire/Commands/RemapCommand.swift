import Foundation
import Quire
import QuireFetch

/// What `quire remap` does, given valid options (see `RemapOptions.swift`).
enum RemapCommand {
    static func run(_ options: RemapOptions, context: CommandContext) async throws {
        // Remapping works on a store's quarantine: a mistyped path is an error, not a new store.
        guard ReadOnlyStore.exists(at: context.storePath) else {
            throw ReadOnlyStore.absence(at: context.storePath, command: "remap")
        }
        let store = try OpenStore.readWrite(context.storePath, command: "remap")
        defer { store.close() }
        let sink: StoreFetchSink
        do {
            sink = try StoreFetchSink(store: store)
        } catch {
            throw RuntimeError("remap", "\(store.path): \(OpenStore.reason(error))")
        }
        let progress = context.progress("remapping", unit: "documents", quiet: options.quiet)
        let task = Task { try await sink.remap(progress: { [progress] done in progress.setCompleted(done) }) }
        let summary: RemapSummary
        do {
            summary = try await InterruptFlag.value(of: task)
        } catch {
            progress.finish(stopped: true)
            throw RuntimeError("remap", OpenStore.reason(error))
        }
        progress.finish(stopped: context.isInterrupted)
        if context.isInterrupted {
            // What was done stays (each transaction committed whole): said, as fetch and load do.
            // The same words as the summary: "remapped" counts quarantined documents now mapped.
            throw InterruptedError(
                command: "remap",
                detail: "after \(summary.documents) documents were read again (\(summary.remapped) out of the quarantine, "
                    + "\(summary.stillRejected) still rejected, \(summary.rawDocuments) kept raw)",
                writes: true)
        }
        if !options.quiet {
            var text = "remapped \(summary.remapped), still rejected \(summary.stillRejected)"
            if summary.rawDocuments > 0 {
                text += "; kept raw documents: \(summary.rawUpdated) updated, \(summary.rawUnchanged) unchanged"
                if summary.rawFailed > 0 { text += ", \(summary.rawFailed) no longer map (their articles are kept)" }
                if summary.rawSuperseded > 0 {
                    text += ", \(summary.rawSuperseded) whose article changed since (kept as stored)"
                }
            }
            Diagnostics.write("quire: remap: \(text)\n")
        }
    }
}
