#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One reusable ``DecoderState`` per thread, so that a decode call allocates no state, string table
/// or key-set tables of its own: for a small record those allocations cost as much as its fields.
///
/// Thread-local rather than shared behind a lock, so that readers on several cores never touch a
/// common cache line. A call nested in another on the same thread (a `Decodable` that decodes
/// other bytes inside its `init(from:)`) finds the state in use and makes a fresh one.
enum DecoderStateCache {
    /// The thread's state, released by the thread's exit.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            if let raw = raw as UnsafeMutableRawPointer? { Unmanaged<DecoderState>.fromOpaque(raw).release() }
        }
        precondition(status == 0, "QuireCodec: pthread_key_create failed (\(status))")
        return key
    }()

    /// Runs `body` with a state for the root value at `start..<end` of `reader`.
    static func withState<R>(
        reader: ByteReader, names: [String], values: [String?], start: Int, end: Int,
        options: CompactDecoder.Options, _ body: (DecoderState) throws -> R
    ) throws -> R {
        let state: DecoderState
        if let raw = pthread_getspecific(key) {
            state = Unmanaged<DecoderState>.fromOpaque(raw).takeUnretainedValue()
        } else {
            state = fresh(reader: reader, names: names, values: values, start: start, end: end, options: options, kept: true)
            pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        }
        guard !state.inUse else {
            let nested = fresh(reader: reader, names: names, values: values, start: start, end: end, options: options)
            return try body(nested)
        }
        state.reset(reader: reader, names: names, values: values, start: start, end: end, options: options)
        state.inUse = true
        defer { state.inUse = false }
        return try body(state)
    }

    /// A new state; `kept` when the thread keeps it for its later calls.
    private static func fresh(
        reader: ByteReader, names: [String], values: [String?], start: Int, end: Int, options: CompactDecoder.Options,
        kept: Bool = false
    ) -> DecoderState {
        let strings = StringTable(
            reader: reader, rootStart: start, rootEnd: end, depthLimit: options.depthLimit, values: values, ownCopies: kept)
        return DecoderState(reader: reader, names: names, strings: strings, start: start, end: end, options: options)
    }
}
