import Foundation
import QuireLMDB
import Testing
import QuireTestSupport

/// Loads `count` generated articles into `dir/quire.db` and returns the store's path.
func makeStore(in dir: URL, count: Int = 120) async throws -> String {
    let load = try await runQuire(["load", "-", "--quiet"], stdin: try generatedJSONL(count: count), directory: dir)
    #expect(load.status == 0, "\(load)")
    return dir.appendingPathComponent("quire.db").path
}

private func fileSize(_ path: String) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
}

private func truncate(_ path: String, to size: Int) throws {
    let handle = try #require(FileHandle(forUpdatingAtPath: path))
    try handle.truncate(atOffset: UInt64(size))
    try handle.close()
}

/// Changes the data file of the store at `store` with `edit`, given its bytes and the offset of
/// its newest meta page (the one of the higher transaction id, at byte 144 of each).
private func editMetaPages(of store: String, _ edit: (inout [UInt8], _ newest: Int) -> Void) throws {
    let data = URL(fileURLWithPath: store + "/data.mdb")
    var bytes = try [UInt8](Data(contentsOf: data))
    func word(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
    edit(&bytes, word(4096 + 144) > word(144) ? 4096 : 0)
    try Data(bytes).write(to: data)
}

/// Moves the record under `old` to `new` in LMDB itself, value and checksum kept, as one damaged
/// key byte would; false when there is no such record.
private func rekey(_ path: String, from old: String, to new: String) throws -> Bool {
    let environment = try Environment(path: path)
    defer { environment.close() }
    let database = try environment.openDatabase("c:articles")
    return try environment.write { txn in
        guard let value = try txn.get(Array(old.utf8), in: database) else { return false }
        _ = try txn.delete(Array(old.utf8), in: database)
        try txn.put(value, forKey: Array(new.utf8), in: database)
        return true
    }
}

/// Truncated and empty data files, and directories that are not stores.
@Suite struct DamagedStoreTests {
    @Test(arguments: [2, 4, 100, 0])
    func truncatedDataFileIsRefusedByEveryCommand(divisor: Int) async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir)
            let data = store + "/data.mdb"
            let size = try fileSize(data)
            let cut = divisor == 0 ? 0 : size / divisor
            try truncate(data, to: cut)
            for args in [["stats"], ["dump"], ["verify"], ["get", "x"], ["load", "-"], ["copy", dir.path + "/backup"]] {
                let result = try await runQuire(args, stdin: Data(), directory: dir)
                #expect(!result.signaled, "\(args): \(result)")
                #expect(result.status == 1, "\(args): \(result)")
                #expect(result.stderr.contains("store file truncated (\(cut) of "), "\(args): \(result)")
                #expect(result.stderr.contains("restore a backup"), "\(args): \(result)")
                #expect(result.stdout.isEmpty, "\(args): \(result)")
            }
            // Nothing replaced the damaged file.
            #expect(try fileSize(data) == cut)
        }
    }

    /// A record's checksum covers its value, not its key: a damaged key byte served the record
    /// under another id with status 0. `get` compares the id the record names with the one asked.
    @Test func getRefusesARecordStoredUnderAnotherID() async throws {
        try await withScratch { dir in
            let records = #"{"id":"k010","headline":"ten"}"# + "\n" + #"{"id":"k020","headline":"twenty"}"# + "\n"
            let load = try await runQuire(["load", "-", "--quiet"], stdin: Data(records.utf8), directory: dir)
            try #require(load.status == 0, "\(load)")
            #expect(try rekey(dir.appendingPathComponent("quire.db").path, from: "k020", to: "k015"))
            let get = try await runQuire(["get", "k015"], directory: dir)
            #expect(get.status == 1 && get.stdout.isEmpty, "\(get)")
            #expect(get.stderr.contains("names itself 'k020': a damaged key"), "\(get)")
            let sound = try await runQuire(["get", "k010"], directory: dir)
            #expect(sound.status == 0 && sound.stdout.contains(#""headline":"ten""#), "\(sound)")
        }
    }

    /// A search hit whose record the collection does not hold (a part of the records' tree
    /// unreadable, here the record moved away as a damaged key byte would) was left out of the
    /// answer with status 0; it is damage, said.
    @Test func aSearchHitWithoutItsRecordIsDamageNotAGap() async throws {
        try await withScratch { dir in
            let records = #"{"id":"k010","headline":"storm warning"}"# + "\n" + #"{"id":"k020","headline":"storm passes"}"# + "\n"
            let load = try await runQuire(["load", "-", "--quiet"], stdin: Data(records.utf8), directory: dir)
            try #require(load.status == 0, "\(load)")
            let sound = try await runQuire(["search", "storm"], directory: dir)
            #expect(sound.status == 0 && lines(sound.stdout).count == 2, "\(sound)")
            #expect(try rekey(dir.appendingPathComponent("quire.db").path, from: "k020", to: "k025"))
            let search = try await runQuire(["search", "storm"], directory: dir)
            #expect(search.status == 1, "\(search)")
            #expect(search.stderr.contains("the search index names record k020, which the collection does not hold"), "\(search)")
        }
    }

    /// The newest meta page naming a last page beyond any file (its size would overflow): every
    /// command said only "Cannot allocate memory" (LMDB's map of it).
    @Test func aMetaPageNamingAnImpossibleLastPageIsCalledDamaged() async throws {
        try await withScratch { dir in
            try editMetaPages(of: try await makeStore(in: dir)) { bytes, newest in
                // MDB_meta after the 16-byte page header: the last page at 136.
                for i in 0..<8 { bytes[newest + 136 + i] = UInt8(truncatingIfNeeded: UInt64(4_688_890_857_929_071_570) >> (8 * UInt64(i))) }
            }
            for args in [["stats"], ["dump"], ["verify"], ["load", "-"]] {
                let result = try await runQuire(args, stdin: Data(), directory: dir)
                #expect(!result.signaled && result.status == 1, "\(args): \(result)")
                #expect(result.stderr.contains("meta page is damaged") && result.stderr.contains("restore a backup"), "\(args): \(result)")
            }
        }
    }

    /// A meta page giving no page size (0, 3,000, 1 MiB) where LMDB takes it — page 0 (it reads
    /// page 1 where page 0's size puts it), or page 1 when newer: LMDB divides by it, and every
    /// command ended with SIGFPE and a backtrace. Page 1 damaged while older leaves the store readable.
    @Test(arguments: [(0, "both"), (3_000, "newest"), (1 << 20, "both"), (0, "page 1"), (3_000, "page 0")])
    func aMetaPageWithNoPageSizeIsCalledDamaged(size: Int, where pages: String) async throws {
        try await withScratch { dir in
            var readable = false
            try editMetaPages(of: try await makeStore(in: dir)) { bytes, newest in
                // The page size is the free database's md_pad: 40 bytes into the page.
                let metas = ["both": [0, 4096], "newest": [newest], "page 0": [0], "page 1": [4096]][pages] ?? []
                readable = metas == [4096] && newest == 0
                for meta in metas {
                    for i in 0..<4 { bytes[meta + 40 + i] = UInt8(truncatingIfNeeded: size >> (8 * i)) }
                }
            }
            for args in [["stats"], ["dump"], ["verify"], ["load", "-"]] {
                let result = try await runQuire(args, stdin: Data(), directory: dir)
                #expect(!result.signaled, "\(args): \(result)")
                if readable {
                    #expect(result.status == 0, "\(args): \(result)")
                } else {
                    #expect(result.status == 1, "\(args): \(result)")
                    #expect(result.stderr.contains("meta page is damaged") && result.stderr.contains("page size"), "\(args): \(result)")
                }
            }
        }
    }

    /// One damaged meta page made the whole store unreadable though the other page's commit is
    /// whole (LMDB keeps the last two): every command said "restore a backup". The error names
    /// the intact page, and `copy --meta-page` copies the store as it describes it: the commit
    /// before the newest (the newest page's root damaged: past the file, or 0, which LMDB opened
    /// and faulted on at the first read), or the newest (the older page zeroed). From a healthy
    /// store's older page, the copy says it leaves the newest commit out.
    @Test(arguments: ["newest root", "newest root 0", "older zeroed", "healthy"])
    func aDamagedMetaPageIsRecoveredFromTheOther(damage: String) async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 20)
            let before = try await runQuire(["dump", "--all"], directory: dir)
            // One more article: the newest meta page names the load's last commit.
            let one = try generatedJSONL(count: 1, seed: 7)
            #expect(try await runQuire(["load", "-", "--quiet"], stdin: one, directory: dir).status == 0)
            let after = try await runQuire(["dump", "--all"], directory: dir)
            #expect(before.status == 0 && after.status == 0 && before.stdout != after.stdout)
            var intact = 0
            var newestCommit: UInt64 = 0
            try editMetaPages(of: store) { bytes, newest in
                newestCommit = (0..<8).reduce(0) { $0 | UInt64(bytes[newest + 144 + $1]) << (8 * UInt64($1)) }
                let older = 4096 - newest
                if damage.hasPrefix("newest root") {
                    // The main database's root.
                    for i in 0..<8 { bytes[newest + 128 + i] = damage == "newest root" ? 0x7F : 0 }
                    intact = older / 4096
                } else if damage == "healthy" {
                    intact = older / 4096
                } else {
                    for i in older..<(older + 4096) { bytes[i] = 0 }
                    intact = newest / 4096
                }
            }
            let stats = try await runQuire(["stats"], directory: dir)
            if damage == "healthy" {
                #expect(stats.status == 0, "\(stats)")
            } else {
                #expect(stats.status == 1 && stats.stderr.contains("page \(1 - intact)") && stats.stderr.contains("damaged"), "\(stats)")
                #expect(stats.stderr.contains("quire copy --meta-page \(intact) DEST recovers the store"), "\(stats)")
            }
            let copy = try await runQuire(["copy", "--meta-page", "\(intact)", "recovered"], directory: dir)
            let commit = damage == "older zeroed" ? newestCommit : newestCommit - 1
            #expect(copy.status == 0 && copy.stderr.contains("(commit \(commit))"), "\(copy)")
            #expect(copy.stderr.contains("leaves that commit out") == (damage == "healthy"), "\(copy)")
            let recovered = ["--store", dir.appendingPathComponent("recovered").path]
            #expect(try await runQuire(recovered + ["verify"], directory: dir).status == 0)
            let dump = try await runQuire(recovered + ["dump", "--all"], directory: dir)
            // A load ends with a commit of bookkeeping: the one before holds the article already.
            #expect(dump.stdout == after.stdout || (damage != "older zeroed" && dump.stdout == before.stdout))
            // The copy is a store like any other: it takes writes and still verifies.
            let more = try generatedJSONL(count: 1, seed: 8)
            #expect(try await runQuire(recovered + ["load", "-", "--quiet"], stdin: more, directory: dir).status == 0)
            #expect(try await runQuire(recovered + ["verify"], directory: dir).status == 0)
            // The other page cannot be copied from.
            guard damage != "healthy" else { return }
            let refused = try await runQuire(["copy", "--meta-page", "\(1 - intact)", "other"], directory: dir)
            #expect(refused.status == 1 && refused.stderr.contains("cannot be recovered from it"), "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("other").path))
        }
    }

    /// A data file that is no store at all — a pipe (which blocked every open for ever), a few
    /// bytes of text — is refused by every command at once, as not a store rather than damaged.
    @Test(arguments: ["fifo", "text"])
    func aDataFileThatIsNoStoreIsRefusedAtOnce(kind: String) async throws {
        try await withScratch { dir in
            let store = dir.appendingPathComponent("quire.db")
            try FileManager.default.createDirectory(at: store, withIntermediateDirectories: false)
            let data = store.appendingPathComponent("data.mdb").path
            if kind == "fifo" {
                #expect(mkfifo(data, 0o600) == 0)
            } else {
                try Data("hello, not a store\n".utf8).write(to: URL(fileURLWithPath: data))
            }
            let commands = [["stats"], ["dump"], ["verify"], ["get", "x"], ["load", "-"], ["remap"], ["watch", "--since", "0"], ["serve", "--port", "0"]]
            for args in commands {
                let result = try await runQuire(args, stdin: Data(), directory: dir, timeout: 60)
                #expect(!result.timedOut, "\(args): \(result)")
                #expect(result.status == 1 && !result.signaled, "\(args): \(result)")
                #expect(result.stderr.contains("quire.db: not a store, or a store damaged at its start"), "\(args): \(result)")
                #expect(!result.stderr.contains("run quire verify") && !result.stderr.contains("quire.db: /"), "\(args): \(result)")
            }
        }
    }

    /// One bit of the newest meta page: a last page beyond any file made every write adopt the
    /// map size for ever (100% CPU, the first Ctrl-C ignored); a page count beyond any file made
    /// `stats` trap on an overflow while `verify` said ok.
    @Test(arguments: [(143, 0), (55, 7)])
    func aDamagedMetaPageIsAnErrorNotAHangOrATrap(byte: Int, bit: Int) async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 40)
            let handle = try #require(FileHandle(forUpdatingAtPath: store + "/data.mdb"))
            let metas = try [0, 4096].map { offset -> UInt64 in
                try handle.seek(toOffset: UInt64(offset + 144))
                return try #require(try handle.read(upToCount: 8)).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            }
            let newest = UInt64(metas[1] > metas[0] ? 4096 : 0) + UInt64(byte)
            try handle.seek(toOffset: newest)
            let old = try #require(try handle.read(upToCount: 1))[0]
            try handle.seek(toOffset: newest)
            try handle.write(contentsOf: [old ^ (1 << UInt8(bit))])
            try handle.close()
            for args in [["stats"], ["verify"]] {
                let result = try await runQuire(args, directory: dir, timeout: 60)
                #expect(!result.timedOut && !result.signaled, "\(args): \(result)")
                #expect(result.status == 1, "\(args): \(result)")
                #expect(result.stderr.contains("corrupted"), "\(args): \(result)")
                #expect(!result.stderr.contains("not a Quire store"), "\(args): \(result)")
            }
            // LMDB carries a page count over into the next commit's meta page: a write may pass.
            let load = try await runQuire(["load", "-"], stdin: try generatedJSONL(count: 3), directory: dir, timeout: 60)
            #expect(!load.timedOut && !load.signaled, "\(load)")
            #expect(load.status == 0 || load.stderr.contains("corrupted"), "\(load)")
        }
    }

    @Test func writeCommandsRefuseADirectoryThatIsNotAStore() async throws {
        try await withScratch { dir in
            try Data("mine".utf8).write(to: dir.appendingPathComponent("notes.txt"))
            for store in [".", dir.path] {
                let result = try await runQuire(["--store", store, "load", "-"], stdin: Data(), directory: dir)
                #expect(result.status == 1, "\(result)")
                #expect(result.stderr.contains("is not a store and not empty"), "\(result)")
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            #expect(names == ["notes.txt"])
            // What a first open killed midway leaves does not count as foreign.
            let killed = dir.appendingPathComponent("killed")
            try FileManager.default.createDirectory(
                at: killed.appendingPathComponent(".lmdb-create-Ab12Cd"), withIntermediateDirectories: true)
            let resumed = try await runQuire(["--store", killed.path, "load", "-", "--quiet"], stdin: try generatedJSONL(count: 2))
            #expect(resumed.status == 0, "\(resumed)")
            // A missing or empty directory becomes a store.
            let empty = dir.appendingPathComponent("empty")
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
            let load = try await runQuire(["--store", empty.path, "load", "-", "--quiet"], stdin: try generatedJSONL(count: 3))
            #expect(load.status == 0, "\(load)")
        }
    }

    /// Another program's LMDB environment (named databases, no Quire metadata) was refused by
    /// every read command, but every write command made it a store beside its own data.
    @Test func writeCommandsRefuseAnotherProgramsEnvironment() async throws {
        try await withScratch { dir in
            let foreign = dir.appendingPathComponent("foreign").path
            try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
            try LMDBFixture.build(at: foreign)
            let before = try Data(contentsOf: URL(fileURLWithPath: foreign + "/data.mdb"))
            for args in [["load", "-"], ["remap"], ["demo", "--articles", "5"]] {
                let result = try await runQuire(["--store", foreign] + args, stdin: try generatedJSONL(count: 2), timeout: 120)
                #expect(result.status == 1, "\(args): \(result)")
                #expect(result.stderr.contains("not a Quire store") && result.stderr.contains("nothing was written"), "\(args): \(result)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: foreign + "/data.mdb")) == before)
            #expect(try LMDBFixture.contents(at: foreign) == LMDBFixture.expected)
        }
    }
}

/// `quire copy` writes through a temporary file, synced and renamed, private to the owner.
@Suite struct AtomicCopyTests {
    @Test func copyIsPrivateWhateverTheUmask() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 20)
            let backup = dir.path + "/backup"
            let shell = try await runQuire(
                ["-c", "umask 0; exec \"$0\" --store \"$1\" copy \"$2\" --quiet", try QuireBinary.url().path, store, backup],
                executable: URL(fileURLWithPath: "/bin/sh"))
            #expect(shell.status == 0, "\(shell)")
            let attributes = try FileManager.default.attributesOfItem(atPath: backup + "/data.mdb")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: backup) == ["data.mdb"])
        }
    }

    @Test func leftoverPartialCopyDoesNotBlockANewCopy() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 20)
            let backup = dir.appendingPathComponent("backup")
            try FileManager.default.createDirectory(at: backup, withIntermediateDirectories: false)
            // What a copy killed mid-write leaves: a temporary file, never a data.mdb.
            try Data(repeating: 0xAB, count: 5000).write(to: backup.appendingPathComponent(".data.mdb.partial-k1ll3d"))
            let copy = try await runQuire(["--store", store, "copy", backup.path, "--quiet"])
            #expect(copy.status == 0, "\(copy)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: backup.path) == ["data.mdb"])
            let original = try await runQuire(["--store", store, "dump"])
            let copied = try await runQuire(["--store", backup.path, "dump"])
            #expect(copied.status == 0, "\(copied)")
            #expect(copied.stdout == original.stdout)
        }
    }

    /// A copy's file that another process still writes (it holds the lock a copy takes on its
    /// file) is not a leftover: a second copy into the directory removed it, and the first one
    /// failed with a bare "No such file or directory". The second is refused now.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 holds the lock"))
    func aCopyUnderWayIsNotALeftover() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 20)
            let backup = dir.appendingPathComponent("backup")
            try FileManager.default.createDirectory(at: backup, withIntermediateDirectories: false)
            let partial = backup.appendingPathComponent(".data.mdb.partial-running")
            try Data(repeating: 0xAB, count: 5000).write(to: partial)
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            holder.arguments = [
                "-c", "import fcntl,sys,time\nf=open(sys.argv[1],'r+b')\nfcntl.lockf(f,fcntl.LOCK_EX,1,0)\nprint('locked',flush=True)\ntime.sleep(60)",
                partial.path,
            ]
            let out = Pipe()
            holder.standardOutput = out
            try holder.run()
            defer { kill(holder.processIdentifier, SIGKILL) }
            #expect(String(decoding: out.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("locked"))
            let refused = try await runQuire(["--store", store, "copy", backup.path, "--quiet"])
            #expect(refused.status == 1 && refused.stderr.contains("another copy into this directory is under way"), "\(refused)")
            #expect(FileManager.default.fileExists(atPath: partial.path))
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
            // Its writer gone, the file is a leftover: removed, and the copy made.
            let copy = try await runQuire(["--store", store, "copy", backup.path, "--quiet"])
            #expect(copy.status == 0, "\(copy)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: backup.path) == ["data.mdb"])
        }
    }
}

