import Foundation
import Testing
import QuireTestSupport

/// `quire watch`: the durable change feed on stdout, from another process than the writer, until
/// the first Ctrl-C.
@Suite struct WatchCommandTests {
    /// `count` generated articles loaded into the store in `dir`, and a file for a watch's
    /// stderr with its handle (the caller closes it).
    private func loadedStore(_ dir: URL, count: Int) async throws -> (errors: URL, handle: FileHandle) {
        let load = try await runQuire(["load", "-", "--quiet"], stdin: try generatedJSONL(count: count), directory: dir)
        #expect(load.status == 0, "\(load)")
        let errors = dir.appendingPathComponent("watch.err")
        try Data().write(to: errors)
        return (errors, try FileHandle(forWritingTo: errors))
    }

    @Test func watchPrintsEveryCommitSinceASequenceAndStopsOnTheFirstSignal() async throws {
        try await withScratch { dir in
            // Three loads: three chunks, three commits (and the store's own first ones).
            for seed in [1, 2, 3] as [UInt64] {
                let load = try await runQuire(["load", "-", "--quiet"], stdin: try generatedJSONL(count: 20, seed: seed), directory: dir)
                #expect(load.status == 0, "\(load)")
            }
            let out = dir.appendingPathComponent("watch.out")
            try Data().write(to: out)
            let handle = try FileHandle(forWritingTo: out)
            defer { try? handle.close() }
            let process = try startQuire(["watch", "--since", "0"], directory: dir, stdout: handle)
            // Every kept commit arrives, then the command waits for more until interrupted.
            let deadline = Date().addingTimeInterval(20)
            var lines: [String] = []
            while Date() < deadline {
                lines = (try? String(contentsOf: out, encoding: .utf8)).map { $0.split(separator: "\n").map(String.init) } ?? []
                if lines.filter({ $0.contains("\"articles\"") }).count >= 3 { break }
                usleep(50_000)
            }
            #expect(process.isRunning)
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            #expect(process.terminationStatus == 130)
            let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            let sequences = objects.compactMap { $0["sequence"] as? Int }
            #expect(sequences == Array(1...sequences.count))
            let articleKeys = objects.flatMap { ($0["changes"] as? [[String: Any]] ?? []).filter { $0["collection"] as? String == "articles" } }
                .flatMap { $0["keys"] as? [String] ?? [] }
            #expect(Set(articleKeys).count == 60)
        }
    }

