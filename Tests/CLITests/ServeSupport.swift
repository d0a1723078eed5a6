import Foundation
import Testing
import QuireTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `quire serve` process on a free loopback port, stopped (SIGINT) by ``stop()``.
final class ServeProcess {
    let process = ChildProcess()
    let port: Int
    let scratch: URL
    private let outURL: URL
    private let errURL: URL

    /// Starts `quire --store STORE serve --port 0 ARGS` and waits for the line with its URL.
    init(store: String, _ extra: [String] = []) throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("quire-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        outURL = scratch.appendingPathComponent("stdout")
        errURL = scratch.appendingPathComponent("stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        process.executableURL = try QuireBinary.url()
        process.arguments = ["--store", store, "serve", "--port", "0"] + extra
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var found: Int?
        // Up to a minute: inside a full two-core `swift test` a new process can wait seconds for
        // its first steps (10 s were not always enough).
        for _ in 0..<1_200 {
            let out = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
            if let range = out.range(of: #":(\d+)/"#, options: .regularExpression) {
                found = Int(out[range].dropFirst().dropLast())
                break
            }
            if !process.isRunning { break }
            usleep(50_000)
        }
        guard let found else {
            process.terminate()
            let err = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
            throw QuireRunError(description: "quire serve did not start: \(err)")
        }
        port = found
    }

    var stdout: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Sends SIGINT and waits; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: scratch)
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// One HTTP response as read off the socket.
struct RawResponse: CustomStringConvertible {
    var status: Int
    /// Header names lowercased.
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
    var description: String { "\(status) \(headers) \(text.prefix(300))" }
}

/// A connected TCP socket to 127.0.0.1:`port`, closed on deinit.
final class TestSocket {
    let fd: Int32

    init(port: Int, receiveTimeout: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw QuireRunError(description: "cannot connect to port \(port): errno \(errno)")
        }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends all of `bytes`; false when the peer closed.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads what arrives until the peer closes, the timeout passes, or `until` says enough.
    func receive(until done: ([UInt8]) -> Bool = { _ in false }) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            out += buffer[0..<n]
            if done(out) { break }
        }
        return out
    }
}

/// Parses one response (Content-Length or read-to-close bodies).
func parseResponse(_ bytes: [UInt8]) -> RawResponse? {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard let end = (0...max(0, bytes.count - 4)).first(where: { Array(bytes[$0..<min($0 + 4, bytes.count)]) == separator })
    else { return nil }
    let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let statusParts = head[0].split(separator: " ")
    guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
    var headers: [String: String] = [:]
    for line in head.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    var body = Array(bytes[(end + 4)...])
    if let length = headers["content-length"].flatMap(Int.init), body.count > length { body = Array(body[..<length]) }
    return RawResponse(status: status, headers: headers, body: body)
}

/// Whether `bytes` hold a whole response with a Content-Length body.
func isCompleteResponse(_ bytes: [UInt8]) -> Bool {
    guard let response = parseResponse(bytes), let length = response.headers["content-length"].flatMap(Int.init)
    else { return false }
    return response.body.count >= length
}

/// Sends `request` as is on a new connection and reads the response until the server closes.
func rawRequest(_ port: Int, _ request: String) throws -> RawResponse {
    let socket = try TestSocket(port: port)
    socket.send(request)
    let bytes = socket.receive()
    guard let response = parseResponse(bytes) else {
        throw QuireRunError(description: "no HTTP response to \(request.prefix(120)): \(String(decoding: bytes.prefix(200), as: UTF8.self))")
    }
    return response
}

/// `GET target` with `Connection: close` and extra headers.
func get(_ port: Int, _ target: String, headers: [String: String] = [:], method: String = "GET") throws -> RawResponse {
    var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request += "\(name): \(value)\r\n" }
    return try rawRequest(port, request + "\r\n")
}

/// `text` percent-encoded for a path segment or query value (everything but unreserved characters).
func percentEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn:
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? text
}
