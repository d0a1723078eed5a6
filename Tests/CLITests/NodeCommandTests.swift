import Foundation
import QuireFixtures
import Testing
import QuireTestSupport

/// `quire node` and `quire fixtures` as a user meets them: usage errors exit 64 naming the
/// option, a missing key is a runtime error, and an unreachable etcd is reported without
/// touching anything but the store. (The cluster itself: Tests/QuireClusterTests and
/// scripts/cluster-test.sh.)
@Suite struct NodeCommandTests {
    @Test func badOptionsAreUsageErrors() async throws {
        let missing = try await runQuire(["node"])
        #expect(missing.status == 64 && missing.stderr.contains("--etcd"), "\(missing)")
        let scheme = try await runQuire(["node", "--etcd", "127.0.0.1:2379"])
        #expect(scheme.status == 64 && scheme.stderr.contains("--etcd"), "\(scheme)")
        let source = try await runQuire(["node", "--etcd", "http://127.0.0.1:1", "--fetch", "rss:x"])
        #expect(source.status == 64 && source.stderr.contains("nyt:QUERY"), "\(source)")
        let ttl = try await runQuire(["node", "--etcd", "http://127.0.0.1:1", "--lease-ttl", "1"])
        #expect(ttl.status == 64 && ttl.stderr.contains("--lease-ttl"), "\(ttl)")
        let member = try await runQuire(["node", "--etcd", "http://127.0.0.1:1", "--member", "a/b"])
        #expect(member.status == 64 && member.stderr.contains("--member"), "\(member)")
        let rate = try await runQuire(["node", "--etcd", "http://127.0.0.1:1", "--rate", "5/hour"])
        #expect(rate.status == 64 && rate.stderr.contains("--rate"), "\(rate)")
        let hostless = try await runQuire(["node", "--etcd", "http://"])
        #expect(hostless.status == 64 && hostless.stderr.contains("--etcd"), "\(hostless)")
        for empty in ["", ",", "http://127.0.0.1:1,,http://127.0.0.1:2"] {
            let none = try await runQuire(["node", "--etcd", empty])
            #expect(none.status == 64 && none.stderr.contains("--etcd"), "\(empty): \(none)")
        }
        // Twice: two fetch loops of one source in one member, every page fetched twice.
        for wildcard in ["0.0.0.0", "::"] {
            let published = try await runQuire(["node", "--etcd", "http://127.0.0.1:1", "--snapshot-host", wildcard])
            #expect(published.status == 64 && published.stderr.contains("peers reach this node at"), "\(published)")
        }
        let twice = try await runQuire(["node", "--etcd", "http://127.0.0.1:1", "--fetch", "feedzilla:1", "--fetch", "feedzilla:1"])
        #expect(twice.status == 64 && twice.stderr.contains("given twice"), "\(twice)")
        let reordered = try await runQuire(["node", "--etcd", "http://127.0.0.1:1", "--fetch", "feedzilla:1,2", "--fetch", "feedzilla:2,1"])
        #expect(reordered.status == 64 && reordered.stderr.contains("given twice"), "\(reordered)")
    }

    /// `quire fixtures --port` listens where it is told (a fetch's source is named by host and
    /// port, so a fetch resumes against a server restarted there); a port in use is an error.
    @Test func fixturesListenOnTheGivenPort() async throws {
        let taken = try FixtureAPI(configuration: FixtureAPI.Configuration())
        let port = taken.port
        let busy = try await runQuire(["fixtures", "--port", String(port)], timeout: 30)
        #expect(busy.status == 1 && busy.stderr.contains("cannot start the fixture API"), "\(busy)")
        taken.stop()
        try await withScratch { dir in
            let out = dir.appendingPathComponent("out")
            try Data().write(to: out)
            let handle = try FileHandle(forWritingTo: out)
            defer { try? handle.close() }
            let process = try startQuire(["fixtures", "--port", String(port)], directory: dir, stdout: handle)
            defer {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
            }
            var printed = ""
            for _ in 0..<1_000 where process.isRunning && !printed.contains("\n") {
                try await Task.sleep(for: .milliseconds(10))
                printed = String(decoding: try Data(contentsOf: out), as: UTF8.self)
            }
            #expect(printed.hasPrefix("http://127.0.0.1:\(port)\n"), "\(printed)")
            let fetched = try await runQuire(
                ["--store", dir.appendingPathComponent("s.db").path, "fetch", "feedzilla", "--base-url",
                 "http://127.0.0.1:\(port)", "--json", "-q"], timeout: 120)
            #expect(fetched.status == 0 && fetched.stdout.contains("\"complete\":true"), "\(fetched)")
            kill(process.processIdentifier, SIGTERM)
        }
        let invalid = try await runQuire(["fixtures", "--port", "70000"])
        #expect(invalid.status == 64 && invalid.stderr.contains("--port"), "\(invalid)")
    }

