#ifndef QUIRE_CZLIB_SHIM_H
#define QUIRE_CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 is a macro (it passes the library version and the stream size), which Swift
// cannot call; this wrapper is the function it expands to, typed.

/// deflateInit2 for a gzip stream (windowBits 15 + 16) at `level`, default memory and strategy.
static inline int czlib_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

#endif
