import Dispatch
import Foundation
import Quire
import Synchronization

/// Server-Sent Events of committed changes, fanned out to every `/api/changes` connection.
///
/// Two sources: a poller that looks at the store's last committed transaction and record
/// counts every `pollInterval` (cheap: LMDB's environment info and one `mdb_stat` per
/// database) and sends a `commit` event when they moved — this is how commits of *another
/// process* (a `quire fetch` or `quire load` into the same store) show up; and, when the
/// server shares an embedding program's `Store`, that store's in-process `changes()` stream,
/// sent as `change` events with the keys. Streams never block a daemon thread: an empty
/// stream suspends its connection until the next push.
final class ChangeFeed: Sendable {
    private let access: StoreAccess
    private let interval: Duration
    private let maxSubscribers: Int
    private let subscribers = Mutex<[Int: EventStream]>([:])
    private let nextID = Atomic<Int>(0)
    private let current = Mutex<CommitMark?>(nil)
    /// Whether a poll found no store while none was seen yet (its creation is then published).
    private let storeWasMissing = Atomic(false)
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let pollerDone = DispatchSemaphore(value: 0)
    private let relay = Mutex<Task<Void, Never>?>(nil)

    /// A comment line sent to every stream this often, so proxies and clients see life (a client
    /// that closed is noticed at the next poll: ``EventStream/endIfClientLeft()``).
    static let heartbeat: Duration = .seconds(15)

    init(access: StoreAccess, interval: Duration, maxSubscribers: Int) {
        self.access = access
        self.interval = interval
        self.maxSubscribers = maxSubscribers
    }

    /// Starts the poller thread (and the in-process relay when there is a shared store).
    func start() {
        current.withLock { $0 = try? access.commitMark() }
        let thread = Thread { [self] in
            var lastBeat = ContinuousClock.now
            while !stopping.load(ordering: .relaxed) {
                poll()
                // A client that went away frees its stream's slot now, not at the next heartbeat.
                for stream in streams() { stream.endIfClientLeft() }
                if ContinuousClock.now - lastBeat >= Self.heartbeat {
                    lastBeat = ContinuousClock.now
                    publish(": keep-alive\n\n")
                }
                let (s, attoseconds) = interval.components
                _ = wake.wait(timeout: .now() + Double(s) + Double(attoseconds) / 1e18)
            }
            pollerDone.signal()
        }
        thread.name = "quire-serve-changes"
        thread.start()
        if let stream = access.inProcessChanges() {
            relay.withLock {
                $0 = Task.detached { [self] in
                    for await event in stream {
                        guard case .batch(let batch) = event else { continue }
                        for change in batch.changes { publish(Self.changeEvent(change)) }
                    }
                }
            }
        }
    }