    /// A URL that answers but is not etcd (here the fixture news API) is named as such, not
    /// reported as a refusal with gRPC code 0.
    @Test func aServerThatIsNotEtcdIsNamed() async throws {
        let api = try FixtureAPI(configuration: FixtureAPI.Configuration())
        defer { api.stop() }
        try await withScratch { dir in
            // `--rate` is spelled as `fetch` spells it (`N/min`, or a bare `N`).
            let result = try await runQuire(["node", "--etcd", api.baseURL, "--rate", "7/min"], directory: dir)
            #expect(result.status == 1 && result.stderr.contains("not as etcd's v3 JSON gateway"), "\(result)")
        }
    }

    /// A signal while the first request waits on an etcd that does not answer is a stop (exit
    /// 0, "stopped"), not a failure (it exited 1 with "cancelled: cancelled").
    @Test func aSignalDuringTheFirstEtcdRequestIsAStop() throws {
        // A listening socket that never accepts: connections complete, requests get no answer.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound && listen(listener, 16) == 0)
        let port = UInt16(bigEndian: address.sin_port)
        try withScratch { dir in
            let err = dir.appendingPathComponent("node.err")
            try Data().write(to: err)
            let errors = try FileHandle(forWritingTo: err)
            defer { try? errors.close() }
            let node = try startQuire(
                ["node", "--etcd", "http://127.0.0.1:\(port)", "--member", "m1"], directory: dir, stdout: FileHandle.nullDevice,
                stderr: errors)
            var tries = 0
            while !((try? String(contentsOf: err, encoding: .utf8)) ?? "").contains("Ctrl-C stops") && tries < 400 {
                tries += 1
                usleep(50_000)
            }
            usleep(300_000)  // into the first request
            kill(node.processIdentifier, SIGTERM)
            node.waitUntilExit()
            let said = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            #expect(node.terminationStatus == 0 && said.contains("node: stopped"), "\(node.terminationStatus): \(said)")
        }
    }

    /// A password in an `--etcd` URL (`http://user:password@host`) is never printed: not in the
    /// start line, the events of a member retrying an unreachable etcd, nor a usage error (all
    /// three echoed it, where `--base-url` credentials were redacted).
    @Test func anEtcdPasswordIsNeverPrinted() async throws {
        let secret = "s3cretPW1x"
        let usage = try await runQuire(["node", "--etcd", "ftp://root:\(secret)@127.0.0.1:1"])
        #expect(usage.status == 64 && !usage.stderr.contains(secret) && usage.stderr.contains("--etcd"), "\(usage)")
        try withScratch { dir in
            let (out, err) = (dir.appendingPathComponent("node.out"), dir.appendingPathComponent("node.err"))
            try Data().write(to: out)
            try Data().write(to: err)
            let (output, errors) = (try FileHandle(forWritingTo: out), try FileHandle(forWritingTo: err))
            defer { try? output.close(); try? errors.close() }
            let node = try startQuire(
                ["node", "--etcd", "http://root:\(secret)@127.0.0.1:1", "--member", "m1"], directory: dir, stdout: output,
                stderr: errors)
            var tries = 0
            while !((try? String(contentsOf: out, encoding: .utf8)) ?? "").contains("retrying") && node.isRunning && tries < 600 {
                tries += 1
                usleep(50_000)
            }
            kill(node.processIdentifier, SIGTERM)
            node.waitUntilExit()
            let printed = ((try? String(contentsOf: out, encoding: .utf8)) ?? "") + ((try? String(contentsOf: err, encoding: .utf8)) ?? "")
            #expect(printed.contains("retrying") && printed.contains("REDACTED@127.0.0.1:1"), "\(printed)")
            #expect(!printed.contains(secret), "\(printed)")
        }
    }

    @Test func anNYTSourceNeedsTheKey() async throws {
        let result = try await runQuire(
            ["node", "--etcd", "http://127.0.0.1:1", "--fetch", "nyt:q"], environment: ["NYT_API_KEY": ""])
        #expect(result.status == 1 && result.stderr.contains("NYT_API_KEY"), "\(result)")
    }

    @Test func helpListsTheClusterCommands() async throws {
        let help = try await runQuire(["help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("node") && help.stdout.contains("fixtures"), "\(help)")
        let node = try await runQuire(["node", "--help"])
        #expect(node.stdout.contains("--fetch") && node.stdout.contains("docs/CLUSTER.md"), "\(node)")
    }
}
