#ifndef QUIRE_CLMDB_SHIM_H
#define QUIRE_CLMDB_SHIM_H
#include <lmdb.h>
#include <sys/types.h>

#if defined(__linux__)
/* glibc declares this only under _GNU_SOURCE, which Swift's Glibc module leaves out. */
extern int sync_file_range(int fd, __off64_t offset, __off64_t count, unsigned int flags);

/* Starts writing a file's dirty pages to disk and returns without waiting for them
   (SYNC_FILE_RANGE_WRITE), so that a later fsync has less left to wait for. */
static inline int quire_start_writeback(int fd) { return sync_file_range(fd, 0, 0, 2u); }
#else
static inline int quire_start_writeback(int fd) { (void)fd; return 0; }
#endif

#endif
