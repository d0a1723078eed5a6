import Glibc

/// Reads HTTP/1.1 requests from one connection, keeping bytes that belong to the next request.
struct RequestReader {
    let socket: Int32
    private var buffer: [UInt8] = []

    init(socket: Int32) { self.socket = socket }

    /// The next request, or nil when the client closed the connection or sent garbage.
    mutating func next() -> FixtureRequest? {
        guard let headEnd = readUntilHeadEnd() else { return nil }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)

        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let requestLine = lines.popFirst() else { return nil }
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return nil }
        var headers: [(String, String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            headers.append((String(line[..<colon]), String(value)))
        }
        let (path, query) = FixtureRequest.splitTarget(String(parts[1]))
        var request = FixtureRequest(method: String(parts[0]), path: path, query: query, headers: headers, body: [])

        if request.header("Expect")?.lowercased() == "100-continue" {
            let interim = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
            _ = interim.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        let length = request.header("Content-Length").flatMap { Int($0.trimmingCharacters()) } ?? 0
        guard length >= 0, length <= ServerCore.maxRequestBytes else { return nil }
        while buffer.count < length {
            guard fill() else { return nil }
        }
        request.body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return request
    }

    /// The index of the blank line that ends the request head.
    private mutating func readUntilHeadEnd() -> Int? {
        var searchFrom = 0
        while true {
            if buffer.count >= 4 {
                for index in searchFrom...(buffer.count - 4)
                where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13
                    && buffer[index + 3] == 10
                {
                    return index
                }
                searchFrom = buffer.count - 3
            }
            guard buffer.count < 64 * 1024, fill() else { return nil }
            // A request starts with a method token; anything else (a TLS ClientHello) is dropped
            // at once instead of waiting for a blank line that never comes.
            guard let first = buffer.first, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) else {
                return nil
            }
        }
    }

    /// Appends what the socket has; false at end of stream or on error.
    private mutating func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let received = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if received < 0, errno == EINTR { continue }
            guard received > 0 else { return false }
            buffer.append(contentsOf: chunk[..<received])
            return true
        }
    }
}

extension String {
    fileprivate func trimmingCharacters() -> String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
