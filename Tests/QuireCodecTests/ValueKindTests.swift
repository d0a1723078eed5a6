import Testing

@testable import QuireCodec

@Suite struct ValueKindTests {
    /// `ValueKind.of` spells out the tag table by hand; it must agree with the raw values.
    @Test func everyTagMapsToItsKind() {
        for tag in 0...255 {
            let byte = UInt8(tag)
            let expected: ValueKind? = byte >= 0x80 ? .shortString : byte >= 0x40 ? .smallInt : ValueKind(rawValue: byte)
            #expect(ValueKind.of(byte) == expected, "tag \(tag)")
        }
        #expect(ValueKind.of(0x13) == nil && ValueKind.of(0x3F) == nil)
    }
}
