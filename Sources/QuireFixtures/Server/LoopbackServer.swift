import Dispatch
import Foundation
import Glibc
import Synchronization

/// A small HTTP/1.1 server on `127.0.0.1` for tests, the demo and the benchmarks.
///
/// It listens on an ephemeral port, accepts on one thread and serves each connection on its own
/// thread (keep-alive supported), so it never blocks Swift's cooperative pool. Every request is
/// answered by `handler`; a ``FixtureResponse/fault`` makes the answer misbehave on purpose.
/// ``stop()`` (or releasing the server) closes the listener and every open connection.
///
/// Limits: request bodies need `Content-Length` (no chunked uploads); heads are capped at 64 KiB.
public final class LoopbackServer: Sendable {
    // The threads hold the core, not this object, so releasing the server stops it.
    private let core: ServerCore

    /// Starts listening on `127.0.0.1`, on `port` (0: an ephemeral one).
    ///
    /// - Parameters:
    ///   - port: The port to listen on; 0 lets the kernel choose a free one.
    ///   - handler: Answers each request; called on the connection's thread.
    /// - Throws: ``LoopbackServerError`` when the socket cannot be set up (the port is taken).
    public init(port: Int = 0, handler: @escaping @Sendable (FixtureRequest) -> FixtureResponse) throws(LoopbackServerError) {
        core = try ServerCore(port: port, handler: handler)
    }

    deinit {
        core.stop()
    }

    /// The port chosen by the kernel.
    public var port: Int { core.port }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    public var baseURL: String { "http://127.0.0.1:\(core.port)" }

    /// How many requests have been read so far.
    public var requestCount: Int { core.requestCount }

    /// How many connections have been accepted so far (shows whether a client reuses them).
    public var connectionCount: Int { core.connectionCount }

    /// Closes the listener and every open connection; waits briefly for the accept thread to
    /// finish. Calling it again does nothing.
    public func stop() { core.stop() }
}

/// The listener, its threads and counters.
final class ServerCore: Sendable {
    let port: Int
    private let listener: Int32
    private let handler: @Sendable (FixtureRequest) -> FixtureResponse
    private let state = Mutex(State())
    private let acceptLoopFinished = DispatchSemaphore(value: 0)

    private struct State {
        var stopped = false
        var openConnections: Set<Int32> = []
        var requestCount = 0
        var connectionCount = 0
    }

    /// The largest request head or body the server reads; larger requests close the connection.
    static let maxRequestBytes = 64 * 1024 * 1024

