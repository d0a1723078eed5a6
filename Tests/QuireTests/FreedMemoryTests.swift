import Testing

@testable import Quire

#if canImport(Glibc)
    import Glibc

    @Suite struct FreedMemoryTests {
        /// Freed small blocks under a live one stay in glibc's heap (it only trims its top by
        /// itself); `returnFreedMemory` hands their pages back. It did nothing until its C
        /// header tested `__GLIBC__` before any libc header had defined it.
        @Test func freedHeapPagesGoBackToTheSystem() throws {
            let blocks = (0..<16_384).map { _ -> UnsafeMutableRawPointer? in
                let block = malloc(4_096)
                if let block { memset(block, 1, 4_096) }
                return block
            }
            #expect(blocks.allSatisfy { $0 != nil })
            // The last block stays, so the 64 MiB below it are not the heap's top.
            for block in blocks.dropLast() { free(block) }
            #expect(returnFreedMemory())
            free(blocks.last!)
        }
    }
#endif
