import Foundation
import QuireHTTP
import Synchronization

/// A thin typed client of etcd's v3 JSON gateway (`/v3/kv/*`, `/v3/lease/*`), spoken through
/// QuireHTTP's libcurl client.
///
/// The gateway maps each gRPC call to a POST of its JSON form; keys and values are base64 and
/// 64-bit integers are strings. The client is given every member's URL: a request that cannot
/// reach one (refused, timed out, a member without a leader) is tried on the next, so a dead
/// member or a leader election costs a retry, not a failure.
///
/// Limits: etcd refuses requests over `--max-request-bytes` (1.5 MiB by default) and
/// transactions of more than `--max-txn-ops` (128) operations; the client checks both before
/// sending (``EtcdError/Code/tooLarge``).
public final class EtcdClient: Sendable {
    /// The members' client URLs (`http://127.0.0.1:2379`), tried in turn.
    public let endpoints: [String]
    /// The request size etcd accepts (its `--max-request-bytes`), less a margin for the JSON.
    public let maxRequestBytes: Int
    /// The operations etcd accepts in one transaction (its `--max-txn-ops`).
    public let maxTxnOperations: Int
    private let http: HTTPClient
    /// The endpoint that answered last: tried first next time.
    private let preferred = Atomic<Int>(0)

    /// A client of the cluster at `endpoints`.
    ///
    /// - Parameters:
    ///   - endpoints: Client URLs of the members, e.g. `["http://127.0.0.1:2379"]`.
    ///   - requestTimeout: How long one request may take on one member before the next is tried.
    ///   - maxRequestBytes: The cluster's `--max-request-bytes` (1.5 MiB by default).
    ///   - maxTxnOperations: The cluster's `--max-txn-ops` (128 by default).
    public init(
        endpoints: [String], requestTimeout: Duration = .seconds(5), maxRequestBytes: Int = 1_572_864,
        maxTxnOperations: Int = 128
    ) {
        precondition(!endpoints.isEmpty, "an etcd client needs at least one endpoint")
        self.endpoints = endpoints.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.maxRequestBytes = maxRequestBytes
        self.maxTxnOperations = maxTxnOperations
        var configuration = HTTPClientConfiguration()
        configuration.connectTimeout = .seconds(1)
        configuration.totalTimeout = requestTimeout
        configuration.lowSpeedTime = requestTimeout
        configuration.maxRedirects = 0
        configuration.maxResponseBytes = 64 << 20
        http = HTTPClient(configuration: configuration)
    }

    /// Stops the client's transfer thread.
    public func shutdown() { http.shutdown() }

    // MARK: Keys

    /// Reads a range of keys.
    ///
    /// - Parameters:
    ///   - range: One key or a prefix.
    ///   - minModRevision: Only keys last written at or after this revision (0: all).
    ///   - maxModRevision: Only keys last written at or before this revision (0: all).
    ///   - sortBy: The order of the answer (ascending).
    ///   - limit: At most this many keys (0: all).
    ///   - keysOnly: Leave the values out.
    public func range(
        _ range: EtcdKeyRange, minModRevision: Int64 = 0, maxModRevision: Int64 = 0, sortBy: EtcdSortTarget = .key,
        limit: Int = 0,
        keysOnly: Bool = false
    ) async throws(EtcdError) -> EtcdRangeResult {
        var body = Self.rangeBody(range)
        if minModRevision > 0 { body["min_mod_revision"] = String(minModRevision) }
        if maxModRevision > 0 { body["max_mod_revision"] = String(maxModRevision) }
        if sortBy != .key || limit > 0 {
            body["sort_target"] = sortBy.rawValue
            body["sort_order"] = "ASCEND"
        }
        if limit > 0 { body["limit"] = String(limit) }
        if keysOnly { body["keys_only"] = true }
        let path = "/v3/kv/range"
        return try Self.rangeResult(try await call(path, body), path: path)
    }

    /// Reads one key, or nil when it does not exist.
    public func get(_ key: String) async throws(EtcdError) -> EtcdKeyValue? {
        try await range(.key(key)).kvs.first
    }

