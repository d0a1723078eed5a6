internal import CMalloc

/// Hands the allocator's free pages back to the system (glibc keeps freed heap memory for the
/// next allocations; `malloc_trim` releases the whole pages among it), so that a phase that
/// follows one whose buffers are gone does not count them in its resident memory. Returns
/// whether any pages went back.
@discardableResult
func returnFreedMemory() -> Bool { quire_malloc_trim() != 0 }
