#ifndef QUIRE_CMALLOC_TRIM_H
#define QUIRE_CMALLOC_TRIM_H
/* glibc's malloc_trim, which Swift's Glibc module does not export (it lives in <malloc.h>): a
   bulk load hands its analysis buffers' pages back before its compaction's pages take their place. */

/* __GLIBC__ comes from <features.h>, which any libc header includes: without one first the
   test below was always false and the trim did nothing. */
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
/* 1 when pages went back to the system. */
static inline int quire_malloc_trim(void) { return malloc_trim(0); }
/* Allocations of `bytes` or more are mapped on their own and unmapped when freed, whatever
   was freed before (glibc otherwise raises the threshold to the largest mapped block freed, and
   later blocks of that size stay in the heap of the thread that freed them). 1 on success. */
static inline int quire_malloc_map_from(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
/* At most `count` heaps that threads allocate from (glibc's default is eight a core, each
   keeping what was freed in it for its own thread's next allocations). 1 on success. */
static inline int quire_malloc_heaps(int count) { return mallopt(M_ARENA_MAX, count); }
#else
static inline int quire_malloc_trim(void) { return 0; }
static inline int quire_malloc_map_from(int bytes) { (void)bytes; return 0; }
static inline int quire_malloc_heaps(int count) { (void)count; return 0; }
#endif

#endif
