import Foundation
import QuireLMDB
import Synchronization
import Testing
import QuireTestSupport

/// `quire load` treats its input as input: read errors fail, Ctrl-C is prompt.
@Suite struct LoadInputTests {
    @Test func loadingADirectoryFails() async throws {
        try await withScratch { dir in
            let input = dir.appendingPathComponent("somedir")
            try FileManager.default.createDirectory(at: input, withIntermediateDirectories: false)
            let result = try await runQuire(["load", input.path + "/"], directory: dir)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("is a directory"), "\(result)")
            #expect(!result.stderr.contains("0 records"), "\(result)")
            // Nothing was created for a load that read nothing.
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("quire.db").path))
        }
    }

    /// Beside JSON Lines, load reads the array `dump --format json` writes, and only as a whole:
    /// `[]` is no records, an array cut before its `]` or followed by more text is an error after
    /// the records before it are stored, and brackets or commas in JSON Lines are errors, as
    /// are records not separated by exactly one comma and a comma after the last.
    @Test(arguments: [
        ("[]", 0, nil),
        ("[\n{\"id\":\"a\"},\n{\"id\":\"b\"}\n]", 2, nil),
        ("  [ \n\n{\"id\":\"a\"}\n]\n\n", 1, nil),
        ("[\n{\"id\":\"a\"},\n{\"id\":\"b\"}", 2, "the input ends after line 3, inside the JSON array: its closing ']' is missing"),
        ("[", 0, "the input ends after line 1, inside the JSON array"),
        ("[\n{\"id\":\"a\"}\n]\n[\n{\"id\":\"b\"}\n]", 1, "line 4: text after the JSON array's closing ']'"),
        ("{\"id\":\"a\"},\n{\"id\":\"b\"}", 0, "line 1: a comma beside the record"),
        ("{\"id\":\"a\"}\n]", 1, "line 2: a bracket in JSON Lines"),
        ("[{\"id\":\"a\"},{\"id\":\"b\"}]", 0, "line 1: load reads a JSON array as 'dump --format json' writes it"),
        ("[\n  {\n    \"id\": \"a\"\n  }\n]", 0, "line 2: load reads a JSON array as 'dump --format json' writes it"),
        ("[\n{\"id\":\"a\"}\n,{\"id\":\"b\"}\n]", 2, nil),
        ("[\n{\"id\":\"a\"}\n{\"id\":\"b\"}\n]", 1, "line 3: no comma between this record and the one before it"),
        ("[\n{\"id\":\"a\"},\n,{\"id\":\"b\"}\n]", 1, "line 3: two commas between this record and the one before it"),
        ("[\n{\"id\":\"a\"},\n{\"id\":\"b\"},\n]", 2, "line 4: a comma after the JSON array's last record"),
        ("[\n,{\"id\":\"a\"}\n]", 0, "line 2: a comma after the array's '['"),
        ("[\n{\"id\":\"a\"}\n],", 1, "line 3: a comma after the JSON array's closing ']'"),
    ] as [(String, Int, String?)])
    func aJSONArrayLoadsWholeOrSaysWhereItBreaks(input: String, stored: Int, message: String?) async throws {
        try await withScratch { dir in
            let load = try await runQuire(["load", "-", "--json"], stdin: Data(input.utf8), directory: dir)
            #expect(load.status == (message == nil ? 0 : 1), "\(load)")
            if let message { #expect(load.stderr.contains(message), "\(load)") }
            let dump = try await runQuire(["dump"], directory: dir)
            #expect(lines(dump.stdout).count == stored, "\(dump)")
        }
    }

    /// `load --collection` reads arrays by the articles' rules: one record a line, separated by
    /// exactly one comma (it took records with no commas between them, one after the last, and
    /// a whole array on one line).
    @Test(arguments: [
        ("[\n{\"id\":1,\"englishName\":\"a\"},\n{\"id\":2,\"englishName\":\"b\"}\n]", 2, nil),
        ("[\n{\"id\":1,\"englishName\":\"a\"}\n{\"id\":2,\"englishName\":\"b\"}\n]", 1, "line 3: no comma between this record"),
        ("[\n{\"id\":1,\"englishName\":\"a\"},\n{\"id\":2,\"englishName\":\"b\"},\n]", 2, "line 4: a comma after the JSON array's last record"),
        ("[{\"id\":1,\"englishName\":\"a\"},{\"id\":2,\"englishName\":\"b\"}]", 0, "line 1: load reads a JSON array as 'dump --format json' writes it"),
        ("{\"id\":1,\"englishName\":\"a\"},\n", 0, "line 1: a comma beside the record"),
    ] as [(String, Int, String?)])
    func anotherCollectionsArrayFollowsTheArticlesRules(input: String, stored: Int, message: String?) async throws {
        try await withScratch { dir in
            let load = try await runQuire(["load", "--collection", "categories", "-"], stdin: Data(input.utf8), directory: dir)
            #expect(load.status == (message == nil ? 0 : 1), "\(load)")
            if let message { #expect(load.stderr.contains(message), "\(load)") }
            let dump = try await runQuire(["dump", "--collection", "categories"], directory: dir)
            #expect(lines(dump.stdout).count == stored, "\(dump)")
        }
    }

    /// A load blocked reading a pipe that stays open stops on the first SIGINT, without waiting
    /// for more input: it exits while the pipe is still open. How soon is a wall-clock figure:
    /// alone it is a few milliseconds, but inside a full two-core `swift test` the child can
    /// wait seconds for a core, so the bound is far above that and far below "never".
    @Test func firstInterruptStopsALoadWaitingOnASlowPipe() async throws {
        try await withScratch { dir in
            let process = ChildProcess()
            process.executableURL = try QuireBinary.url()
            process.arguments = ["--store", dir.appendingPathComponent("s.db").path, "load", "-"]
            process.currentDirectoryURL = dir
            let input = Pipe()
            let errors = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            // A few lines, then the writer goes quiet without closing the pipe: they are committed
            // while it is quiet (the reader waited to fill a whole block, and a Ctrl-C dropped them).
            input.fileHandleForWriting.write(try generatedJSONL(count: 3))
            let store = dir.appendingPathComponent("s.db").path
            // Until the load has read them (nothing left in the pipe), then a little longer.
            var unread: Int32 = 1
            for _ in 0..<6_000 where unread > 0 {
                usleep(10_000)
                if ioctl(input.fileHandleForWriting.fileDescriptor, UInt(FIONREAD), &unread) != 0 { unread = 0 }
            }
            usleep(200_000)
            let sent = Date()
            kill(process.processIdentifier, SIGINT)
            let deadline = Date().addingTimeInterval(15)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            let waited = Date().timeIntervalSince(sent)
            let stoppedWhileOpen = !process.isRunning  // the pipe closes below
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try input.fileHandleForWriting.close()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(stoppedWhileOpen, "still running \(waited) s after SIGINT")
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 130, "\(stderr)")
            #expect(stderr.contains("load: interrupted"), "\(stderr)")
            let dump = try await runQuire(["--store", store, "dump"])
            #expect(dump.status == 0 && dump.stdout.split(separator: "\n").count == 3, "\(dump)")
        }
    }
}

