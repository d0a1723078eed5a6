internal import CCurl
import Synchronization

/// One request: its easy handle, the bytes received so far, and the continuation to resume.
///
/// Created on the caller's task, then owned by the ``TransferEngine`` thread: everything but
/// `isCancelled` is touched only there after ``TransferEngine/submit(_:)``.
final class Transfer: @unchecked Sendable {
    typealias Completion = CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>

    let url: String
    let easy: UnsafeMutableRawPointer
    private let maxResponseBytes: Int
    private let cancelFlag = Atomic<Bool>(false)
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var body: [UInt8] = []
    private var headers: [(name: String, value: String)] = []
    private var exceededCap = false
    private var continuation: Completion?

    /// Builds the easy handle for `method` (GET or POST) with the client's policies.
    init(
        method: String, url: String, body requestBody: [UInt8]?, headers requestHeaders: [(String, String)],
        configuration: HTTPClientConfiguration
    ) throws(HTTPError) {
        self.url = url
        self.maxResponseBytes = max(0, configuration.maxResponseBytes)
        guard curlGlobalInitResult == CURLE_OK else {
            throw HTTPError(
                code: .transport(Int32(curlGlobalInitResult.rawValue)),
                message: "curl_global_init failed: \(curlDescription(curlGlobalInitResult))", url: url,
                curlCode: Int32(curlGlobalInitResult.rawValue))
        }
        guard let easy = curl_easy_init() else {
            throw HTTPError(code: .transport(-1), message: "curl_easy_init failed", url: url)
        }
        self.easy = easy
        errorBuffer = .allocate(capacity: ccurl_error_size())
        errorBuffer.initialize(repeating: 0, count: ccurl_error_size())

        for (name, value) in requestHeaders {
            let line = "\(name): \(value)"
            // Checked on bytes: "\r\n" is one Character, equal to neither "\r" nor "\n".
            guard !line.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }), !name.isEmpty else {
                throw HTTPError(code: .invalidRequest, message: "header \(name) contains a line break", url: url)
            }
            headerList = curl_slist_append(headerList, line)
        }
        // > Expect: 100-continue makes libcurl wait for the server before sending a POST body.
        headerList = curl_slist_append(headerList, "Expect:")

        try configure(method: method, body: requestBody, configuration: configuration)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    private func set(_ option: CURLoption, _ value: Int) throws(HTTPError) {
        try check(ccurl_easy_setopt_long(easy, option, value), option)
    }

    private func set(_ option: CURLoption, _ value: String) throws(HTTPError) {
        try check(ccurl_easy_setopt_string(easy, option, value), option)
    }

    /// The one place that turns a `curl_easy_setopt` failure into an error.
    private func check(_ code: CURLcode, _ option: CURLoption) throws(HTTPError) {
        guard code != CURLE_OK else { return }
        let mapped: HTTPError.Code = code == CURLE_URL_MALFORMAT ? .badURL : .invalidRequest
        throw HTTPError(
            code: mapped, message: "setting option \(option.rawValue): \(curlDescription(code))", url: url,
            curlCode: Int32(code.rawValue))
    }

    private func configure(method: String, body requestBody: [UInt8]?, configuration c: HTTPClientConfiguration)
        throws(HTTPError)
    {
        let me = Unmanaged.passUnretained(self).toOpaque()
        try set(CURLOPT_URL, url)
        // > libcurl-thread(3): set CURLOPT_NOSIGNAL to 1 in multi-threaded programs.
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // Redirects to the same origin only are followed by the client itself (``HTTPClient``).
        try set(CURLOPT_FOLLOWLOCATION, c.maxRedirects > 0 && c.crossOriginRedirects ? 1 : 0)
        try set(CURLOPT_MAXREDIRS, max(0, c.maxRedirects))
        try set(CURLOPT_CONNECTTIMEOUT_MS, c.connectTimeout.curlMilliseconds())
        try set(CURLOPT_TIMEOUT_MS, c.totalTimeout.curlMilliseconds())
        try set(CURLOPT_LOW_SPEED_LIMIT, max(1, c.lowSpeedLimit))
        try set(CURLOPT_LOW_SPEED_TIME, c.lowSpeedTime.curlSecondsRoundedUp())
        // Rejects a response whose announced (encoded) size is already over the cap; the write
        // callback enforces the cap on decoded bytes.
        try check(
            ccurl_easy_setopt_off_t(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxResponseBytes)),
            CURLOPT_MAXFILESIZE_LARGE)
        if c.acceptCompressed { try set(CURLOPT_ACCEPT_ENCODING, "") }
        try set(CURLOPT_HTTP_VERSION, ccurl_http_version_2tls())
        // Prefer waiting for a connection that can multiplex (HTTP/2) over opening another one.
        try set(CURLOPT_PIPEWAIT, 1)
        try set(CURLOPT_USERAGENT, c.userAgent)
        try set(CURLOPT_SSL_VERIFYPEER, c.verifyTLS ? 1 : 0)
        try set(CURLOPT_SSL_VERIFYHOST, c.verifyTLS ? 2 : 0)
        if let caInfo = c.caInfo { try set(CURLOPT_CAINFO, caInfo) }
        try check(ccurl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), CURLOPT_ERRORBUFFER)
        try check(ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList), CURLOPT_HTTPHEADER)

        try check(
            ccurl_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, transferWriteBody), CURLOPT_WRITEFUNCTION)
        try check(ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me), CURLOPT_WRITEDATA)
        try check(
            ccurl_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, transferWriteHeader), CURLOPT_HEADERFUNCTION)
        try check(ccurl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me), CURLOPT_HEADERDATA)
        try set(CURLOPT_NOPROGRESS, 0)
        try check(ccurl_easy_setopt_xferinfo_callback(easy, transferProgress), CURLOPT_XFERINFOFUNCTION)
        try check(ccurl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, me), CURLOPT_XFERINFODATA)

        if method == "POST" {
            let bytes = requestBody ?? []
            try set(CURLOPT_POST, 1)
            try check(
                ccurl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)),
                CURLOPT_POSTFIELDSIZE_LARGE)
            // > CURLOPT_COPYPOSTFIELDS: "If you want to set the size, set CURLOPT_POSTFIELDSIZE before."
            // libcurl copies the bytes, so the array need not outlive this call.
            let code = (bytes.isEmpty ? [0] : bytes).withUnsafeBytes { raw in
                ccurl_easy_setopt_string(
                    easy, CURLOPT_COPYPOSTFIELDS, raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            try check(code, CURLOPT_COPYPOSTFIELDS)
        } else {
            try set(CURLOPT_HTTPGET, 1)
        }
    }

    // MARK: Caller side

    /// Stores the continuation; called once, before ``TransferEngine/submit(_:)``.
    func attach(_ continuation: Completion) { self.continuation = continuation }

    /// Asks the engine to abort this transfer; safe from any thread.
    func cancel() { cancelFlag.store(true, ordering: .releasing) }

    var isCancelled: Bool { cancelFlag.load(ordering: .acquiring) }

    // MARK: Engine thread

    /// Resumes the caller with `result`; at most once.
    func complete(_ result: Result<HTTPResponse, HTTPError>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(returning: result)
    }

    /// Names the limit in MiB as well as bytes, and what passing it usually means.
    static func tooLargeMessage(_ limit: Int) -> String {
        let mib = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB (\(limit) bytes)" : "\(limit) bytes"
        return "the response (decompressed) exceeds the limit of \(mib); no page of a news API is that large"
            + " (a wrong URL or a misbehaving server?)"
    }

    /// Resumes the caller with the outcome of a finished transfer.
    func complete(curlCode code: CURLcode) {
        if exceededCap || code == CURLE_FILESIZE_EXCEEDED {
            complete(
                .failure(
                    HTTPError(
                        code: .responseTooLarge, message: Self.tooLargeMessage(maxResponseBytes),
                        url: url, curlCode: Int32(code.rawValue))))
        } else if code == CURLE_ABORTED_BY_CALLBACK, isCancelled {
            complete(.failure(cancelledError()))
        } else if code != CURLE_OK {
            complete(.failure(error(for: code)))
        } else {
            var status = 0
            _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            var effective: UnsafeMutablePointer<CChar>?
            _ = ccurl_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective)
            let effectiveURL = effective.map { String(cString: $0) } ?? url
            var response = HTTPResponse(status: status, headers: headers, body: body, effectiveURL: effectiveURL)
            var target: UnsafeMutablePointer<CChar>?
            if ccurl_easy_getinfo_string(easy, CURLINFO_REDIRECT_URL, &target) == CURLE_OK, let target {
                response.redirectTarget = String(cString: target)
            }
            complete(.success(response))
        }
    }

    func cancelledError(_ reason: String = "the request was cancelled") -> HTTPError {
        HTTPError(code: .cancelled, message: reason, url: url)
    }

    private func error(for code: CURLcode) -> HTTPError {
        let detail = String(cString: errorBuffer)
        var message = curlDescription(code)
        // libcurl's buffer often ends with the same words (`…: Couldn't connect to server`).
        if detail.contains(message) {
            message = detail
        } else if !detail.isEmpty {
            message += ": " + detail
        }
        var requestBytes = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestBytes)
        var kind = Self.classify(code)
        if code == CURLE_UNSUPPORTED_PROTOCOL && detail.contains("HTTP/0.9") {
            // Bytes that are not HTTP come back as an unsupported protocol: a reply, not a scheme.
            kind = .malformedReply
        } else if code == CURLE_OUT_OF_MEMORY && requestBytes > 0 {
            // libcurl's answer to a reply header over its limit (100 KB), more likely than a full heap.
            kind = .malformedReply
            message += " (most often a reply header longer than libcurl takes)"
        }
        return HTTPError(
            code: kind, message: message, url: url, curlCode: Int32(code.rawValue), requestSent: requestBytes > 0)
    }

    private static func classify(_ code: CURLcode) -> HTTPError.Code {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .connectionFailed
        case CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_HTTP2,
            CURLE_HTTP2_STREAM:
            .connectionLost
        case CURLE_BAD_CONTENT_ENCODING: .undecodableBody
        case CURLE_WEIRD_SERVER_REPLY: .malformedReply
        case CURLE_TOO_MANY_REDIRECTS: .tooManyRedirects
        case CURLE_UNSUPPORTED_PROTOCOL: .unsupportedProtocol
        case CURLE_URL_MALFORMAT: .badURL
        case CURLE_FILESIZE_EXCEEDED: .responseTooLarge
        case CURLE_ABORTED_BY_CALLBACK: .cancelled
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_SSL_CLIENTCERT:
            .tls
        default: .transport(Int32(code.rawValue))
        }
    }

    // MARK: Callbacks (engine thread, inside curl_multi_perform)

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // The cap applies to decoded bytes, so a compression bomb stops here.
        guard body.count + bytes.count <= maxResponseBytes else {
            exceededCap = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    fileprivate func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 13 || bytes[end - 1] == 10 { end -= 1 }
        let line = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            // A new status line: an interim 1xx or a redirect came before; keep only the last.
            headers.removeAll()
        } else if let colon = line.firstIndex(of: ":") {
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingSpaces()
            headers.append((name: name, value: value))
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (a header value's, a parameter's).
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}

private func transferWriteBody(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    // > CURLOPT_WRITEFUNCTION: "If that amount differs from the amount passed to your callback
    // > function, it signals an error condition to the library."
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private func transferWriteHeader(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: length))
    return length
}

private func transferProgress(
    _ userdata: UnsafeMutableRawPointer?, _ dltotal: curl_off_t, _ dlnow: curl_off_t, _ ultotal: curl_off_t,
    _ ulnow: curl_off_t
) -> Int32 {
    guard let userdata else { return 0 }
    // > CURLOPT_XFERINFOFUNCTION: "Returning a non-zero value from this callback will cause
    // > libcurl to abort the transfer and return CURLE_ABORTED_BY_CALLBACK."
    return Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue().isCancelled ? 1 : 0
}
