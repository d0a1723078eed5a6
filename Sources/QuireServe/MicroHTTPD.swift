internal import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A libmicrohttpd daemon: the thin layer between its C callbacks and Swift routes.
///
/// libmicrohttpd's internal thread pool (one thread a core, epoll where there is one) serves
/// every connection, event-driven: a slow or silent client costs a socket, not a thread, until
/// the connection timeout. A route runs synchronously on a pool thread (store reads are short
/// and never wait for the writer); a Server-Sent Events stream with nothing to send suspends
/// its connection (`MHD_suspend_connection`) until it has (`MHD_resume_connection`). A few
/// threads rather than one per connection also keeps the store's internal locks uncontended.
/// Nothing here prints (the daemon is started without `MHD_USE_ERROR_LOG`).
final class HTTPDaemon: Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    /// Limits applied by libmicrohttpd itself, before a route sees a request.
    struct Limits: Sendable {
        /// Connections served at once; more wait in the kernel's backlog.
        var maxConnections = 512
        /// Seconds a connection may stay idle (a slow or silent client) before it is closed.
        var connectionTimeout = 30
        /// Bytes for one connection's request line and headers; larger requests get an error
        /// status from libmicrohttpd (414 or 431). libmicrohttpd clears all of it between a
        /// kept-alive connection's requests, so every such connection holds the whole of it.
        var connectionMemory = 256 * 1024
        /// Threads serving connections: one a core.
        var threads = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    private let daemon: Mutex<DaemonHandle?>
    private let context: Unmanaged<HandlerBox>
    /// The port the daemon listens on (the one chosen by the system when 0 was asked).
    let port: Int

    /// Starts listening on `address` (a numeric IPv4 or IPv6 address) and `port` (0: any free port).
    init(address: SocketAddress, port: Int, limits: Limits, handler: @escaping Handler) throws(ServeError) {
        // Every server's port (the snapshot and fixed-body servers' too): one past 65535 was
        // wrapped to another port.
        guard (0...65_535).contains(port) else { throw ServeError("port \(port) is not a TCP port (0 to 65535; 0 picks a free one)") }
        let box = Unmanaged.passRetained(HandlerBox(handler))
        // poll(2), not epoll: at the connection limit, libmicrohttpd 0.9.75's epoll mode left the
        // connections of clients that had gone in CLOSE-WAIT until their idle timeout, and served
        // no one for 30 s after a burst of 600 (poll frees them at once, and serves a burst of 500
        // a quarter faster).
        var flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_POLL.rawValue)
        flags |= UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue)
        if address.isIPv6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        let started: OpaquePointer? = address.withSocketAddress(port: port) { sockaddr in
            var options = cmhd_daemon_options()
            options.address = sockaddr
            options.connection_limit = UInt32(limits.maxConnections)
            options.connection_timeout = UInt32(limits.connectionTimeout)
            options.connection_memory_limit = limits.connectionMemory
            options.thread_pool_size = UInt32(limits.threads)
            options.unescape = keepEscapes
            return cmhd_start_daemon(flags, accessHandler, box.toOpaque(), &options)
        }
        guard let started else {
            let code = errno
            box.release()
            let failure = HTTPDaemon.failure("cannot listen on \(address.display(port: port))", code: code)
            // In use (another server, or one just stopped): say how to pick another.
            if code == EADDRINUSE { throw ServeError(failure.message + " (choose another port, or port 0 for a free one)", code: code) }
            throw failure
        }
        daemon = Mutex(DaemonHandle(pointer: started))
        context = box
        self.port = Int(cmhd_bound_port(started))
    }

    /// Stops listening, closes every connection and waits for the daemon's threads. Streams
    /// must have been ended first (which resumes their connections: libmicrohttpd must not be
    /// stopped with a suspended connection). Idempotent.
    func stop() {
        guard let running = daemon.withLock({ current -> DaemonHandle? in
            defer { current = nil }
            return current
        }) else { return }
        MHD_stop_daemon(running.pointer)
        context.release()
    }

    deinit { stop() }

    /// The one place a failed libmicrohttpd call becomes a ``ServeError``.
    static func failure(_ what: String, code: Int32) -> ServeError {
        code == 0 ? ServeError(what) : ServeError("\(what): \(String(cString: strerror(code)))", code: code)
    }
}

