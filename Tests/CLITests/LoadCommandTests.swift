import Foundation
import Testing
import QuireTestSupport

/// `quire load`: bad records named by line and field with the records before them committed,
/// records loaded twice stored once, and a signal that stops a load waiting for input.
@Suite struct LoadCommandTests {
    private func dumpCount(_ dir: URL) async throws -> Int {
        let dump = try await runQuire(["dump"], directory: dir)
        #expect(dump.status == 0, "\(dump)")
        return lines(dump.stdout).count
    }

    @Test(arguments: [
        (#"{"id":"bad","wordCount":3.7}"#, "wordCount: expected a whole number written without a fraction or an exponent, found 3.7"),
        (#"{"id":"bad","headline":12}"#, "headline: expected a string, found the number 12"),
        (#"{"id":""}"#, "id: the id is empty"),
        (#"{"id":" \t\u00a0"}"#, "id: the id is white space only"),
        (#"{"id":"list-1","title":"A list","articleIDs":["a","b"]}"#, "title: unknown field, not an article"),
        (#"{"id":"bad","publishedAt":"last week"}"#, "publishedAt: not a date"),
        ("# a comment", "expected an object, found '#', which is not JSON"),
    ])
    func aBadRecordNamesLineAndFieldAndKeepsTheRecordsBefore(line: String, message: String) async throws {
        try await withScratch { dir in
            var input = try generatedJSONL(count: 7)
            input.append(Data((line + "\n").utf8))
            input.append(try generatedJSONL(count: 3, seed: 5))
            let load = try await runQuire(["load", "-", "--quiet"], stdin: input, directory: dir)
            #expect(load.status == 1, "\(load)")
            #expect(load.stderr.hasPrefix("quire: load: line 8: \(message)"), "\(load)")
            #expect(load.stderr.contains("(7 records loaded before it)"), "\(load)")
            #expect(try await dumpCount(dir) == 7)
            let verify = try await runQuire(["verify"], directory: dir)
            #expect(verify.status == 0, "\(verify)")
        }
    }

    @Test func oneRecordBeforeABadLineIsCountedInTheSingular() async throws {
        try await withScratch { dir in
            var input = try generatedJSONL(count: 1)
            input.append(Data(#"{"id":"bad","wordCount":"many"}"#.utf8))
            let load = try await runQuire(["load", "-", "--quiet"], stdin: input, directory: dir)
            #expect(load.status == 1, "\(load)")
            #expect(load.stderr.contains("(1 record loaded before it)"), "\(load)")
        }
    }

    @Test func aByteOrderMarkBeforeTheFirstLineIsSkipped() async throws {
        try await withScratch { dir in
            var input = Data([0xEF, 0xBB, 0xBF])
            input.append(try generatedJSONL(count: 5))
            let load = try await runQuire(["load", "-", "--json"], stdin: input, directory: dir)
            #expect(load.status == 0, "\(load)")
            #expect(load.stdout.contains("\"records\":5"), "\(load)")
            #expect(try await dumpCount(dir) == 5)
        }
    }

    @Test func recordsLoadedTwiceAreStoredOnce() async throws {
        try await withScratch { dir in
            let input = try generatedJSONL(count: 60)
            for _ in 0..<2 {
                let load = try await runQuire(["load", "-", "--json"], stdin: input, directory: dir)
                #expect(load.status == 0, "\(load)")
                #expect(load.stdout.contains("\"records\":60"), "\(load)")
            }
            #expect(try await dumpCount(dir) == 60)
            // The same line twice in one input: one record, the later line's value.
            let first = try #require(lines(String(decoding: input, as: UTF8.self)).first)
            var object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
            object["headline"] = "the second copy"
            let second = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            let twice = try await runQuire(["load", "-", "--json"], stdin: Data((first + "\n" + second + "\n").utf8), directory: dir)
            #expect(twice.status == 0, "\(twice)")
            #expect(twice.stdout.contains("\"records\":1,\"read\":2"), "\(twice)")
            #expect(try await dumpCount(dir) == 60)
            let id = try #require(object["id"] as? String)
            let get = try await runQuire(["get", id], directory: dir)
            #expect(get.stdout.contains("the second copy"), "\(get)")
            let stats = try await runQuire(["stats"], directory: dir)
            #expect(stats.stdout.contains("collection   articles: 60 records,"), "\(stats)")
            // Counted once however the ids repeat: in order, apart, or through the temporary file.
            let all = lines(String(decoding: input, as: UTF8.self))
            let repeats = Array(all[10..<30]) + Array(all[5..<8])
            for (order, window) in [("shuffled", nil), ("sorted", nil), ("shuffled", "65536")] as [(String, String?)] {
                var text = all + repeats
                if order == "sorted" { text.sort() } else { text.shuffle() }
                let scratch = "counted-\(order)-\(window ?? "memory").db"
                let load = try await runQuire(
                    ["--store", scratch, "load", "-"], stdin: Data((text.joined(separator: "\n") + "\n").utf8),
                    environment: window.map { ["QUIRE_LOAD_SORT_WINDOW": $0] } ?? [:], directory: dir)
                #expect(load.status == 0, "\(load)")
                #expect(load.stderr.contains("load: 60 records (83 read: 23 repeated an id read before, the last kept)"), "\(order): \(load)")
            }
        }
    }

    /// A signal while the load waits for more input stops it at once (status 130). What it read
    /// is committed when it is all in memory; once a sort window went to the temporary file
    /// (a 64 KiB window here), nothing of it is: merging the runs would take as long as the load
    /// so far, and a signal must not wait for that. SIGHUP (the terminal closed) stops it as
    /// SIGTERM does.
    @Test(arguments: [(false, SIGTERM), (true, SIGTERM), (false, SIGHUP)])
    func aSignalStopsALoadWaitingForInput(spilled: Bool, signal signalNumber: Int32) async throws {
        try await withScratch { dir in
            // Several 64 KiB blocks, then the writer keeps the pipe open and sends nothing.
            let input = try generatedJSONL(count: 400)
            let sent = lines(String(decoding: input, as: UTF8.self)).count
            let process = ChildProcess()
            process.executableURL = try QuireBinary.url()
            process.arguments = ["load", "-", "--quiet"]
            process.currentDirectoryURL = dir
            var environment = ProcessInfo.processInfo.environment
            environment["QUIRE_LOAD_BLOCK_BYTES"] = "65536"
            if spilled { environment["QUIRE_LOAD_SORT_WINDOW"] = "65536" }
            environment["QUIRE_STORE"] = nil
            process.environment = environment
            let pipe = Pipe()
            let errors = Pipe()
            process.standardInput = pipe
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            // All but the last tenth: the load then waits in a block it cannot finish.
            pipe.fileHandleForWriting.write(input.prefix(input.count * 9 / 10))
            // Until the load has read all of it (the pipe is empty), then a little longer: it
            // is waiting for the rest of its last block. (A full `swift test` on two cores once
            // starved the load for over a minute.)
            let deadline = Date().addingTimeInterval(300)
            var unread: Int32 = 1
            while unread > 0, Date() < deadline {
                _ = ioctl(pipe.fileHandleForWriting.fileDescriptor, UInt(FIONREAD), &unread)  // either end: Linux counts the pipe's bytes
                try await Task.sleep(for: .seconds(0.05))
            }
            #expect(unread == 0)
            try await Task.sleep(for: .seconds(0.5))
            kill(process.processIdentifier, signalNumber)
            let stop = Date().addingTimeInterval(30)
            while process.isRunning && Date() < stop { try await Task.sleep(for: .seconds(0.05)) }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try pipe.fileHandleForWriting.close()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 130, "\(stderr)")
            #expect(stderr.contains("load: interrupted") && stderr.contains("; the store is consistent"), "\(stderr)")
            // Into a pipe, not a terminal: the handler's message starts no blank line.
            #expect(stderr.contains("quire: interrupted; stopping at a safe point") && !stderr.contains("\n\n"), "\(stderr)")
            let committed = try await dumpCount(dir)
            // It says what it kept.
            if spilled {
                #expect(committed == 0)
                #expect(stderr.contains("load: interrupted before any record was committed"), "\(stderr)")
            } else {
                #expect(committed > 0 && committed < sent, "\(committed) of \(sent)")
                #expect(stderr.contains("load: interrupted after its \(committed) records were committed"), "\(stderr)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("quire.db").path).sorted()
                == ["data.mdb", "lock.mdb"])
            let verify = try await runQuire(["verify"], directory: dir)
            #expect(verify.status == 0, "\(verify)")
            // Loading the whole input again completes the store, without duplicates.
            let again = try await runQuire(
                ["load", "-", "--quiet"], stdin: input, environment: ["QUIRE_LOAD_BLOCK_BYTES": "65536"], directory: dir)
            #expect(again.status == 0, "\(again)")
            #expect(try await dumpCount(dir) == sent)
        }
    }

    /// A record whose section is `""` is stored, in no section's index (a key has a byte at
    /// least), as a fetched document's empty section is; a query for that section (`section:""`)
    /// and `--section ""` are usage errors (as the HTTP API's 400).
    @Test func anEmptySectionIsStoredOutOfTheSectionIndex() async throws {
        try await withScratch { dir in
            let input = [
                #"{"id":"a","headline":"storm a","section":"World"}"#, #"{"id":"b","headline":"storm b","section":""}"#,
                #"{"id":"c","headline":"storm c"}"#,
            ]
            let load = try await runQuire(["load", "-"], stdin: Data(input.joined(separator: "\n").utf8), directory: dir)
            #expect(load.status == 0 && load.stderr.contains("3 records"), "\(load)")
            let verify = try await runQuire(["verify"], directory: dir)
            #expect(verify.status == 0 && verify.stdout.contains("1 index entries"), "\(verify)")
            let query = try await runQuire(["search", #"storm section:"""#], directory: dir)
            #expect(query.status == 64 && query.stdout.isEmpty && query.stderr.contains("'section:' has nothing to apply to"), "\(query)")
            let option = try await runQuire(["dump", "--section", ""], directory: dir)
            #expect(option.status == 64 && option.stdout.isEmpty, "\(option)")
            let world = try await runQuire(["search", "storm", "--section", "World"], directory: dir)
            #expect(lines(world.stdout).count == 1, "\(world)")
        }
    }

    /// `--json` answers a failed load too: what was committed before the bad line, and why.
    /// Messages count in the singular and say when a number is out of range, not "not whole".
    @Test func aFailedLoadStillAnswersInJSON() async throws {
        try await withScratch { dir in
            let input = #"{"id":"a"}"# + "\n" + #"{"id":"b","wordCount":99999999999999999999}"#
            let load = try await runQuire(["load", "-", "--json"], stdin: Data(input.utf8), directory: dir)
            #expect(load.status == 1, "\(load)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(load.stdout.utf8)) as? [String: Any])
            #expect(json["records"] as? Int == 1 && json["line"] as? Int == 2, "\(load)")
            #expect((json["error"] as? String)?.contains("out of range") == true, "\(load)")
            let one = try await runQuire(["load", "-"], stdin: Data(#"{"id":"c"}"#.utf8), directory: dir)
            #expect(one.stderr.hasSuffix("quire: load: 1 record\n"), "\(one)")
        }
    }
}
