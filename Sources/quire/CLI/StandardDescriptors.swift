#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps the standard descriptors taken before anything opens a file.
///
/// Started with one of them closed (`quire load … 2>&-`), the process hands that number to
/// the next file it opens: the store's `data.mdb` became descriptor 2, and an error message
/// would have been written into the store's first page. `/dev/null` takes each closed one,
/// so what is written to it goes nowhere.
enum StandardDescriptors {
    static func ensureOpen() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            // open(2) returns the lowest free number: this one.
            let opened = open("/dev/null", O_RDWR)
            if opened >= 0 && opened != descriptor { close(opened) }
        }
    }
}
