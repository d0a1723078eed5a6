import QuireLMDB

/// The way back from a damaged meta page, added to the error of a store that cannot be opened.
///
/// LMDB refuses a whole file for one damaged meta page, though the other page's commit is whole
/// (see `MetaPageRecovery`): the error says which page is intact and which command copies the
/// store as it describes it.
enum MetaPageAdvice {
    /// The advice for the store at `path`, when exactly one of its meta pages is intact.
    static func text(_ path: String) -> String? {
        guard let found = MetaPageRecovery.recovery(directory: path), let id = found.intact.transactionID else { return nil }
        let what =
            switch found.isNewest {
            case true?: "whole (its newest commit, \(id))"
            case false?: "as of commit \(id), the one before the newest"
            case nil: "as of commit \(id) (the damaged page may have named the one after it)"
            }
        return "its meta page \(found.damaged.page) is damaged (\(found.damaged.problem ?? "unreadable")); meta page "
            + "\(found.intact.page) is intact: quire copy --meta-page \(found.intact.page) DEST recovers the store \(what)"
    }

    /// `why` (an open's failure) and the advice, when there is any.
    static func adding(to why: String, _ path: String) -> String {
        guard let advice = text(path) else { return why }
        return "\(why); \(advice)"
    }
}
