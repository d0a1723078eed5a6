import Foundation

/// A word quoted for a POSIX shell, so a line the CLI prints (a completion script, the demo's
/// hints) works when pasted whatever the word holds: `it's` is `'it'\''s'`.
enum ShellWord {
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
