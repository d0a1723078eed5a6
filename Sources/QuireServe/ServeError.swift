/// Why the server could not start (or a libmicrohttpd call failed).
public struct ServeError: Error, Sendable, CustomStringConvertible {
    /// What failed, for the message.
    public let message: String
    /// The `errno` the failure left, when there is one.
    public let code: Int32?

    init(_ message: String, code: Int32? = nil) {
        self.message = message
        self.code = code
    }

    public var description: String { message }
}
