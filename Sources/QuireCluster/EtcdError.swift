public import QuireHTTP

/// A failed etcd request: no endpoint answered, or etcd refused the request.
///
/// etcd's JSON gateway answers a refused request with a non-2xx status and a body
/// `{"error": …, "code": <gRPC code>}`; that code is kept so callers can tell a compacted
/// revision or a missing lease from an outage.
public struct EtcdError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// No endpoint could be reached (every URL was tried).
        case unavailable
        /// etcd refused the request; the gRPC status code it gave (e.g. 5 not found, 11 out of range).
        case refused(grpcCode: Int)
        /// The answer was not the JSON the gateway documents.
        case malformedResponse
        /// The request would exceed etcd's request size or operation limits; nothing was sent.
        case tooLarge
        /// The calling task was cancelled.
        case cancelled

        public var description: String {
            switch self {
            case .unavailable: "etcd unavailable"
            case .refused(let code): "refused by etcd (gRPC code \(code))"
            case .malformedResponse: "malformed etcd response"
            case .tooLarge: "request too large for etcd"
            case .cancelled: "cancelled"
            }
        }
    }

    /// gRPC `NOT_FOUND`: etcd's answer for an expired or revoked lease.
    public static let grpcNotFound = 5
    /// gRPC `OUT_OF_RANGE`: etcd's answer for a revision already compacted.
    public static let grpcOutOfRange = 11

    /// What went wrong.
    public var code: Code
    /// etcd's own message, or the transport failure.
    public var message: String
    /// The gateway path asked (`/v3/kv/txn`).
    public var path: String
    /// The transport failure of the last endpoint tried, if any.
    public var transport: HTTPError?

    /// Creates an error.
    public init(code: Code, message: String, path: String, transport: HTTPError? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.transport = transport
    }

    /// Whether the same request may succeed later (an outage or a leader election).
    public var isRetryable: Bool {
        switch code {
        case .unavailable: true
        // UNAVAILABLE (14) and DEADLINE_EXCEEDED (4) come back during a leader election.
        case .refused(let grpc): grpc == 14 || grpc == 4
        case .malformedResponse, .tooLarge, .cancelled: false
        }
    }

    public var description: String { "etcd \(path): \(code): \(message)" }
}
