/// Strict UTF-8 validation (Unicode table 3-7: no overlong forms, no surrogates, nothing past
/// U+10FFFF, no truncated sequence), sixteen bytes per step.
///
/// Why its own: article text is mostly ASCII with a non-ASCII character every few dozen bytes, and
/// the standard library's validating initializers walk such text a byte at a time (a quarter of a
/// record decode). A string built from bytes validated here goes through `UTF8Span(unchecked:)` and
/// `String(copying:)`, which copy without validating again.
///
/// Two methods, one rule set:
/// - Long runs are checked sixteen bytes at a time with local rules. Every byte is a continuation
///   byte exactly when a lead byte one, two or three places before asks for one; C0, C1 and F5–FF
///   never occur; the byte after E0, ED, F0 and F4 lies in that lead's narrower range; the last
///   three bytes start no sequence they cannot finish. The byte three places back is loaded from
///   memory, so no lane shuffles are needed.
/// - Short strings and the first three bytes of a long one (which have no three bytes before them)
///   go through a shift-based automaton: one table row per byte value holds every state's
///   successor, six bits each, so a byte costs a load and a shift with no branch.
package enum UTF8Validation {
    /// What validation found: whether the bytes are well-formed, and whether they are all ASCII.
    struct Outcome: Equatable {
        var isValid: Bool
        var isASCII: Bool
    }

    /// A string of the `count` bytes at `start`, or nil when they are not well-formed UTF-8.
    @inline(__always)
    package static func string(_ start: UnsafePointer<UInt8>, count: Int) -> String? {
        let outcome = validate(start, count: count)
        guard outcome.isValid else { return nil }
        let buffer = UnsafeBufferPointer(start: start, count: count)
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            // Safe: `validate` has just checked every byte of `buffer`.
            return String(copying: unsafe UTF8Span(unchecked: buffer.span, isKnownASCII: outcome.isASCII))
        }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Validates `count` bytes at `start`.
    static func validate(_ start: UnsafePointer<UInt8>, count: Int) -> Outcome {
        if count < blockSize + 3 {
            let (state, high) = run(start, count: count)
            return Outcome(isValid: state == .accept, isASCII: high == 0)
        }
        // The first three bytes as a valid prefix (possibly mid-sequence); blocks check the rest.
        let (state, high) = run(start, count: 3)
        guard state != .error else { return Outcome(isValid: false, isASCII: false) }
        let raw = UnsafeRawPointer(start)
        var violations = Mask(repeating: false)
        var highBytes = Mask(repeating: high != 0)
        var offset = 3
        while true {
            // The last block overlaps the one before instead of reading past the end.
            if offset > count - blockSize { offset = count - blockSize }
            let byte = raw.loadUnaligned(fromByteOffset: offset, as: Block.self)
            let back1 = raw.loadUnaligned(fromByteOffset: offset - 1, as: Block.self)
            violations .|= blockViolations(
                byte, back1: back1,
                back2: raw.loadUnaligned(fromByteOffset: offset - 2, as: Block.self),
                back3: raw.loadUnaligned(fromByteOffset: offset - 3, as: Block.self))
            // As signed bytes, the non-ASCII ones are the negative ones (one compare, not two).
            highBytes .|= unsafeBitCast(byte, to: SIMD16<Int8>.self) .< SIMD16<Int8>(repeating: 0)
            if offset == count - blockSize { break }
            offset += blockSize
        }
        let isASCII = none(highBytes)
        guard none(violations) else { return Outcome(isValid: false, isASCII: false) }
        let complete = start[count - 1] < 0xC0 && start[count - 2] < 0xE0 && start[count - 3] < 0xF0
        return Outcome(isValid: complete, isASCII: isASCII)
    }

    // MARK: - Blocks

    private typealias Block = SIMD16<UInt8>
    private typealias Mask = SIMDMask<SIMD16<Int8>>
    private static let blockSize = 16

    /// True when no lane of `mask` is set (`any(_:)` is a generic, unspecialized reduction).
    @inline(__always) private static func none(_ mask: Mask) -> Bool {
        let bytes = SIMD16<Int8>(repeating: 0).replacing(with: -1, where: mask)
        let lanes = unsafeBitCast(bytes, to: SIMD2<UInt64>.self)
        return lanes[0] | lanes[1] == 0
    }

    /// The lanes of `byte` that break a rule, given the bytes one, two and three places before.
    /// Comparisons are vector against vector: against a scalar, Swift compares lane by lane.
    @inline(__always)
    private static func blockViolations(_ byte: Block, back1: Block, back2: Block, back3: Block) -> Mask {
        let x80 = Block(repeating: 0x80), xC0 = Block(repeating: 0xC0)
        let xE0 = Block(repeating: 0xE0), xF0 = Block(repeating: 0xF0)
        let isContinuation = (byte & xC0) .== x80
        let wantsContinuation = (back1 .>= xC0) .| (back2 .>= xE0) .| (back3 .>= xF0)
        var violations = isContinuation .^ wantsContinuation
        violations .|= (byte &- xC0) .< Block(repeating: 2)  // C0, C1: overlong two-byte leads
        violations .|= byte .>= Block(repeating: 0xF5)  // past U+10FFFF
        violations .|= (back1 .== xE0) .& (byte .< Block(repeating: 0xA0))  // overlong three-byte
        violations .|= (back1 .== Block(repeating: 0xED)) .& (byte .> Block(repeating: 0x9F))  // surrogates
        violations .|= (back1 .== xF0) .& (byte .< Block(repeating: 0x90))  // overlong four-byte
        violations .|= (back1 .== Block(repeating: 0xF4)) .& (byte .> Block(repeating: 0x8F))  // past U+10FFFF
        return violations
    }

    // MARK: - Automaton

    /// An automaton state: its bit offset within a table row.
    private struct State: Equatable {
        var offset: UInt64
        static let accept = State(offset: 0)
        static let error = State(offset: 6)
        static let needsOne = State(offset: 12)
        static let needsTwo = State(offset: 18)
        static let needsThree = State(offset: 24)
        /// After E0, ED, F0, F4: the next byte has a narrower range.
        static let afterE0 = State(offset: 30)
        static let afterED = State(offset: 36)
        static let afterF0 = State(offset: 42)
        static let afterF4 = State(offset: 48)
        static let all: [State] = [accept, error, needsOne, needsTwo, needsThree, afterE0, afterED, afterF0, afterF4]
    }

    /// Runs the automaton over `count` bytes from `accept`; also returns their high bits ORed.
    @inline(__always)
    private static func run(_ start: UnsafePointer<UInt8>, count: Int) -> (State, UInt8) {
        let rows = transitions
        var offset = State.accept.offset
        var high: UInt8 = 0
        for index in 0..<count {
            let byte = start[index]
            high |= byte
            // `&>>` takes the shift modulo 64, so the upper rows' bits never need masking off.
            offset = rows[Int(byte)] &>> offset
        }
        return (State(offset: offset & 63), high & 0x80)
    }

    /// Row per byte value: at each state's offset, six bits holding the offset of its successor.
    private nonisolated(unsafe) static let transitions: UnsafePointer<UInt64> = {
        let rows = UnsafeMutablePointer<UInt64>.allocate(capacity: 256)
        for byte in 0...255 {
            var row: UInt64 = 0
            for state in State.all { row |= successor(of: state, UInt8(byte)).offset << state.offset }
            rows[byte] = row
        }
        return UnsafePointer(rows)
    }()

    private static func successor(of state: State, _ byte: UInt8) -> State {
        let continuation: ClosedRange<UInt8> = 0x80...0xBF
        switch state {
        case .accept:
            switch byte {
            case 0x00...0x7F: return .accept
            case 0xC2...0xDF: return .needsOne
            case 0xE0: return .afterE0
            case 0xED: return .afterED
            case 0xE1...0xEC, 0xEE...0xEF: return .needsTwo
            case 0xF0: return .afterF0
            case 0xF1...0xF3: return .needsThree
            case 0xF4: return .afterF4
            default: return .error
            }
        case .needsOne: return continuation.contains(byte) ? .accept : .error
        case .needsTwo: return continuation.contains(byte) ? .needsOne : .error
        case .needsThree: return continuation.contains(byte) ? .needsTwo : .error
        case .afterE0: return (0xA0...0xBF).contains(byte) ? .needsOne : .error
        case .afterED: return (0x80...0x9F).contains(byte) ? .needsOne : .error
        case .afterF0: return (0x90...0xBF).contains(byte) ? .needsTwo : .error
        case .afterF4: return (0x80...0x8F).contains(byte) ? .needsTwo : .error
        default: return .error
        }
    }
}
