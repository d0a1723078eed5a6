// Must NOT compile: the LMDB layer under Quire is the package's own (`package` access), so an
// embedding program cannot open a raw environment and write past the store's writer and
// indexes, even though SwiftPM lets it import the module (scripts/check-examples.sh expects
// "cannot find 'Environment' in scope": `package` declarations are invisible outside).
import Quire
import QuireLMDB

let environment = try Environment(path: "raw.db")
print(environment)
