import Foundation

/// How many parts the store cuts work into to spread it over the cores (JSON rendering of a
/// batch of records, tokenizing a batch for the full-text index): the machine's cores, at most
/// four, past which the writer's own serial share dominates.
enum Parallelism {
    static let parts = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
}