    /// Ends every stream and the poller. Idempotent.
    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        wake.signal()
        pollerDone.wait()
        relay.withLock { $0?.cancel() }
        let all = subscribers.withLock { list in
            defer { list.removeAll() }
            return Array(list.values)
        }
        for stream in all { stream.finish() }
    }

    /// A new event stream, or nil when `maxSubscribers` streams are open already. It starts
    /// with a `hello` event carrying the current mark, and a `commit` right away when the
    /// client's `Last-Event-ID` names an older transaction.
    func subscribe(lastEventID: String?) -> EventStream? {
        guard !stopping.load(ordering: .relaxed) else { return nil }
        let id = nextID.add(1, ordering: .relaxed).newValue
        let stream = EventStream { [weak self] in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        // The hello is queued before the stream joins, under the lock a poll takes to move the
        // mark: a commit event then always follows the hello whose mark it moves from.
        let added = subscribers.withLock { list -> Bool in
            guard list.count < maxSubscribers else { return false }
            let mark = current.withLock { $0 }
            stream.push("retry: 2000\n" + Self.event("hello", mark.map(Self.markJSON) ?? "{\"available\":false}", id: mark))
            if let mark, let last = lastEventID.flatMap(Int.init), last != mark.lastTransaction {
                stream.push(Self.event("commit", Self.markJSON(mark, since: nil), id: mark))
            }
            list[id] = stream
            return true
        }
        return added ? stream : nil
    }

    private func poll() {
        guard let mark = try? access.commitMark() else {
            if current.withLock({ $0 == nil }) { storeWasMissing.store(true, ordering: .relaxed) }
            return
        }
        // The streams that saw the previous mark: taken with it, so a stream that joins now
        // starts from the new mark and gets no commit event for it.
        let (previous, targets) = subscribers.withLock { list in
            let previous = current.withLock { state -> CommitMark? in
                defer { state = mark }
                return state
            }
            return (previous, Array(list.values))
        }
        guard let previous else {
            // A store created after the server started: the commit that created it is news too.
            if storeWasMissing.exchange(false, ordering: .relaxed) {
                publish(Self.event("commit", Self.markJSON(mark, since: CommitMark(lastTransaction: 0, records: [:])), id: mark), to: targets)
            }
            return
        }
        guard previous != mark else { return }
        publish(Self.event("commit", Self.markJSON(mark, since: previous), id: mark), to: targets)
    }

    private func publish(_ text: String, to targets: [EventStream]? = nil) {
        for stream in targets ?? streams() { stream.push(text) }
    }

    /// The open streams, taken out of the lock (pushing or peeking under it would hold up subscribers).
    private func streams() -> [EventStream] { subscribers.withLock { Array($0.values) } }

    private static func event(_ name: String, _ json: String, id mark: CommitMark?) -> String {
        let id = mark.map { "id: \($0.lastTransaction)\n" } ?? ""
        return "event: \(name)\n\(id)data: \(json)\n\n"
    }

    /// `{"last_transaction": T, "collections": {"articles": {"records": N, "change": D}}}`;
    /// `change` is the difference in records since `previous`, when given.
    private static func markJSON(_ mark: CommitMark, since previous: CommitMark?) -> String {
        let names = mark.records.keys.sorted()
        let parts = names.map { name -> String in
            let records = mark.records[name] ?? 0
            let delta = previous.map { ",\"change\":\(records - ($0.records[name] ?? 0))" } ?? ""
            return "\(JSONText.string(name)):{\"records\":\(records)\(delta)}"
        }
        return "{\"last_transaction\":\(mark.lastTransaction),\"collections\":{\(parts.joined(separator: ","))}}"
    }

    private static func markJSON(_ mark: CommitMark) -> String { markJSON(mark, since: nil) }

    /// Keys are listed up to 1000 a change; `more` counts the rest.
    private static func changeEvent(_ change: StoreChange) -> String {
        let kind: String
        switch change.kind {
        case .upsert: kind = "upsert"
        case .delete: kind = "delete"
        case .relation: kind = "relation"
        }
        let keys = change.keys.prefix(1000).map { JSONText.string($0.description) }
        let json = "{\"collection\":\(JSONText.string(change.collection)),\"kind\":\"\(kind)\",\"keys\":[\(keys.joined(separator: ","))],\"more\":\(max(0, change.keys.count - 1000))}"
        return event("change", json, id: nil)
    }
}

/// One `/api/changes` connection's queue of event text.
final class EventStream: ResponseStream, @unchecked Sendable {
    // All guarded by `lock`; `resume` is called with it held (lock order: this lock, then
    // libmicrohttpd's), as is `suspend`, so an event can never slip between the check for
    // data and the suspension.
    private let lock = NSLock()
    private var pending: [UInt8] = []
    private var finished = false
    private var closed = false
    private var suspended = false
    private var resume: (@Sendable () -> Void)?
    private var peerHasClosed: (@Sendable () -> Bool)?
    private let onClose: @Sendable () -> Void

    init(onClose: @escaping @Sendable () -> Void) { self.onClose = onClose }

    func attach(resume: @escaping @Sendable () -> Void, peerHasClosed: @escaping @Sendable () -> Bool) {
        lock.lock()
        self.resume = resume
        self.peerHasClosed = peerHasClosed
        lock.unlock()
    }

    /// Ends a suspended stream whose client has closed its connection: the daemon then resumes
    /// it, reads the end and frees the connection and its subscriber slot. (A stream with bytes
    /// pending is being sent, and the daemon sees a close itself.)
    func endIfClientLeft() {
        lock.lock()
        defer { lock.unlock() }
        guard suspended, !closed, peerHasClosed?() == true else { return }
        finished = true
        wake()
    }

    /// Queues `text`. A client that stopped reading gets at most 1 MiB queued, then is cut off.
    func push(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { return }
        if pending.count > 1 << 20 { finished = true } else { pending += Array(text.utf8) }
        wake()
    }

    /// Ends the stream: `read` returns nil once the queue is sent.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        finished = true
        wake()
    }

    /// With `lock` held.
    private func wake() {
        guard suspended, !closed else { return }
        suspended = false
        resume?()
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, suspend: () -> Void) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        if pending.isEmpty {
            if finished { return nil }
            suspended = true
            suspend()
            return 0
        }
        let n = min(buffer.count, pending.count)
        pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(n))) }
        pending.removeFirst(n)
        return n
    }

    func close() {
        lock.lock()
        let first = !closed
        closed = true
        finished = true
        lock.unlock()
        if first { onClose() }
    }
}
