// Must NOT compile: a record's bytes are lent as a RawSpan that cannot outlive the read
// (scripts/check-examples.sh expects "requires that 'RawSpan' conform to 'Escapable'").
import Quire

struct Note: Codable, Sendable, Identifiable {
    var id: Int
}

let notes = StoreCollection<Note>(name: "notes")
let store = try Store(path: "escape.db", schema: StoreSchema(notes))
let escaped: RawSpan? = try store.read { snapshot in
    try snapshot.withRecordBytes(.int(1), in: notes) { bytes in bytes }
}