/// Where the leaf node keyed by `key` with a value of a record's size is: LMDB's node header
/// (value size as two little-endian 16-bit halves, flags, key size) comes just before the key.
private func recordNode(keyed key: [UInt8], in data: Data) -> Int? {
    let bytes = [UInt8](data)
    var from = 8
    while let range = Data(bytes[from...]).range(of: Data(key)) {
        let at = from + range.lowerBound
        func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        let size = u16(at - 8) | u16(at - 6) << 16
        if u16(at - 2) == key.count && size > 64 { return at }
        from = at + 1
    }
    return nil
}

/// LMDB errors and faults on damaged pages end as one clear line and status 1.
@Suite struct CorruptedPageTests {
    /// A damaged page of the full-text index is named as such, not as the last index walked
    /// before it. The store is compacted first, so every page of the file is live and the
    /// database's root named in the main database is the page read.
    @Test func verifyNamesTheFullTextIndexOnItsDamagedPage() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 120)
            let compact = dir.appendingPathComponent("compact").path
            let copy = try await runQuire(["--store", store, "copy", compact, "--compact"], directory: dir)
            #expect(copy.status == 0, "\(copy)")
            let path = compact + "/data.mdb"
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            // The main database's record of the documents database: LMDB's node header (8 bytes)
            // and the name come before its MDB_db, whose root page number is at offset 40.
            let name = Array("s:articles:doc".utf8)
            let at = try #require(data.range(of: Data(name))?.lowerBound)
            let root = data[(at + name.count + 40)..<(at + name.count + 48)].reversed().reduce(0) { $0 << 8 | Int($1) }
            #expect(root > 1 && (root + 1) * 4096 <= data.count, "root \(root)")
            for i in (root * 4096)..<(root * 4096 + 16) { data[i] ^= 0xFF }
            try data.write(to: URL(fileURLWithPath: path))
            let verify = try await runQuire(["--store", compact, "verify"], directory: dir)
            #expect(!verify.signaled && verify.status == 1, "\(verify)")
            #expect(verify.stderr.contains("corrupted"), "\(verify)")
            #expect(verify.stderr.contains("collection 'articles', full-text index, documents"), "\(verify)")
            #expect(!verify.stderr.contains("index 'publishedAt'") && !verify.stderr.contains("index 'section'"), "\(verify)")
        }
    }

    /// Once a request of `quire serve` has met a damaged page, no other reads the store (LMDB
    /// may follow a damaged page's bad pointer and end the server): every answer is a 503 that
    /// says so, until the file is replaced.
    @Test func aServerThatMetTheDamageReadsTheStoreNoMore() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 20)
            let dump = try await runQuire(["dump"], directory: dir)
            let id = try #require(lines(dump.stdout).first.flatMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
            })
            let server = try ServeProcess(store: store)
            defer { server.stop() }
            #expect(try get(server.port, "/api/stats").status == 200)
            let path = store + "/data.mdb"
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            let at = try #require(recordNode(keyed: Array(id.utf8), in: data))
            let page = at / 4096 * 4096
            for i in page..<(page + 16) { data[i] ^= 0xFF }
            // In place, as damage comes: the server's map sees it, the file's identity stays.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seek(toOffset: UInt64(page))
            try handle.write(contentsOf: data[page..<(page + 16)])
            try handle.close()
            let damaged = try get(server.port, "/api/articles?limit=100&sort=id")
            #expect(damaged.status == 503, "\(damaged)")
            let stats = try get(server.port, "/api/stats")
            #expect(stats.status == 503 && String(decoding: stats.body, as: UTF8.self).contains("not read again"), "\(stats)")
            // The answers name the store, not where it lies on the server.
            for answer in [damaged, stats] {
                let body = String(decoding: answer.body, as: UTF8.self)
                #expect(!body.contains(dir.path) && body.contains(URL(fileURLWithPath: store).lastPathComponent), "\(body)")
            }
        }
    }

    @Test func verifyNamesWhereItWasReadingOnADamagedLeaf() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 20)
            let path = store + "/data.mdb"
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            // The leaf page holding the first record: the LMDB node whose key is its id and whose
            // value is a record (the id is also a key or value in the full-text, index and
            // relation databases, whose pages may come first in the file).
            let dump = try await runQuire(["dump"], directory: dir)
            let id = try #require(lines(dump.stdout).first.flatMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
            })
            let at = try #require(recordNode(keyed: Array(id.utf8), in: data))
            let page = at / 4096 * 4096
            for i in page..<(page + 16) { data[i] ^= 0xFF }
            try data.write(to: URL(fileURLWithPath: path))
            let verify = try await runQuire(["verify"], directory: dir)
            #expect(!verify.signaled, "\(verify)")
            #expect(verify.status == 1, "\(verify)")
            #expect(verify.stderr.contains("corrupted"), "\(verify)")
            #expect(!verify.stderr.contains("run quire verify"), "\(verify)")  // it is running
            #expect(verify.stderr.contains("collection 'articles'"), "\(verify)")
            #expect(verify.stderr.split(separator: "\n").count == 1, "\(verify)")
            for args in [["dump"], ["get", id], ["dump", "--format", "mdb"]] {
                let result = try await runQuire(args, directory: dir)
                #expect(!result.signaled, "\(args): \(result)")
                #expect(result.status == 1 || (result.status == 0 && result.stdout == (args == ["dump"] ? dump.stdout : result.stdout)), "\(args): \(result)")
                if result.status == 1 { #expect(result.stderr.contains("the store is corrupted; run quire verify"), "\(args): \(result)") }
            }
        }
    }
}

