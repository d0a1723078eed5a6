#ifndef QUIRE_CPREFETCH_PREFETCH_H
#define QUIRE_CPREFETCH_PREFETCH_H
/* A hint to load a cache line ahead of use. Swift cannot emit a prefetch; QuireText's term table
   asks for the slots and entries of the next tokens while it looks up the current one, so that
   their cache misses overlap instead of following one another. */

static inline void quire_prefetch(const void *address) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address, 0, 3);
#else
    (void)address;
#endif
}

#endif
