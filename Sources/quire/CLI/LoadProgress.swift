import Quire

extension ProgressReporter {
    /// Shows a bulk load's progress, `before` records of earlier sections added: the records
    /// read while the input lasts; then, once it has ended, the merge of the sorted runs as a
    /// bar up to the records read, and the full-text index's packing. Without the stages the
    /// count stood still at the total for the last half of a large load.
    func show(_ load: BulkInsertProgress, after before: Int = 0) {
        let committed = before + load.records
        switch load.phase {
        case .inserting:
            setCompleted(committed + load.pending)
        case .mergingSortedRuns:
            beginStage("merging sorted runs", completed: committed, total: committed + load.pending)
            setCompleted(committed)
        case .compactingSearchIndex:
            beginStage("packing the full-text index", completed: committed, total: nil, counts: false)
        }
    }
}
