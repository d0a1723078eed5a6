import Foundation
import QuireTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The tests' own `posix_spawn` runner (Foundation's `Process` can crash a test process that
/// holds many descriptors): what a child gets and how its end is reported.
@Suite struct ChildProcessTests {
    /// Runs `/bin/sh -c script` with its output into a pipe; its output and the process.
    private func shell(
        _ script: String, environment: [String: String]? = nil, directory: URL? = nil
    ) throws -> (output: String, process: ChildProcess) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.environment = environment
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: output, as: UTF8.self), process)
    }

    @Test func aChildOfAProcessHoldingThousandsOfDescriptorsGetsOnlyTheStandardThree() throws {
        // More than fill glibc's directory buffer when listed (Foundation's crash), none of them
        // close-on-exec: each would reach the child unless it is closed there.
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<1_500 {
            let descriptor = dup(STDERR_FILENO)
            try #require(descriptor >= 0)
            held.append(descriptor)
        }
        // `ls` lists its own descriptors: the three it was given and the directory it reads.
        let (output, process) = try shell("exec ls /proc/self/fd")
        #expect(process.terminationStatus == 0 && process.terminationReason == .exit)
        let listed = Set(output.split(separator: "\n").compactMap { Int32($0) })
        #expect(listed.isSuperset(of: [0, 1, 2]))
        #expect(listed.subtracting([0, 1, 2]).count <= 1, "inherited: \(listed.sorted())")
        #expect(listed.isDisjoint(with: held), "inherited: \(listed.intersection(held).sorted())")
    }

    @Test func anExitCodeAndASignalAreToldApart() throws {
        let exited = try shell("exit 3").process
        #expect(exited.terminationStatus == 3 && exited.terminationReason == .exit)
        #expect(!exited.isRunning)
        let killed = try shell("kill -TERM $$").process
        #expect(killed.terminationStatus == SIGTERM && killed.terminationReason == .uncaughtSignal)
    }

    @Test func itRunsInTheGivenDirectoryWithTheGivenEnvironment() throws {
        try withTemporaryDirectory("child") { path in
            let directory = URL(fileURLWithPath: path).resolvingSymlinksInPath()
            let (output, _) = try shell("pwd; echo \"[$QUIRE_CHILD_TEST][$HOME]\"", environment: ["QUIRE_CHILD_TEST": "given"], directory: directory)
            #expect(output == "\(directory.path)\n[given][]\n")
        }
    }

    @Test func aMissingProgramIsAnErrorAtRun() {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/nonexistent/quire-child-test")
        #expect(throws: POSIXError.self) { try process.run() }
        #expect(!process.isRunning && process.processIdentifier == 0)
    }
}
