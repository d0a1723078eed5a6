/// A subject keyword of an article (`keywords[]`).
public struct Keyword: Codable, Sendable, Hashable {
    /// The kind of keyword: `subject`, `persons`, `glocations`, ... (2025: `Subject`, capitalised).
    public var name: String
    /// The keyword itself.
    public var value: String
    /// Its rank, when given (a string before 2018, a number since).
    public var rank: Int?

    /// Creates a keyword.
    public init(name: String, value: String, rank: Int? = nil) {
        self.name = name
        self.value = value
        self.rank = rank
    }

    /// The coding keys: names (the case names) and compact positions (the raw values).
    enum CodingKeys: Int, CodingKey, CaseIterable {
        case name, value, rank
    }
}
