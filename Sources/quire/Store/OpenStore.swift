import Foundation
import Quire
import QuireCluster
import QuireFetch
import QuireLMDB

/// Opens the news store for a command, turning failures into `quire: <command>: <path>: <why>`.
enum OpenStore {
    /// Opens an existing store read-only (works while another process writes).
    static func readOnly(_ path: String, command: String) throws(RuntimeError) -> Store {
        guard ReadOnlyStore.exists(at: path) else { throw ReadOnlyStore.absence(at: path, command: command) }
        var options = StoreOptions()
        options.readOnly = true
        options.initialMapSize = 0  // adopt the size recorded in the file
        options.verifyChecksums = true  // a damaged record fails the command, never prints as other data
        return try open(path, options, command: command)
    }

    /// Opens (creating if needed) the store for writing, with the news collections registered.
    static func readWrite(_ path: String, command: String) throws(RuntimeError) -> Store {
        try StoreDirectoryCheck.checkWritable(path, command: command)
        let store = try open(path, StoreOptions(), command: command)
        do {
            try refuseReplica(store, path: path, command: command)
            try NewsSchema.register(in: store)
        } catch let error as RuntimeError {
            store.close()
            throw error
        } catch {
            store.close()
            throw RuntimeError(command, located(path, error))
        }
        return store
    }

    /// A cluster member's store holds what the cluster's log brought, and nothing else: records
    /// written into it locally stayed beside the log's, on that member only, for good.
    private static func refuseReplica(_ store: Store, path: String, command: String) throws {
        guard try store.storedCollections().contains(where: { $0.name == ReplicaState.collection.name }) else { return }
        throw RuntimeError(
            command,
            "\(path): is a cluster member's store (quire node): its records come from the cluster's log alone, and a local write would stay on this member only; fetch through the cluster (quire node --fetch), or \(command) into another store")
    }

    private static func open(_ path: String, _ options: StoreOptions, command: String) throws(RuntimeError) -> Store {
        do {
            return try Store(path: path, options: options)
        } catch {
            // Said only when exactly one meta page is damaged: no other failure has the advice.
            throw RuntimeError(command, MetaPageAdvice.adding(to: located(path, error), path))
        }
    }

    /// `<path>: <why>`, the path once (a store error's message may begin with it).
    static func located(_ path: String, _ error: any Error) -> String {
        let why = reason(error)
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        if why.hasPrefix(path + ": ") { return why }
        if why.hasPrefix(absolute + ": ") { return path + why.dropFirst(absolute.count) }
        return "\(path): \(why)"
    }

    /// The reason of an error below the CLI, without repeating the path.
    static func reason(_ error: any Error) -> String {
        if let lmdb = error as? LMDBError {
            if lmdb.isCorruption && lmdb.reason == nil { return "\(StoreError.corruptionMessage) (\(lmdb.message))" }
            return ReadOnlyStore.describe(lmdb)
        }
        if let store = error as? StoreError, store.code == .corrupted, let lmdb = store.underlying as? LMDBError {
            return "\(store.message) (\(lmdb.message))"
        }
        if let store = error as? StoreError {
            if let lmdb = store.underlying as? LMDBError { return "\(store.message): \(ReadOnlyStore.describe(lmdb))" }
            return store.description
        }
        return String(describing: error)
    }
}
