#ifndef QUIRE_CMALLOC_TRIM_H
#define QUIRE_CMALLOC_TRIM_H
/* glibc's malloc_trim, which Swift's Glibc module does not export (it lives in <malloc.h>): a
   bulk load hands its analysis buffers' pages back before its compaction's pages take their place. */

#if defined(__GLIBC__)
#include <malloc.h>
static inline void quire_malloc_trim(void) { (void)malloc_trim(0); }
#else
static inline void quire_malloc_trim(void) {}
#endif

#endif
