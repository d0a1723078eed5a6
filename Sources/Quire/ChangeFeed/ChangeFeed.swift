import Foundation
internal import QuireLMDB
import Synchronization

/// One committed transaction in the store's durable change feed.
public struct ChangeBatch: Sendable, Hashable {
    /// The commit's sequence number: 1, 2, 3… in commit order, written in the same transaction as
    /// its data, never reused.
    public let sequence: UInt64
    /// When it committed.
    public let committedAt: Date
    /// What it changed, per collection (or relation) and kind.
    public let changes: [StoreChange]
}

/// What a change feed hands out.
public enum ChangeFeedEvent: Sendable, Hashable {
    /// The next commit.
    case batch(ChangeBatch)
    /// Commits the feed no longer holds (trimmed by retention before they were read): the
    /// subscriber missed them and should resynchronise (re-read the collections it follows).
    case gap(ClosedRange<UInt64>)
}

/// The store's committed changes from a sequence number on, read from the environment, so it
/// resumes after a restart and works from another process.
///
/// It never drops a commit silently: a subscriber that reads slower than commits are made is
/// simply behind (the feed is pulled, so it is back-pressured by construction); one so far
/// behind that retention trimmed what it had not read gets a ``ChangeFeedEvent/gap(_:)`` first.
/// Iteration waits for new commits (within milliseconds in this process, a quarter of a second
/// from another) and ends when the task is cancelled or the store closes — or when the feed
/// cannot be read (a damaged page): then ``failure`` says why.
public struct ChangeFeed: AsyncSequence, Sendable {
    public typealias Element = ChangeFeedEvent
    let store: Store
    let after: UInt64
    var shouldStop: (@Sendable () -> Bool)?
    private let stoppedBy = ChangeFeedStop()

    init(store: Store, after: UInt64, shouldStop: (@Sendable () -> Bool)?) {
        self.store = store
        self.after = after
        self.shouldStop = shouldStop
    }

    /// The error that ended an iteration of this feed early (its database unreadable), or nil:
    /// an iteration that ended because its task was cancelled, the condition of
    /// ``stopping(when:)`` held or the store closed has none.
    public var failure: StoreError? { stoppedBy.failure.withLock { $0 } }

    /// The same feed, ending as soon as `condition` is true (checked at least every few
    /// milliseconds while waiting): for a program that stops on a signal flag.
    public func stopping(when condition: @escaping @Sendable () -> Bool) -> ChangeFeed {
        var copy = self
        copy.shouldStop = condition
        return copy
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(store: store, cursor: after, shouldStop: shouldStop, stoppedBy: stoppedBy)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let store: Store
        var cursor: UInt64
        let shouldStop: (@Sendable () -> Bool)?
        let stoppedBy: ChangeFeedStop
        var pending: ChangeFeedEvent?

        public mutating func next() async -> ChangeFeedEvent? {
            if let event = pending {
                pending = nil
                return event
            }
            var lastEpoch = store.commitEpoch.load(ordering: .acquiring)
            var waited = Duration.zero
            while !Task.isCancelled && shouldStop?() != true {
                let found: (ChangeBatch, UInt64)?
                do {
                    found = try store.nextChange(after: cursor)
                } catch {
                    // The store closed, or the feed cannot be read: that one is said.
                    if !store.environment.isClosed {
                        let failure = error as? StoreError ?? StoreError.wrap(error, "\(store.path): reading the change feed")
                        stoppedBy.failure.withLock { $0 = failure }
                    }
                    return nil
                }
                if let (batch, first) = found {
                    defer { cursor = batch.sequence }
                    if batch.sequence > cursor + 1 && first > cursor + 1 {
                        pending = .batch(batch)
                        return .gap((cursor + 1)...(batch.sequence - 1))
                    }
                    return .batch(batch)
                }
                // Caught up: wait for a commit of this process, or poll for other processes'.
                do {
                    try await Task.sleep(for: .milliseconds(5))
                } catch {
                    return nil
                }
                waited += .milliseconds(5)
                let epoch = store.commitEpoch.load(ordering: .acquiring)
                if epoch == lastEpoch && waited < .milliseconds(250) { continue }
                lastEpoch = epoch
                waited = .zero
            }
            return nil
        }
    }
}

