import QuireLMDB

/// The way back from a damaged meta page, added to the error of a store that cannot be opened.
///
/// LMDB refuses a whole file for one damaged meta page, though the other page's commit is whole
/// (see `MetaPageRecovery`): the error says which page is intact and which command copies the
/// store as it describes it.
enum MetaPageAdvice {
    /// `why` (an open's failure) and, when exactly one of the store's meta pages is intact, which
    /// one and the command that recovers the store from it.
    static func adding(to why: String, _ path: String) -> String {
        guard let found = MetaPageRecovery.recovery(directory: path), let id = found.intact.transactionID else { return why }
        let what =
            switch found.isNewest {
            case true?: "whole (its newest commit, \(id))"
            case false?: "as of commit \(id), the one before the newest"
            case nil: "as of commit \(id) (the damaged page may have named the one after it)"
            }
        let problem = found.damaged.problem ?? "unreadable"
        // The open's own error may have said what is damaged already.
        let damaged = why.contains(problem) ? "" : "its meta page \(found.damaged.page) is damaged (\(problem)); "
        return "\(why); \(damaged)meta page \(found.intact.page) is intact: "
            + "quire copy --meta-page \(found.intact.page) DEST recovers the store \(what)"
    }
}
