// An embedding program imports only `Quire`: the LMDB and codec types its API uses come along.
@_exported import QuireCodec
@_exported import QuireLMDB