/// The last line of defence: a fault inside LMDB (here sent from outside, since a damaged page
/// that makes LMDB fault depends on its version) ends `quire` with one line and status 1.
@Suite struct FaultHandlerTests {
    @Test(arguments: [SIGSEGV, SIGBUS, SIGABRT])
    func aFaultEndsWithOneLineAndStatus1(signalNumber: Int32) throws {
        try withScratch { dir in
            let process = ChildProcess()
            process.executableURL = try QuireBinary.url()
            process.arguments = ["--store", dir.appendingPathComponent("s.db").path, "load", "-"]
            let input = Pipe()
            let errors = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            // Before quire's handler is installed the signal would go to the Swift runtime's
            // backtracer (which catches faults from the start), whose helper program can keep
            // the child waiting for good. The SIGTERM handler is installed after it.
            #expect(Self.waitUntilCatching(SIGTERM, pid: process.processIdentifier), "no handler after 60 s")
            process.signal(signalNumber)
            let exited = process.waitUntilExit(timeout: 60)
            try input.fileHandleForWriting.close()
            guard exited else {
                process.signal(SIGKILL)
                Issue.record("still running 60 s after the signal")
                return
            }
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationReason == .exit, "\(stderr)")
            #expect(process.terminationStatus == 1, "\(stderr)")
            // An abort outside LMDB (out of memory under ulimit -v) is not said to be a damaged store.
            #expect(
                stderr
                    == (signalNumber == SIGABRT
                        ? "quire: aborted by the error above (most often memory that could not be allocated under a lower limit; else a damaged page of the store, or a bug); an abort loses nothing committed, and quire verify tells whether the store is damaged\n"
                        : "quire: the store is corrupted; run quire verify (LMDB stopped on a damaged page)\n"))
        }
    }

    /// Waits until process `pid` catches `signalNumber` (its bit in `SigCgt` of
    /// `/proc/PID/status`), for up to a minute; whether it does.
    static func waitUntilCatching(_ signalNumber: Int32, pid: Int32) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let caught = status.split(separator: "\n").first { $0.hasPrefix("SigCgt:") }
                .flatMap { UInt64($0.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16) }
            if let caught, caught & (1 << UInt64(signalNumber - 1)) != 0 { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }
}

/// A write that waits for another process's writer lock (a load stopped with Ctrl-Z holds it
/// for good) says so, and the first SIGINT or SIGTERM ends the wait: no safe point comes while
/// the lock is held, and the waiting process holds no transaction to lose.
@Suite struct WriterLockWaitTests {
    @Test(arguments: [SIGINT, SIGTERM])
    func theFirstSignalEndsAWaitForAnotherProcesssWriterLock(signalNumber: Int32) async throws {
        try await withScratch { dir in
            let store = dir.appendingPathComponent("s.db").path
            let input = dir.appendingPathComponent("in.jsonl")
            try generatedJSONL(count: 5).write(to: input)
            let first = try await runQuire(["--store", store, "load", input.path])
            #expect(first.status == 0, "\(first)")
            try generatedJSONL(count: 7, seed: 7).write(to: input)
            let holder = try WriterLockHolder(store)
            defer { holder.release() }
            try await expectTheFirstSignalEndsTheWait(["--store", store, "load", input.path, "--json"], signalNumber, dir, json: true)
            holder.release()
            let dump = try await runQuire(["--store", store, "dump"])
            #expect(dump.status == 0 && dump.stdout.split(separator: "\n").count == 5, "\(dump)")
            let verify = try await runQuire(["--store", store, "verify"])
            #expect(verify.status == 0, "\(verify)")
        }
    }

