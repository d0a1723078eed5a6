#ifndef QUIRE_CCHECKSUM_CRC32C_H
#define QUIRE_CCHECKSUM_CRC32C_H
/* CRC-32C with the processor's instruction where it has one (SSE 4.2 on x86-64, the CRC
   extension on AArch64). Swift cannot reach these instructions; QuireCodec calls these inline
   functions when quire_crc32c_hardware() says so and its own tables otherwise. The functions
   take and return the raw register value: callers invert before and after, as CRC-32C does. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

static inline int quire_crc32c_hardware(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
static inline uint32_t quire_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t c = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        count -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (count > 0) {
        c32 = __builtin_ia32_crc32qi(c32, *p);
        p++;
        count--;
    }
    return c32;
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
static inline int quire_crc32c_hardware(void) { return 1; }

static inline uint32_t quire_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = (const unsigned char *)bytes;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __builtin_arm_crc32cd(crc, word);
        p += 8;
        count -= 8;
    }
    while (count > 0) {
        crc = __builtin_arm_crc32cb(crc, *p);
        p++;
        count--;
    }
    return crc;
}
#else
static inline int quire_crc32c_hardware(void) { return 0; }

static inline uint32_t quire_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}
#endif

#endif
