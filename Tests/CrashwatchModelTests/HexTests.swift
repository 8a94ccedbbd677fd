// HexTests.swift — the one hex routine: exact round trips, and text that is not hex refused.
import CrashwatchModel
import Testing

@Suite struct HexTests {
    @Test("every byte value round-trips; upper-case digits are read too")
    func roundTrip() {
        let bytes = (0...255).map(UInt8.init)
        let text = Hex.string(bytes)
        #expect(text.count == 512 && text.hasPrefix("000102") && text.hasSuffix("fdfeff"))
        #expect(Hex.bytes(text) == bytes)
        #expect(Hex.bytes("DEADbeef") == [0xde, 0xad, 0xbe, 0xef])
        #expect(Hex.string([UInt8]()) == "" && Hex.bytes("") == [])
    }

    @Test("an odd number of digits or anything but digits is refused", arguments: ["a", "abc", "0g", "0x12", " 12", "１２"])
    func refused(_ text: String) {
        #expect(Hex.bytes(text) == nil)
    }
}