/// Started with its standard descriptors closed, `quire` hands none of their numbers to a store
/// file: the next file opened took the free number, and `data.mdb` became descriptor 2, where
/// error messages go.
@Suite struct ClosedStandardDescriptorTests {
    @Test func aStoreFileNeverTakesAClosedStandardDescriptor() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 20)
            let before = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
            // Output to closed descriptors goes nowhere: the command succeeds (it failed writing).
            let stats = try await runQuire(
                ["-c", "exec \"$0\" --store \"$1\" stats <&- >&- 2>&-", try QuireBinary.url().path, store],
                executable: URL(fileURLWithPath: "/bin/sh"))
            #expect(stats.status == 0, "\(stats)")
            // Which descriptors a running command gave the store's files.
            let out = FileHandle(forWritingAtPath: "/dev/null")!
            let watch = try startQuire(
                ["-c", "exec \"$0\" --store \"$1\" watch <&- >&- 2>&-", try QuireBinary.url().path, store],
                directory: dir, stdout: out, executable: URL(fileURLWithPath: "/bin/sh"))
            defer {
                if watch.isRunning { kill(watch.processIdentifier, SIGKILL) }
                watch.waitUntilExit()
            }
            var storeDescriptors: [Int] = []
            for _ in 0..<600 where storeDescriptors.isEmpty {
                let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(watch.processIdentifier)/fd")) ?? []
                storeDescriptors = fds.compactMap { fd in
                    let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(watch.processIdentifier)/fd/\(fd)")
                    return target?.hasPrefix(store) == true ? Int(fd) : nil
                }
                if storeDescriptors.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(!storeDescriptors.isEmpty)
            #expect(storeDescriptors.allSatisfy { $0 > 2 }, "\(storeDescriptors)")
            kill(watch.processIdentifier, SIGKILL)
            #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == before)
        }
    }
}