    /// Writes one key.
    ///
    /// - Returns: The revision of the write.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8], lease: Int64 = 0) async throws(EtcdError) -> Int64 {
        var body: [String: Any] = ["key": Self.base64(Array(key.utf8)), "value": Self.base64(value)]
        if lease != 0 { body["lease"] = String(lease) }
        let path = "/v3/kv/put"
        return try Self.revision(of: try await call(path, body), path: path)
    }

    /// Deletes a range of keys.
    ///
    /// - Returns: How many keys were deleted.
    @discardableResult
    public func delete(_ range: EtcdKeyRange) async throws(EtcdError) -> Int {
        let path = "/v3/kv/deleterange"
        let answer = try await call(path, Self.rangeBody(range))
        return Int(Self.int64(answer["deleted"]))
    }

    /// Runs a transaction: `success` if every comparison in `compare` holds, else `failure`.
    ///
    /// - Throws: ``EtcdError/Code/tooLarge`` before sending when the branch has more operations
    ///   or bytes than etcd accepts.
    public func txn(
        compare: [EtcdCompare], success: [EtcdOperation], failure: [EtcdOperation] = []
    ) async throws(EtcdError) -> EtcdTxnResult {
        let path = "/v3/kv/txn"
        guard max(success.count, failure.count) <= maxTxnOperations else {
            throw EtcdError(
                code: .tooLarge,
                message: "\(max(success.count, failure.count)) operations (etcd allows \(maxTxnOperations))",
                path: path)
        }
        // base64 grows bytes by 4/3; the JSON around them is small.
        let bytes = (success + failure).reduce(0) { $0 + $1.payloadBytes } * 4 / 3 + 1024
        guard bytes <= maxRequestBytes else {
            throw EtcdError(
                code: .tooLarge, message: "about \(bytes) bytes (etcd allows \(maxRequestBytes))", path: path)
        }
        let body: [String: Any] = [
            "compare": compare.map(Self.compareBody), "success": success.map(Self.operationBody),
            "failure": failure.map(Self.operationBody),
        ]
        let answer = try await call(path, body)
        let succeeded = answer["succeeded"] as? Bool ?? false
        var ranges: [EtcdRangeResult?] = []
        for response in answer["responses"] as? [[String: Any]] ?? [] {
            if let range = response["response_range"] as? [String: Any] {
                ranges.append(try Self.rangeResult(range, path: path))
            } else {
                ranges.append(nil)
            }
        }
        return EtcdTxnResult(succeeded: succeeded, revision: try Self.revision(of: answer, path: path), ranges: ranges)
    }

    /// Compacts etcd's history: revisions before `revision` are no longer readable.
    public func compact(revision: Int64) async throws(EtcdError) {
        _ = try await call("/v3/kv/compaction", ["revision": String(revision)])
    }

    // MARK: Leases

    /// Grants a lease of `ttl` seconds.
    public func grantLease(ttl: Int64) async throws(EtcdError) -> EtcdLease {
        let path = "/v3/lease/grant"
        let answer = try await call(path, ["TTL": String(ttl)])
        let id = Self.int64(answer["ID"])
        guard id != 0 else { throw EtcdError(code: .malformedResponse, message: "no lease id", path: path) }
        return EtcdLease(id: id, ttl: Self.int64(answer["TTL"]))
    }

    /// Renews a lease.
    ///
    /// - Returns: The TTL left, in seconds; 0 when the lease has expired or was revoked (its
    ///   keys are gone).
    public func keepAlive(_ lease: Int64) async throws(EtcdError) -> Int64 {
        // A streaming call: the gateway answers one renewal per request object, as {"result": …}.
        let answer = try await call("/v3/lease/keepalive", ["ID": String(lease)])
        return Self.int64((answer["result"] as? [String: Any])?["TTL"])
    }

    /// Revokes a lease, deleting its keys at once. A lease that already expired is not an error.
    public func revoke(_ lease: Int64) async throws(EtcdError) {
        do {
            _ = try await call("/v3/lease/revoke", ["ID": String(lease)])
        } catch {
            if error.code != .refused(grpcCode: EtcdError.grpcNotFound) { throw error }
        }
    }

    // MARK: The transport

    private func call(_ path: String, _ body: [String: Any]) async throws(EtcdError) -> [String: Any] {
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: body)
        } catch {
            throw EtcdError(code: .malformedResponse, message: "cannot encode the request: \(error)", path: path)
        }
        let bytes = [UInt8](data)
        var lastFailure = EtcdError(code: .unavailable, message: "no endpoint tried", path: path)
        let first = preferred.load(ordering: .relaxed)
        for attempt in 0..<endpoints.count {
            if Task.isCancelled { throw EtcdError(code: .cancelled, message: "cancelled", path: path) }
            let index = (first + attempt) % endpoints.count
            let response: HTTPResponse
            do {
                response = try await http.post(
                    endpoints[index] + path, body: bytes, headers: [("Content-Type", "application/json")])
            } catch {
                if error.code == .cancelled { throw EtcdError(code: .cancelled, message: "cancelled", path: path) }
                lastFailure = EtcdError(
                    code: .unavailable, message: "\(URLRedaction.redact(endpoints[index])): \(error.code)", path: path, transport: error)
                continue
            }
            let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
            guard response.isSuccess else {
                if response.status >= 500 && json == nil {
                    // A member (or a proxy before it) failing: another member may answer.
                    lastFailure = EtcdError(code: .refused(grpcCode: 0), message: "HTTP \(response.status)", path: path)
                    continue
                }
                guard let json, json["code"] != nil || json["error"] != nil else {
                    // No gRPC error object: whatever answered is not etcd's v3 JSON gateway.
                    throw EtcdError(
                        code: .malformedResponse,
                        message: "\(URLRedaction.redact(endpoints[index])) answered HTTP \(response.status), not as etcd's v3 JSON gateway does (is it etcd's client URL?)",
                        path: path)
                }
                let grpc = Int(Self.int64(json["code"]))
                let message = json["error"] as? String ?? "HTTP \(response.status)"
                let failure = EtcdError(code: .refused(grpcCode: grpc), message: message, path: path)
                // A member cut off from the leader: another member may answer.
                if failure.isRetryable {
                    lastFailure = failure
                    continue
                }
                throw failure
            }
            guard let json else {
                throw EtcdError(code: .malformedResponse, message: "the body is not a JSON object", path: path)
            }
            if index != first { preferred.store(index, ordering: .relaxed) }
            return json
        }
        throw lastFailure
    }

    // MARK: JSON

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    static func bytes(_ value: Any?) -> [UInt8] {
        guard let text = value as? String, let data = Data(base64Encoded: text) else { return [] }
        return [UInt8](data)
    }

    /// The gateway writes 64-bit integers as strings and leaves out zeros.
    static func int64(_ value: Any?) -> Int64 {
        if let text = value as? String { return Int64(text) ?? 0 }
        if let number = value as? NSNumber { return number.int64Value }
        return 0
    }

    static func rangeBody(_ range: EtcdKeyRange) -> [String: Any] {
        var body: [String: Any] = ["key": base64(range.key)]
        if let end = range.end { body["range_end"] = base64(end) }
        return body
    }

    static func compareBody(_ compare: EtcdCompare) -> [String: Any] {
        var body: [String: Any] = ["key": base64(compare.key), "result": compare.relation.rawValue]
        switch compare.target {
        case .modRevision(let revision):
            body["target"] = "MOD"
            body["mod_revision"] = String(revision)
        case .createRevision(let revision):
            body["target"] = "CREATE"
            body["create_revision"] = String(revision)
        case .value(let value):
            body["target"] = "VALUE"
            body["value"] = base64(value)
        }
        return body
    }

    static func operationBody(_ operation: EtcdOperation) -> [String: Any] {
        switch operation {
        case .put(let key, let value, let lease):
            var put: [String: Any] = ["key": base64(key), "value": base64(value)]
            if lease != 0 { put["lease"] = String(lease) }
            return ["request_put": put]
        case .range(let range): return ["request_range": rangeBody(range)]
        case .delete(let range): return ["request_delete_range": rangeBody(range)]
        }
    }

    static func revision(of answer: [String: Any], path: String) throws(EtcdError) -> Int64 {
        guard let header = answer["header"] as? [String: Any] else {
            throw EtcdError(code: .malformedResponse, message: "no header", path: path)
        }
        return int64(header["revision"])
    }

    static func rangeResult(_ answer: [String: Any], path: String) throws(EtcdError) -> EtcdRangeResult {
        let kvs = (answer["kvs"] as? [[String: Any]] ?? []).map { kv in
            EtcdKeyValue(
                key: bytes(kv["key"]), value: bytes(kv["value"]), createRevision: int64(kv["create_revision"]),
                modRevision: int64(kv["mod_revision"]), version: int64(kv["version"]), lease: int64(kv["lease"]))
        }
        // A range inside a transaction has no header of its own in some versions.
        let header = answer["header"] as? [String: Any]
        let revision = header.map { int64($0["revision"]) } ?? 0
        // A uint64, sent as a decimal string by the gateway.
        let cluster = (header?["cluster_id"]).flatMap { ($0 as? String).flatMap(UInt64.init) ?? ($0 as? NSNumber)?.uint64Value } ?? 0
        return EtcdRangeResult(kvs: kvs, more: answer["more"] as? Bool ?? false, revision: revision, clusterID: cluster)
    }
}
