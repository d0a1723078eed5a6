import Foundation
import QuireTestSupport

/// What one run of the `quire` binary produced.
struct QuireResult: Sendable, CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String
    /// True when a signal ended the process (`status` is then the signal number).
    var signaled = false
    /// True when the run took longer than its timeout and was killed.
    var timedOut = false

    var description: String { "\(signaled ? "signal" : "status") \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// Why the binary could not be run at all.
struct QuireRunError: Error, CustomStringConvertible {
    let description: String
}

/// Starts the built `quire` binary (or `executable`, a shell wrapping it) with `args` in
/// `directory`, its output into `stdout` and its errors discarded, for a test that signals it or
/// reads its output while it runs.
func startQuire(
    _ args: [String], directory: URL, stdout: FileHandle, stderr: FileHandle? = nil, executable: URL? = nil
) throws -> ChildProcess {
    let process = ChildProcess()
    process.executableURL = try executable ?? QuireBinary.url()
    process.arguments = args
    process.currentDirectoryURL = directory
    process.standardOutput = stdout
    process.standardError = stderr ?? FileHandle.nullDevice
    try process.run()
    return process
}

/// Runs the built `quire` binary with `args` and returns its exit status, stdout and stderr.
///
/// - Parameters:
///   - stdin: bytes for its standard input; nil gives it `/dev/null`.
///   - environment: variables added to (or, with an empty value, removed from) this process's
///     environment. `QUIRE_STORE` and `NYT_API_KEY` are removed unless given, so a developer's
///     own settings never leak into a test.
///   - directory: the working directory (where the default `./quire.db` would be); a fresh
///     temporary directory when nil, so no test touches the package directory.
///   - executable: another program to run instead of `quire` (a shell wrapping it).
///   - timeout: seconds after which the process is killed (`timedOut`); nil waits for ever.
func runQuire(
    _ args: [String], stdin: Data? = nil, environment: [String: String] = [:], directory: URL? = nil,
    executable: URL? = nil, timeout: TimeInterval? = nil
) async throws -> QuireResult {
    let scratch = FileManager.default.temporaryDirectory
        .appendingPathComponent("quire-cli-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }

    // Files rather than pipes: no deadlock when the child writes more than a pipe holds.
    let outURL = scratch.appendingPathComponent("stdout")
    let errURL = scratch.appendingPathComponent("stderr")
    try Data().write(to: outURL)
    try Data().write(to: errURL)
    let outHandle = try FileHandle(forWritingTo: outURL)
    let errHandle = try FileHandle(forWritingTo: errURL)
    defer {
        try? outHandle.close()
        try? errHandle.close()
    }

    let process = ChildProcess()
    process.executableURL = try executable ?? QuireBinary.url()
    process.arguments = args
    process.currentDirectoryURL = directory ?? scratch
    var env = ProcessInfo.processInfo.environment
    env["QUIRE_STORE"] = nil
    env["NYT_API_KEY"] = nil
    for (name, value) in environment { env[name] = value.isEmpty ? nil : value }
    process.environment = env
    process.standardOutput = outHandle
    process.standardError = errHandle
    if let stdin {
        let inURL = scratch.appendingPathComponent("stdin")
        try stdin.write(to: inURL)
        process.standardInput = try FileHandle(forReadingFrom: inURL)
    } else {
        process.standardInput = FileHandle.nullDevice
    }
    try process.run()
    // Polled with a sleep rather than waited on: a blocking wait would hold one of the
    // cooperative pool's threads (two on a 2-core machine) for the child's whole run and starve
    // the tests that run beside this one.
    var timedOut = false
    let deadline = timeout.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
    while process.isRunning {
        if let deadline, ContinuousClock.now >= deadline {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
            break
        }
        do { try await Task.sleep(for: .milliseconds(2)) } catch {
            kill(process.processIdentifier, SIGKILL)  // cancelled: leave no child behind
            process.waitUntilExit()
            throw error
        }
    }
    process.waitUntilExit()

    let out = try Data(contentsOf: outURL)
    let err = try Data(contentsOf: errURL)
    return QuireResult(
        status: process.terminationStatus,
        stdout: String(decoding: out, as: UTF8.self),
        stderr: String(decoding: err, as: UTF8.self),
        signaled: process.terminationReason == .uncaughtSignal, timedOut: timedOut)
}

/// Finds the `quire` executable built alongside these tests.
enum QuireBinary {
    /// `$QUIRE_BINARY` when set; else `quire` in the build products directory the test bundle
    /// runs from; else `.build/debug/quire` under the package root.
    static func url() throws -> URL {
        if let cached = cachedURL { return cached }
        throw QuireRunError(
            description: "cannot find the quire binary; build it first (swift build --product quire) "
                + "or set QUIRE_BINARY; looked in: \(candidates.map(\.path).joined(separator: ", "))")
    }

    private static let cachedURL: URL? = candidates.first { isExecutableFile($0) }

    private static var candidates: [URL] {
        var found: [URL] = []
        if let path = ProcessInfo.processInfo.environment["QUIRE_BINARY"], !path.isEmpty {
            found.append(URL(fileURLWithPath: path))
        }
        // The test bundle (or the runner executing it) lives in the products directory, or a
        // few levels under it (`QuirePackageTests.xctest/Contents/MacOS` on macOS).
        var starts = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments.first ?? ".")]
        if let executable = Bundle.main.executableURL { starts.append(executable) }
        starts.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath())
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            starts.append(bundle.bundleURL)
        }
        for start in starts {
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                found.append(directory.appendingPathComponent("quire"))
                directory = directory.deletingLastPathComponent()
            }
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        found.append(packageRoot.appendingPathComponent(".build/debug/quire"))
        return found
    }

    private static func isExecutableFile(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: url.path)
    }
}
