#ifndef QUIRE_CZSTD_SHIM_H
#define QUIRE_CZSTD_SHIM_H
#include <zstd.h>
#include <zdict.h>
#endif
