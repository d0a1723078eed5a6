/// The fields a full-text index knows: text fields (tokenized, weighted) and filter fields (exact
/// values kept in another index, such as an article's section).
public struct TextSchema: Sendable, Hashable {
    /// One tokenized field.
    public struct Field: Sendable, Hashable {
        /// The name used in queries (`headline:storm`), matched case-insensitively.
        public var name: String
        /// The number tokens of this field carry (``Token/field``); below 16 (the posting format's limit).
        public var id: UInt8
        /// The BM25F weight of the field.
        public var weight: Double

        /// A field; `id` must be below 16.
        public init(name: String, id: UInt8, weight: Double) {
            precondition(id < 16, "text field ids are below 16")
            self.name = name
            self.id = id
            self.weight = weight
        }
    }

    /// The tokenized fields.
    public var fields: [Field]
    /// The names of filter fields (`section:Science`), lowercased.
    public var filterFields: Set<String>

    /// A schema; field names and ids must be distinct.
    public init(fields: [Field], filterFields: Set<String> = []) {
        self.fields = fields
        self.filterFields = Set(filterFields.map { $0.lowercased() })
    }

    /// The text field called `name` (case-insensitive).
    public func field(named name: some StringProtocol) -> Field? {
        let lowered = name.lowercased()
        return fields.first { $0.name.lowercased() == lowered }
    }

    /// The text field with `id`.
    public func field(id: UInt8) -> Field? { fields.first { $0.id == id } }

    /// The weights indexed by field id (0 for ids no field has), for ``BM25``.
    public var weights: [Double] {
        var weights = [Double](repeating: 0, count: Int((fields.map(\.id).max() ?? 0)) + 1)
        for field in fields { weights[Int(field.id)] = field.weight }
        return weights
    }

    /// The article fields (QuireNews' `Article`) and their weights: headline 3, keywords 2,
    /// abstract 1.5, lead paragraph 1, snippet 0.5 (it often repeats the abstract), byline 0.5;
    /// filter fields `section`, `subsection`, `desk` and `type`.
    public static let articles = TextSchema(
        fields: [
            Field(name: "headline", id: 0, weight: 3),
            Field(name: "abstract", id: 1, weight: 1.5),
            Field(name: "snippet", id: 2, weight: 0.5),
            Field(name: "lead", id: 3, weight: 1),
            Field(name: "keywords", id: 4, weight: 2),
            Field(name: "byline", id: 5, weight: 0.5),
        ],
        filterFields: ["section", "subsection", "desk", "type"])
}