/// Where an iteration leaves the error that ended it: shared by a feed and its iterators.
final class ChangeFeedStop: Sendable {
    let failure = Mutex<StoreError?>(nil)
}

extension Store {
    var changesDatabase: Database? { changesStore.withLock { $0 } }

    /// Opens the change feed's database: creating it on the writer thread in a writable store,
    /// finding it (if another process created it) in a read-only one.
    func openChangeFeed() throws {
        guard changesDatabase == nil else { return }
        let db: Database?
        if options.readOnly {
            db = try? environment.openDatabase(StoreLayout.changes, flags: [])
        } else {
            db = try writer.runSync { try environment.openDatabase(StoreLayout.changes) }
        }
        changesStore.withLock { $0 = db }
    }

    /// The durable change feed after `sequence` (0: from the oldest commit it holds).
    ///
    /// - Parameter sequence: The last sequence the subscriber has seen; it resumes after it.
    public func changes(since sequence: UInt64) -> ChangeFeed { ChangeFeed(store: self, after: sequence, shouldStop: nil) }

    /// The durable change feed from now on: every commit after this call.
    public func changes() -> ChangeFeed {
        ChangeFeed(store: self, after: (try? lastChangeSequence()) ?? 0, shouldStop: nil)
    }

    /// The sequence number of the last commit in the feed (0 when there is none).
    public func lastChangeSequence() throws(StoreError) -> UInt64 {
        try StoreError.boundary("\(path): reading the change feed") {
            guard let db = changesDatabase else { return 0 }
            return try environment.read { txn in
                let cursor = try txn.cursor(in: db)
                guard let last = try cursor.last() else { return 0 }
                guard let sequence = ChangeFeedRecord.sequence(of: last.key) else {
                    throw StoreError(.corrupted, "\(environment.path): the last entry of the change feed is unreadable; run quire verify")
                }
                return sequence
            }
        }
    }

    /// The first commit after `sequence` and the oldest sequence the feed still holds.
    func nextChange(after sequence: UInt64) throws -> (ChangeBatch, UInt64)? {
        guard let db = changesDatabase else { return nil }
        return try environment.read { txn -> (ChangeBatch, UInt64)? in
            let cursor = try txn.cursor(in: db)
            guard let oldest = try cursor.first().flatMap({ ChangeFeedRecord.sequence(of: $0.key) }) else { return nil }
            for entry in txn.entries(in: db, range: KeyRange(lower: .exclusive(ChangeFeedRecord.sequenceKey(sequence)))) {
                guard let number = ChangeFeedRecord.sequence(of: entry.key),
                    let record = ChangeFeedRecord.decode(entry.value)
                else {
                    throw StoreError(.corrupted, "\(environment.path): an entry of the change feed is unreadable; run quire verify")
                }
                return (ChangeBatch(sequence: number, committedAt: record.committedAt, changes: record.changes), oldest)
            }
            return nil
        }
    }

    /// Appends this transaction's changes to the feed and trims it to the retention (commits,
    /// then bytes).
    func appendToFeed(_ changes: [StoreChange], _ txn: borrowing WriteTransaction) throws {
        guard options.changeRetention > 0, !changes.isEmpty, let db = changesDatabase else { return }
        let cursor = try txn.cursor(in: db)
        let last = try cursor.last().flatMap { ChangeFeedRecord.storedSequence(of: $0.key) } ?? 0
        // A damaged last key of all ones would number the next commit 0, before every other.
        let (next, overflow) = last.addingReportingOverflow(1)
        if overflow { throw StoreError(.corrupted, "\(environment.path): the last entry of the change feed is unreadable; run quire verify") }
        try txn.put(ChangeFeedRecord.encode(changes, at: Date()), forKey: ChangeFeedRecord.sequenceKey(next), in: db)
        var kept = try txn.count(of: db)
        var excess = kept - options.changeRetention
        while excess > 0, let first = try cursor.first() {
            try txn.delete(first.keyBytes, in: db)
            excess -= 1
            kept -= 1
        }
        guard options.changeRetentionBytes > 0 else { return }
        while kept > 1, try txn.statistics(of: db).bytes > options.changeRetentionBytes, let first = try cursor.first() {
            try txn.delete(first.keyBytes, in: db)
            kept -= 1
        }
    }
}