/// The daemon pointer; libmicrohttpd's calls on it are thread-safe, and ``HTTPDaemon`` stops it once.
private struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The route handler, kept alive for the C callbacks by an unmanaged reference.
private final class HandlerBox: Sendable {
    let handler: HTTPDaemon.Handler
    init(_ handler: @escaping HTTPDaemon.Handler) { self.handler = handler }
}

/// Routes decode percent-escapes themselves (strictly, so a bad escape is a 400), so
/// libmicrohttpd is told to leave the path and the query as they were sent.
private let keepEscapes: cmhd_unescape_callback = { _, _, string in
    string.map { strlen($0) } ?? 0
}

/// Markers in libmicrohttpd's per-request pointer: the headers were seen; the answer is queued.
private var headersSeen: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: 1) }
private var answered: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: 2) }

/// libmicrohttpd calls this at least twice a request: once when the headers are in (the
/// per-request pointer is still nil), then with each piece of body, then once more with no
/// body left, when the answer is queued (queueing earlier makes it close the connection).
/// A request announcing a body is answered on the first call (the route refuses bodies with
/// 413) and the connection closed.
private let accessHandler: MHD_AccessHandlerCallback = {
    cls, connection, url, method, version, _, uploadSize, requestContext in
    guard let cls, let connection, let requestContext else { return MHD_Result.NO }
    if requestContext.pointee == nil {
        requestContext.pointee = headersSeen
        // Two lengths (one of them 0) or a length beside chunked framing could hide a second
        // request in the body: such a request is answered now, and its connection closed.
        let announcesBody = header(connection, "Transfer-Encoding") != nil
            || (header(connection, "Content-Length").map { $0 != "0" } ?? false)
            || headerCount(connection, "Content-Length") > 1
        if !announcesBody { return MHD_Result.YES }
    } else if let uploadSize, uploadSize.pointee > 0 {
        uploadSize.pointee = 0  // a body after the answer was queued: dropped
        return MHD_Result.YES
    } else if requestContext.pointee == answered {
        return MHD_Result.YES
    }
    requestContext.pointee = answered
    let path = url.map { String(validatingCString: $0) } ?? "/"
    var request = HTTPRequest(method: method.map { String(cString: $0) } ?? "", rawPath: path ?? "/")
    request.ifNoneMatch = header(connection, "If-None-Match")
    request.acceptEncoding = header(connection, "Accept-Encoding")
    request.bodyLength = header(connection, "Content-Length")
    if header(connection, "Transfer-Encoding") != nil { request.bodyLength = "chunked" }
    request.contentLengthHeaders = headerCount(connection, "Content-Length")
    request.lastEventID = header(connection, "Last-Event-ID")
    request.host = header(connection, "Host")
    request.version = version.map { String(cString: $0) } ?? ""
    request.hostHeaders = headerCount(connection, "Host")
    let pairs = QueryCollector()
    withExtendedLifetime(pairs) {
        _ = MHD_get_connection_values(
            connection, MHD_ValueKind.GET_ARGUMENT_KIND, collectArgument, Unmanaged.passUnretained(pairs).toOpaque())
    }
    request.rawQuery = pairs.pairs
    request.targetIsUTF8 = path != nil && !pairs.invalid
    let handler = Unmanaged<HandlerBox>.fromOpaque(cls).takeUnretainedValue().handler
    return queue(handler(request), on: connection)
}

private func header(_ connection: OpaquePointer, _ name: String) -> String? {
    MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, name).map { String(cString: $0) }
}

