/// A misbehaviour of the ``FixtureAPI``, as the real APIs were seen to misbehave (API_NOTES §1, §4).
public enum FixtureAPIFault: Sendable, Hashable {
    /// 429 with the gateway's quota `fault` body and no `Retry-After` header.
    case rateLimited
    /// 429 with the quota body and `Retry-After: <seconds>`.
    case rateLimitedRetryAfter(seconds: Int)
    /// 500 with a Spring Boot error object.
    case serverError
    /// 401 with the invalid-key `fault` body.
    case unauthorized
    /// 400 with a `"status": "ERROR"` body.
    case badRequest
    /// 403 with an HTML page instead of JSON.
    case htmlForbidden
    /// The full `Content-Length` is announced, half the body is sent, then the connection closes.
    case dropConnectionMidBody
    /// A complete HTTP response (200) whose JSON body stops halfway.
    case truncatedJSON
    /// A complete HTTP response (200) whose JSON body has garbage in the middle.
    case malformedJSON
    /// The first bytes of the body, then silence for `seconds`, then the rest.
    case stall(seconds: Double)
}

/// When the ``FixtureAPI`` injects a ``FixtureAPIFault``.
public struct FixtureAPIFaultRule: Sendable, Hashable {
    /// Which requests a rule applies to.
    public enum Trigger: Sendable, Hashable {
        /// Requests whose 1-based number (counted over every path) is in the range.
        case requestNumbers(ClosedRange<Int>)
        /// NYT article search requests for this `page`.
        case nytPage(Int)
        /// Every NYT article search request.
        case everyNYTRequest
        /// `/v1/categories.json`.
        case feedzillaCategories
        /// `/v1/categories/<id>/articles.json`.
        case feedzillaCategory(Int)
    }

    /// Which requests the rule applies to.
    public var trigger: Trigger
    /// What goes wrong.
    public var fault: FixtureAPIFault
    /// How many matching requests fail before the rule is spent; `nil` means every one.
    public var times: Int?

    /// A rule: `fault` for the first `times` requests matching `trigger` (all of them when `nil`).
    public init(_ trigger: Trigger, _ fault: FixtureAPIFault, times: Int? = nil) {
        self.trigger = trigger
        self.fault = fault
        self.times = times
    }
}
