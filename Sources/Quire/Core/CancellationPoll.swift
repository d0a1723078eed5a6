/// Counts the steps of a long walk and asks whether it was cancelled every `interval`th one: the
/// first Ctrl-C of a command stops it promptly, and asking costs nothing per step.
struct CancellationPoll {
    let interval: Int
    private var steps = 0

    init(every interval: Int) { self.interval = interval }

    /// One step; throws `CancellationError` when this is a polling step and `isCancelled` says so.
    mutating func step(_ isCancelled: (() -> Bool)?) throws {
        steps += 1
        if steps % interval == 0, isCancelled?() == true { throw CancellationError() }
    }
}
