internal import CCurl
import Foundation
import Synchronization

/// Drives all transfers of one ``HTTPClient`` on a dedicated thread with a curl multi handle.
///
/// libcurl calls block (resolving, connecting, waiting for data), so they never run on Swift's
/// cooperative pool: callers hand a ``Transfer`` to ``submit(_:)`` and suspend on a
/// continuation that this thread resumes. The multi handle keeps a connection cache, so
/// sequential requests to the same host reuse one connection.
final class TransferEngine: @unchecked Sendable {
    // @unchecked: `multi` is used only on the engine thread, except `curl_multi_wakeup`, which
    // libcurl documents as callable from any thread; the inbox is behind a Mutex.
    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())

    private struct Inbox {
        var pending: [Transfer] = []
        var shutdownRequested = false
        var closed = false
    }

    /// Creates the multi handle and starts the engine thread; nil when libcurl cannot allocate.
    init?() {
        guard curlGlobalInitResult == CURLE_OK, let multi = curl_multi_init() else { return nil }
        self.multi = multi
        let thread = Thread { [self] in run() }
        thread.name = "Quire HTTP transfers"
        thread.start()
    }

    deinit {
        curl_multi_cleanup(multi)
    }

    /// Queues `transfer`; it completes with `.cancelled` when the engine has shut down.
    func submit(_ transfer: Transfer) {
        let accepted = inbox.withLock { inbox in
            guard !inbox.closed else { return false }
            inbox.pending.append(transfer)
            return true
        }
        if accepted {
            wake()
        } else {
            transfer.complete(.failure(transfer.cancelledError("the HTTP client was shut down")))
        }
    }

    /// Interrupts `curl_multi_poll` so the thread looks at new work and cancellations.
    func wake() {
        _ = curl_multi_wakeup(multi)
    }

    /// Stops the thread; transfers still running complete with `.cancelled`.
    func shutdown() {
        inbox.withLock { $0.shutdownRequested = true }
        wake()
    }

    private func run() {
        var active: [UnsafeMutableRawPointer: Transfer] = [:]
        while true {
            let (incoming, stopping) = inbox.withLock { inbox in
                let incoming = inbox.pending
                inbox.pending.removeAll()
                if inbox.shutdownRequested { inbox.closed = true }
                return (incoming, inbox.closed)
            }
            for transfer in incoming {
                if transfer.isCancelled {
                    transfer.complete(.failure(transfer.cancelledError()))
                } else if curl_multi_add_handle(multi, transfer.easy) == CURLM_OK {
                    active[transfer.easy] = transfer
                } else {
                    transfer.complete(
                        .failure(
                            HTTPError(
                                code: .transport(-1), message: "curl_multi_add_handle failed", url: transfer.url)))
                }
            }
            if stopping {
                for transfer in active.values {
                    curl_multi_remove_handle(multi, transfer.easy)
                    transfer.complete(.failure(transfer.cancelledError("the HTTP client was shut down")))
                }
                return
            }
            // Cancellation acts here too, not only in the progress callback, so a transfer
            // waiting on a silent server is aborted without waiting for libcurl's next callback.
            for (easy, transfer) in active where transfer.isCancelled {
                curl_multi_remove_handle(multi, easy)
                active[easy] = nil
                transfer.complete(.failure(transfer.cancelledError()))
            }

            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            var remaining: Int32 = 0
            while let message = curl_multi_info_read(multi, &remaining) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let transfer = active.removeValue(forKey: easy)
                else { continue }
                let code = ccurl_message_result(message)
                curl_multi_remove_handle(multi, easy)
                transfer.complete(curlCode: code)
            }
            // > curl_multi_poll: "the call will return early if curl_multi_wakeup is called".
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }
}
