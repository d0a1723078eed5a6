#ifndef QUIRE_CSQLITE_SHIM_H
#define QUIRE_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
