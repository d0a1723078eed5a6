// An embedding program imports only `Quire`: the codec's generic values (`CompactValue`) and its
// `Codable` coders come along. The LMDB layer does not: no raw transaction, database or
// environment is reachable from here, so nothing can write past the store's writer and indexes.
@_exported import QuireCodec