    /// A reader that stops reading (`quire watch | slow`) does not hold the first signal back:
    /// the write blocked on the full pipe is woken, and watch exits 130 (it waited for ever).
    @Test func theFirstSignalStopsAWatchBlockedOnAFullPipe() async throws {
        try await withScratch { dir in
            // About 120 KB of keys: more than a pipe holds.
            let (err, errors) = try await loadedStore(dir, count: 2_000)
            defer { try? errors.close() }
            let pipe = Pipe()
            let process = try startQuire(["watch", "--since", "0"], directory: dir, stdout: pipe.fileHandleForWriting, stderr: errors)
            try pipe.fileHandleForWriting.close()
            func blockedWriting() -> Bool {
                let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")) ?? []
                return tasks.contains { task in
                    ((try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(task)/wchan", encoding: .utf8)) ?? "").contains("pipe_write")
                }
            }
            // Where the kernel hides a thread's wait channel, two seconds stand for it.
            let visible = FileManager.default.isReadableFile(atPath: "/proc/\(process.processIdentifier)/wchan")
            var tries = 0
            while visible && !blockedWriting() && tries < 4_000 {
                tries += 1
                usleep(50_000)
            }
            if !visible { usleep(2_000_000) }
            #expect(!visible || blockedWriting(), "watch never filled the pipe")
            kill(process.processIdentifier, SIGTERM)
            // Were the signal lost, the watch would wait for the reader: this one goes after a while.
            let reader = pipe.fileHandleForReading
            DispatchQueue.global().asyncAfter(deadline: .now() + 30) { try? reader.close() }
            process.waitUntilExit()
            #expect(process.terminationStatus == 130)
            let said = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            #expect(said.contains("quire: watch: interrupted while the output waited for its reader"), "\(said)")
        }
    }

    /// A reader that has gone (`quire watch | head -2` once head exits) ends the watch quietly,
    /// status 0, with no commit to come: it went on until the next commit's write, on a quiet
    /// store for ever.
    @Test func aWatchWhoseReaderHasGoneEndsWithoutAnotherCommit() async throws {
        try await withScratch { dir in
            let (err, errors) = try await loadedStore(dir, count: 20)
            defer { try? errors.close() }
            let pipe = Pipe()
            let process = try startQuire(["watch", "--since", "0"], directory: dir, stdout: pipe.fileHandleForWriting, stderr: errors)
            try pipe.fileHandleForWriting.close()
            // The first lines arrive (the watch is under way), then the reader leaves.
            #expect(!pipe.fileHandleForReading.availableData.isEmpty)
            try pipe.fileHandleForReading.close()
            let said = stopped(process, errors: err)
            #expect(process.terminationStatus == 0, "\(said)")
            #expect(said.isEmpty, "\(said)")
        }
    }

    /// Waits for `process` to end on its own (interrupting it after 4,000 tries, bounded by tries,
    /// not a time window: a full run on two cores starves a watch for minutes); its stderr.
    private func stopped(_ process: ChildProcess, errors: URL) -> String {
        var tries = 0
        while process.isRunning && tries < 4_000 {
            tries += 1
            usleep(50_000)
        }
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        process.waitUntilExit()
        return (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
    }

    /// Waits until `process` has the store's data file open (bounded by tries: a full run on two
    /// cores can keep a new process from its first steps for seconds), so that what the test
    /// does to the store next happens under the watch, not before it started.
    private func waitUntilOpen(_ process: ChildProcess, store: String) {
        let descriptors = "/proc/\(process.processIdentifier)/fd"
        let dataFile = "/" + URL(fileURLWithPath: store).lastPathComponent + "/data.mdb"
        for _ in 0..<1_200 where process.isRunning {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []
            let open = names.contains { name in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + name))?
                    .hasSuffix(dataFile) == true
            }
            if open { return }
            usleep(25_000)
        }
    }

    /// A sequence past the newest commit shows nothing until the store gets there: watch says so.
    @Test func aSequencePastTheNewestCommitIsSaid() async throws {
        try await withScratch { dir in
            let (err, handle) = try await loadedStore(dir, count: 5)
            defer { try? handle.close() }
            let process = try startQuire(["watch", "--since", "999999"], directory: dir, stdout: FileHandle.nullDevice, stderr: handle)
            let deadline = Date().addingTimeInterval(20)
            var said = ""
            while Date() < deadline, !said.contains("\n") {
                said = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
                usleep(50_000)
            }
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            #expect(said.hasPrefix("quire: watch: the newest commit is ") && said.contains("--since 999999"), "\(said)")
        }
    }

    /// A store whose directory is swapped under the watch (a cluster member installing a peer's
    /// snapshot) has another change feed: watch stops and says so (it followed the unlinked
    /// old file for ever, silently).
    @Test func aReplacedStoreStopsTheWatchWithAMessage() async throws {
        try await withScratch { dir in
            let (err, handle) = try await loadedStore(dir, count: 5)
            defer { try? handle.close() }
            let other = dir.appendingPathComponent("other.db").path
            let second = try await runQuire(["--store", other, "load", "-", "--quiet"], stdin: try generatedJSONL(count: 3, seed: 9))
            #expect(second.status == 0, "\(second)")
            let process = try startQuire(["watch"], directory: dir, stdout: FileHandle.nullDevice, stderr: handle)
            let store = dir.appendingPathComponent("quire.db").path
            waitUntilOpen(process, store: store)
            usleep(200_000)
            try FileManager.default.moveItem(atPath: store, toPath: store + ".replaced")
            try FileManager.default.moveItem(atPath: other, toPath: store)
            let said = stopped(process, errors: err)
            #expect(process.terminationStatus == 1 && said.contains("the store was replaced"), "\(said)")
        }
    }

    /// A store removed under the watch is said to be removed, not replaced.
    @Test func aRemovedStoreStopsTheWatchWithAMessage() async throws {
        try await withScratch { dir in
            let (err, handle) = try await loadedStore(dir, count: 5)
            defer { try? handle.close() }
            let process = try startQuire(["watch"], directory: dir, stdout: FileHandle.nullDevice, stderr: handle)
            waitUntilOpen(process, store: dir.appendingPathComponent("quire.db").path)
            usleep(200_000)
            try FileManager.default.removeItem(at: dir.appendingPathComponent("quire.db"))
            let said = stopped(process, errors: err)
            #expect(process.terminationStatus == 1 && said.contains("the store was removed while it was watched"), "\(said)")
        }
    }
}
