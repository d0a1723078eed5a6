#ifndef QUIRE_CLMDB_SHIM_H
#define QUIRE_CLMDB_SHIM_H
#include <lmdb.h>
#endif
