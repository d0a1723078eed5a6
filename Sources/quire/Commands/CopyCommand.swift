import Quire
import QuireLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `quire copy` does, given valid options (see `CopyOptions.swift`).
enum CopyCommand {
    static func run(_ options: CopyOptions, context: CommandContext) async throws {
        let destination = options.destination
        try checkDestination(destination)
        if let page = options.metaPage {
            try recover(page, options, context: context)
            return
        }
        let environment = try ReadOnlyStore.open(context.storePath, command: "copy")
        defer { environment.close() }

        let createdDirectory = access(destination, F_OK) != 0
        let isCancelled = { context.isInterrupted }
        do {
            if options.compact {
                // Made and its older records recompressed in a staging directory, then linked.
                try Store.compactCopy(of: context.storePath, to: destination, isCancelled: isCancelled) { staging in
                    try environment.copy(to: staging, compact: true, isCancelled: isCancelled)
                }
            } else {
                try environment.copy(to: destination, compact: false, isCancelled: isCancelled)
            }
        } catch {
            // The copy removed its temporary files; a directory it created goes too.
            if createdDirectory { rmdir(destination) }
            throw failure(error, destination, source: context.storePath)
        }
        // A signal that came as the copy finished still stops the command as it said it would: a
        // script that abandons a backup gets 130 and no new store, never a copy it asked to stop.
        if context.isInterrupted {
            removeCopy(destination, directory: createdDirectory)
            throw InterruptedError(command: "copy")
        }
        if !options.quiet {
            let pageSize = try environment.info().pageSize
            let bytes = fileSize(destination + "/data.mdb") ?? 0
            Diagnostics.write(summary(bytes: bytes, pageSize: pageSize, destination: destination, compact: options.compact))
        }
    }

    /// `copy --meta-page N`: the file copied as meta page N describes it (LMDB is not asked: it
    /// may refuse the source), then opened once to show that it reads.
    private static func recover(_ page: Int, _ options: CopyOptions, context: CommandContext) throws {
        let destination = options.destination
        guard ReadOnlyStore.exists(at: context.storePath) else { throw ReadOnlyStore.absence(at: context.storePath, command: "copy") }
        let createdDirectory = access(destination, F_OK) != 0
        let commit: UInt64
        do {
            commit = try MetaPageRecovery.copy(from: context.storePath, page: page, to: destination) { context.isInterrupted }
        } catch {
            // The copy removed its own file; a data.mdb there now is another's (a copy that
            // finished meanwhile): only a directory this copy made goes.
            if createdDirectory { rmdir(destination) }
            // A meta page that cannot be used is the source's.
            if error.isCorruption { throw RuntimeError("copy", "\(context.storePath): \(ReadOnlyStore.describe(error))") }
            throw failure(error, destination, source: context.storePath)
        }
        do {
            try ReadOnlyStore.open(destination, command: "copy").close()
        } catch {
            removeCopy(destination, directory: createdDirectory)
            throw error
        }
        // A signal that came as the copy finished stops the command as a plain copy's does.
        if context.isInterrupted {
            removeCopy(destination, directory: createdDirectory)
            throw InterruptedError(command: "copy")
        }
        if let slots = MetaPageRecovery.inspect(directory: context.storePath), slots[1 - page].problem == nil,
            let other = slots[1 - page].transactionID, other > commit
        {
            // Said even with --quiet: the copy is the store without its newest commit.
            Diagnostics.write(
                "quire: copy: note: meta page \(1 - page) is intact and newer (commit \(other)): this copy leaves that commit out\n")
        }
        if !options.quiet {
            let bytes = fileSize(destination + "/data.mdb") ?? 0
            let place = TerminalText.escaped(destination)
            Diagnostics.write(
                "quire: copy: \(ProgressReporter.grouped(bytes)) bytes to \(place), the store as its meta page \(page) describes it "
                    + "(commit \(commit)); check it with: quire --store \(place) verify\n")
        }
    }

    /// What a failed copy says: a stop is an interruption (130), a full disk says so; an error
    /// that names the store copied (damage met in the compacted copy) is said as it is.
    private static func failure(_ error: any Error, _ destination: String, source: String) -> any Error {
        let lmdb = (error as? LMDBError) ?? ((error as? StoreError)?.underlying as? LMDBError)
        if lmdb == .cancelled || (error as? StoreError)?.code == .cancelled { return InterruptedError(command: "copy") }
        if lmdb == .noSpace {
            // LMDB's hint speaks of commits, which a copy does not make.
            return RuntimeError(
                "copy", "\(destination): the disk is full: free space; the store is untouched and no partial copy is left")
        }
        let reason = (error as? LMDBError).map(ReadOnlyStore.describe) ?? OpenStore.reason(error)
        return RuntimeError("copy", reason.hasPrefix(destination) || reason.hasPrefix(source) ? reason : "\(destination): \(reason)")
    }

    /// Removes a copy that did not finish (and its directory when the copy created it).
    private static func removeCopy(_ destination: String, directory: Bool) {
        unlink(destination + "/data.mdb")
        unlink(destination + "/lock.mdb")
        if directory { rmdir(destination) }
    }

    /// The destination must be absent or an empty directory, so a copy never mixes with or
    /// replaces an existing store.
    static func checkDestination(_ destination: String) throws(RuntimeError) {
        var info = stat()
        guard stat(destination, &info) == 0 else {
            guard errno == ENOENT else { throw RuntimeError("copy", "\(destination): \(errorString(errno))") }
            if let why = StoreDirectoryCheck.missingParent(of: destination) {
                throw RuntimeError("copy", "\(destination): cannot create the copy: \(why)")
            }
            return
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw RuntimeError("copy", "\(destination): exists and is not a directory")
        }
        if access(destination + "/data.mdb", F_OK) == 0 {
            throw RuntimeError("copy", "\(destination): already holds a store; choose a new directory")
        }
        guard let names = directoryNames(destination) else {
            throw RuntimeError("copy", "\(destination): \(errorString(errno))")
        }
        // A killed copy's temporary file does not count: the next copy replaces it.
        if names.contains(where: { !$0.hasPrefix(Environment.partialCopyPrefix) }) {
            throw RuntimeError("copy", "\(destination): the directory is not empty")
        }
    }

    /// `quire: copy: 1,234,567 bytes (302 pages of 4096) to DEST, compacted`
    static func summary(bytes: Int, pageSize: Int, destination: String, compact: Bool) -> String {
        let pages = pageSize > 0 ? bytes / pageSize : 0
        return "quire: copy: \(ProgressReporter.grouped(bytes)) bytes (\(ProgressReporter.grouped(pages)) pages of "
            + "\(pageSize)) to \(TerminalText.escaped(destination))\(compact ? ", compacted" : "")\n"
    }

    private static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }
}