/// How many headers named `name` (in any case) the request has.
private func headerCount(_ connection: OpaquePointer, _ name: StaticString) -> Int {
    var counter = (name: UnsafeRawPointer(name.utf8Start), count: 0)
    withUnsafeMutablePointer(to: &counter) { counter in
        _ = MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, countHeaders, counter)
    }
    return counter.count
}

private let countHeaders: MHD_KeyValueIterator = { cls, _, key, _ in
    guard let cls, let key else { return MHD_Result.YES }
    let counter = cls.assumingMemoryBound(to: (name: UnsafeRawPointer, count: Int).self)
    if strcasecmp(key, counter.pointee.name.assumingMemoryBound(to: CChar.self)) == 0 { counter.pointee.count += 1 }
    return MHD_Result.YES
}

private final class QueryCollector {
    var pairs: [(name: String, value: String?)] = []
    /// A name or value held raw bytes that are not UTF-8.
    var invalid = false
}

private let collectArgument: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return MHD_Result.YES }
    let collector = Unmanaged<QueryCollector>.fromOpaque(cls).takeUnretainedValue()
    guard let name = String(validatingCString: key), value.map({ String(validatingCString: $0) != nil }) ?? true else {
        collector.invalid = true
        return MHD_Result.YES
    }
    collector.pairs.append((name, value.map { String(cString: $0) }))
    return MHD_Result.YES
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let made: OpaquePointer?
    switch response.body {
    case .bytes(let bytes):
        made = bytes.withUnsafeBytes { buffer in
            MHD_create_response_from_buffer(
                buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
        }
    case .stream(let stream):
        let handle = ConnectionHandle(pointer: connection)
        let socket = cmhd_connection_fd(connection)
        stream.attach(resume: { MHD_resume_connection(handle.pointer) }, peerHasClosed: { hasHungUp(socket) })
        let box = Unmanaged.passRetained(StreamBox(stream, connection: handle)).toOpaque()
        made = MHD_create_response_from_callback(UInt64.max /* MHD_SIZE_UNKNOWN */, 4096, readStream, box, freeStream)
        if made == nil { Unmanaged<StreamBox>.fromOpaque(box).release() }
    }
    guard let made else { return MHD_Result.NO }
    defer { MHD_destroy_response(made) }
    for (name, value) in response.headers {
        _ = MHD_add_response_header(made, name, value)
    }
    return MHD_queue_response(connection, UInt32(response.status), made)
}

/// Whether the client closed or reset its end of `socket`: a peek that finds the end of the
/// stream or an error other than "no data yet". Never blocks, consumes nothing. (A client that
/// only shuts down its sending side looks the same: event-stream clients do not.) Peeked only
/// while the connection is suspended, which libmicrohttpd neither closes nor frees.
private func hasHungUp(_ socket: Int32) -> Bool {
    guard socket >= 0 else { return false }
    var byte: UInt8 = 0
    let n = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    if n == 0 { return true }
    return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
}

private final class StreamBox {
    let stream: any ResponseStream
    let connection: ConnectionHandle
    init(_ stream: any ResponseStream, connection: ConnectionHandle) {
        self.stream = stream
        self.connection = connection
    }
}

/// A connection pointer for the stream's resume call, made from another thread: libmicrohttpd
/// allows `MHD_resume_connection` from any thread while the connection exists (its stream is
/// closed, and resumes no more, before libmicrohttpd frees it).
private struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

private let readStream: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let box = Unmanaged<StreamBox>.fromOpaque(cls).takeUnretainedValue()
    let read = box.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max)) {
        MHD_suspend_connection(box.connection.pointer)
    }
    guard let count = read else {
        return -1  // MHD_CONTENT_READER_END_OF_STREAM
    }
    return count
}

private let freeStream: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let box = Unmanaged<StreamBox>.fromOpaque(cls)
    box.takeUnretainedValue().stream.close()
    box.release()
}