    /// Starts listening on `127.0.0.1`, on `port` (0: an ephemeral one).
    ///
    /// - Parameter handler: Answers each request; called on the connection's thread.
    /// - Throws: ``LoopbackServerError`` when the socket cannot be set up.
    init(port requested: Int, handler: @escaping @Sendable (FixtureRequest) -> FixtureResponse) throws(LoopbackServerError) {
        self.handler = handler
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackServerError(operation: "socket", errno: errno) }
        var enable: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &enable, socklen_t(MemoryLayout<Int32>.size))

        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(clamping: requested).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian  // 127.0.0.1 only: never reachable from outside
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw LoopbackServerError(operation: "bind/listen", errno: code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            close(fd)
            throw LoopbackServerError(operation: "getsockname", errno: code)
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "LoopbackServer accept"
        thread.start()
    }

    /// How many requests have been read so far.
    var requestCount: Int { state.withLock { $0.requestCount } }

    /// How many connections have been accepted so far (shows whether a client reuses them).
    var connectionCount: Int { state.withLock { $0.connectionCount } }

    /// Closes the listener and every open connection; waits for the accept thread to finish.
    /// Calling it again does nothing.
    func stop() {
        let wasRunning = state.withLock { state in
            guard !state.stopped else { return false }
            state.stopped = true
            // Under the lock: a connection thread removes its descriptor before closing it,
            // so no descriptor here can have been closed and reused.
            for connection in state.openConnections { shutdown(connection, Int32(SHUT_RDWR)) }
            return true
        }
        guard wasRunning else { return }
        // > shutdown(2) on a listening socket wakes a thread blocked in accept(2) on Linux.
        shutdown(listener, Int32(SHUT_RDWR))
        _ = acceptLoopFinished.wait(timeout: .now() + 5)
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        defer {
            close(listener)
            acceptLoopFinished.signal()
        }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if isStopped { return }
                if errno == EINTR || errno == ECONNABORTED { continue }
                usleep(10_000)  // EMFILE and friends: back off instead of spinning
                continue
            }
            let registered = state.withLock { state in
                guard !state.stopped else { return false }
                state.openConnections.insert(connection)
                state.connectionCount += 1
                return true
            }
            guard registered else {
                close(connection)
                return
            }
            var enable: Int32 = 1
            setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &enable, socklen_t(MemoryLayout<Int32>.size))
            let thread = Thread { [self] in serve(connection) }
            thread.name = "LoopbackServer connection"
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer {
            state.withLock { _ = $0.openConnections.remove(connection) }
            close(connection)
        }
        var reader = RequestReader(socket: connection)
        while !isStopped {
            guard let request = reader.next() else { return }
            state.withLock { $0.requestCount += 1 }
            let response = handler(request)
            let keepOpen = send(response, for: request, on: connection)
            let clientCloses = request.header("Connection")?.lowercased() == "close"
            guard keepOpen, !clientCloses else { return }
        }
    }

    /// Writes `response`, applying its fault; returns false when the connection must close.
    private func send(_ response: FixtureResponse, for request: FixtureRequest, on connection: Int32) -> Bool {
        var response = response
        var prefixLength = response.body.count
        var stall: Double?
        var closeAfterPrefix = false
        switch response.fault {
        case nil:
            break
        case .closeWithoutResponse:
            return false
        case .notHTTP(let bytes):
            _ = write(bytes[...], to: connection)
            return false
        case .slowHeaders(let seconds):
            guard pause(seconds, on: connection) else { return false }
        case .redirectLoop:
            var target = request.path
            let query = request.query.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            if !query.isEmpty { target += "?" + query }
            response = .redirect(to: target)
            prefixLength = 0
        case .gzipBomb(let decodedBytes):
            response.body = FixtureGzip.zeros(count: decodedBytes)
            response.headers.removeAll { $0.0.lowercased() == "content-encoding" }
            response.headers.append(("Content-Encoding", "gzip"))
            prefixLength = response.body.count
        case .truncateBody(let afterBytes):
            prefixLength = min(max(0, afterBytes), response.body.count)
            closeAfterPrefix = true
        case .stallMidBody(let afterBytes, let seconds):
            prefixLength = min(max(0, afterBytes), response.body.count)
            stall = seconds
        }

        var head = "HTTP/1.1 \(response.status) \(Self.reason(for: response.status))\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        if !response.headers.contains(where: { $0.0.lowercased() == "content-length" }) {
            head += "Content-Length: \(response.body.count)\r\n"
        }
        if !response.headers.contains(where: { $0.0.lowercased() == "connection" }) {
            head += closeAfterPrefix ? "Connection: close\r\n" : "Connection: keep-alive\r\n"
        }
        head += "\r\n"
        guard write(Array(head.utf8)[...], to: connection),
            write(response.body[..<prefixLength], to: connection)
        else { return false }
        if closeAfterPrefix { return false }
        if let stall {
            guard pause(stall, on: connection) else { return false }
        }
        return write(response.body[prefixLength...], to: connection)
    }

    private func write(_ bytes: ArraySlice<UInt8>, to connection: Int32) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            // MSG_NOSIGNAL: a client that went away must not raise SIGPIPE in the test process.
            let sent = bytes[offset...].withUnsafeBytes { raw in
                Glibc.send(connection, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Waits `seconds`, but returns false early when the server stops or the client hangs up.
    private func pause(_ seconds: Double, on connection: Int32) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        while DispatchTime.now().uptimeNanoseconds < deadline {
            if isStopped { return false }
            var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 20)
            if ready > 0 {
                if descriptor.revents & Int16(POLLHUP | POLLERR) != 0 { return false }
                var probe: UInt8 = 0
                let peeked = recv(connection, &probe, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
                if peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EINTR) { return false }
                usleep(20_000)  // a pipelined request is waiting; it is read after this response
            }
        }
        return !isStopped
    }

    static func reason(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
}

/// The server's socket could not be set up.
public struct LoopbackServerError: Error, Sendable, CustomStringConvertible {
    /// The failing call.
    public var operation: String
    /// The `errno` it left.
    public var errno: Int32

    public var description: String {
        "loopback server: \(operation) failed: \(String(cString: strerror(errno)))"
    }
}
