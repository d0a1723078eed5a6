import Foundation
import QuireCluster
import QuireHTTP

/// One `quire node` event as a JSON line: `{"time":…,"member":…,"event":…, …}`.
enum NodeEventLine {
    static func json(_ event: ClusterEvent, member: String, scrubbing secret: String) -> String {
        var fields: [String: Any] = ["time": Date().timeIntervalSince1970, "member": member]
        switch event {
        case .leaseGranted(let id, let ttl):
            fields["event"] = "lease"
            fields["lease"] = String(id)
            fields["ttl"] = ttl
        case .leaseExpired(let id):
            fields["event"] = "lease-expired"
            fields["lease"] = String(id)
        case .owned(let source):
            fields["event"] = "owned"
            fields["source"] = source
        case .lost(let source, let reason):
            fields["event"] = "lost"
            fields["source"] = source
            fields["reason"] = reason
        case .fetched(let source, let pages, let articles):
            fields["event"] = "fetched"
            fields["source"] = source
            fields["pages"] = pages
            fields["articles"] = articles
        case .committed(let source, let label):
            fields["event"] = "committed"
            fields["source"] = source
            fields["label"] = label
        case .applied(let batch):
            fields["event"] = "applied"
            fields["pages"] = batch.pages
            fields["articles"] = batch.articles
            fields["revision"] = batch.appliedRevision
            fields["lags"] = batch.lags
        case .compacted(let revision, let deleted):
            fields["event"] = "compacted"
            fields["revision"] = revision
            fields["deleted"] = deleted
        case .bootstrapped(let peer, let revision):
            fields["event"] = "bootstrapped"
            fields["peer"] = peer
            fields["revision"] = revision
        case .rejoined(let revision):
            fields["event"] = "rejoined"
            fields["revision"] = revision
        case .retrying(let message):
            fields["event"] = "retrying"
            fields["message"] = URLRedaction.redact(message)  // an etcd URL's user:password@
        }
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        let line = TerminalText.inertJSON(String(decoding: data, as: UTF8.self))
        // Sources and errors never carry the key (the fetch layer scrubs it); a last guard, for
        // keys long enough not to blank ordinary words.
        return secret.count < 8 ? line : line.replacingOccurrences(of: secret, with: "***")
    }
}
