internal import CCurl

/// libcurl's process-wide initialisation, done once and before any transfer.
///
/// > libcurl-thread(3): "You must never call global functions from multiple threads at the
/// > same time." A Swift global is initialised exactly once, atomically, on first use.
let curlGlobalInitResult: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

/// The text libcurl gives for `code` (`curl_easy_strerror`).
func curlDescription(_ code: CURLcode) -> String {
    guard let text = curl_easy_strerror(code) else { return "curl error \(code.rawValue)" }
    return String(cString: text)
}