    /// A plain copy takes the writer lock to read the meta pages: it waited silently for a
    /// stopped writer and the first Ctrl-C did not end it. (A compacting copy takes no lock.)
    @Test func aCopyWaitingForAnotherProcesssWriterLockSaysSoAndStops() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 5)
            let backup = dir.appendingPathComponent("backup").path
            let holder = try WriterLockHolder(store)
            defer { holder.release() }
            let compact = try await runQuire(["--store", store, "copy", backup + "-compact", "--compact", "--quiet"], timeout: 60)
            #expect(compact.status == 0, "\(compact)")
            // Ended as a write's wait is, and cleaned up as every stopped copy is: the exit had
            // left `.data.mdb.partial-…` in the directory the copy made.
            try await expectTheFirstSignalEndsTheWait(["--store", store, "copy", backup], SIGINT, dir)
            #expect(!FileManager.default.fileExists(atPath: backup), "\((try? FileManager.default.contentsOfDirectory(atPath: backup)) ?? [])")
            holder.release()
            let copy = try await runQuire(["--store", store, "copy", backup, "--quiet"], timeout: 60)
            #expect(copy.status == 0, "\(copy)")
            let dump = try await runQuire(["--store", backup, "dump"])
            #expect(dump.status == 0 && dump.stdout.split(separator: "\n").count == 5, "\(dump)")
        }
    }

    /// Runs `args`, which must come to wait for the writer lock held by this process: it says
    /// so, and the first `signalNumber` ends it at once with status 130 (with `json`, a JSON
    /// answer on stdout, as every other stop of a `--json` run gives).
    private func expectTheFirstSignalEndsTheWait(
        _ args: [String], _ signalNumber: Int32, _ dir: URL, json: Bool = false,
        message: String = "interrupted while waiting for another process"
    ) async throws {
        let errURL = dir.appendingPathComponent("stderr-\(UUID().uuidString)")
        let outURL = dir.appendingPathComponent("stdout-\(UUID().uuidString)")
        try Data().write(to: errURL)
        try Data().write(to: outURL)
        let errors = try FileHandle(forWritingTo: errURL)
        let output = try FileHandle(forWritingTo: outURL)
        defer {
            try? errors.close()
            try? output.close()
        }
        let process = try startQuire(args, directory: dir, stdout: output, stderr: errors)
        var stderr = ""
        for _ in 0..<3_000 where process.isRunning && !stderr.contains("waiting for another process") {
            try await Task.sleep(for: .milliseconds(10))
            stderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        }
        #expect(stderr.contains("waiting for another process that is writing"), "\(args): \(stderr)")
        kill(process.processIdentifier, signalNumber)
        for _ in 0..<1_000 where process.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        let stoppedWhileHeld = !process.isRunning
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        stderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        #expect(stoppedWhileHeld, "still waiting 10 s after the first signal: \(args): \(stderr)")
        // 130 for either signal, as every first-signal stop: a clean exit, not a kill.
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(args): \(stderr)")
        #expect(stderr.contains(message), "\(args): \(stderr)")
        let stdout = try Data(contentsOf: outURL)
        if json {
            let answer = try JSONSerialization.jsonObject(with: stdout) as? [String: Any]
            #expect(answer?["interrupted"] as? Bool == true && answer?["error"] is String, "\(args): \(String(decoding: stdout, as: UTF8.self))")
        } else {
            #expect(stdout.isEmpty)
        }
    }
}

/// Holds a store's LMDB writer lock from this process (an open write transaction on a thread of
/// its own) until released, as a writer stopped with Ctrl-Z would.
private final class WriterLockHolder: Sendable {
    private let holding = DispatchSemaphore(value: 0)
    private let letGo = DispatchSemaphore(value: 0)
    private let closed = DispatchSemaphore(value: 0)
    private let state = Mutex((failed: false, released: false))

    init(_ path: String) throws {
        let environment = try Environment(path: path)
        Thread { [self] in
            do {
                try environment.write { _ in
                    holding.signal()
                    letGo.wait()
                }
            } catch {
                state.withLock { $0.failed = true }
                holding.signal()
            }
            environment.close()
            closed.signal()
        }.start()
        holding.wait()
        if state.withLock({ $0.failed }) { throw QuireRunError(description: "could not take the writer lock of \(path)") }
    }

    /// Ends the transaction (once; later calls do nothing) and waits for the environment to close.
    func release() {
        let first = state.withLock { state in
            defer { state.released = true }
            return !state.released && !state.failed
        }
        guard first else { return }
        letGo.signal()
        closed.wait()
    }
}
