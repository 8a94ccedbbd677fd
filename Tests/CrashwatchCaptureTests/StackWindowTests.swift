// StackWindowTests.swift — the one stack-window rule of live captures and cores: which readable range holds a
// stack pointer's stack (its own, or the next one above a guard page, at most 64 KiB up) and where the window
// starts (the red zone below the pointer on x86-64, none on aarch64, never below the range).
@testable import CrashwatchCapture
import Testing

@Suite struct StackWindowTests {
    let stack: Range<UInt64> = 0x7ffd_0000_0000..<0x7ffd_0002_0000

    @Test("a stack pointer inside the range, or below it within 64 KiB (a guard page), is that range's stack")
    func holdsStack() {
        #expect(StackWindow.holdsStack(stack, sp: 0x7ffd_0001_0000))
        #expect(StackWindow.holdsStack(stack, sp: stack.lowerBound))
        #expect(StackWindow.holdsStack(stack, sp: stack.lowerBound - 4096), "in the guard page below")
        #expect(StackWindow.holdsStack(stack, sp: stack.lowerBound - 65536))
        #expect(!StackWindow.holdsStack(stack, sp: stack.lowerBound - 65537), "more than 64 KiB below")
        #expect(!StackWindow.holdsStack(stack, sp: stack.upperBound), "at its end: above it")
    }

    @Test("the window starts 128 bytes below the pointer on x86-64, at it on aarch64, never below the range")
    func low() {
        #expect(StackWindow.low(sp: 0x7ffd_0001_0000, rangeStart: stack.lowerBound, architecture: .x86_64) == 0x7ffd_0000_ff80)
        #expect(StackWindow.low(sp: 0x7ffd_0001_0000, rangeStart: stack.lowerBound, architecture: .aarch64) == 0x7ffd_0001_0000)
        #expect(StackWindow.low(sp: stack.lowerBound + 16, rangeStart: stack.lowerBound, architecture: .x86_64) == stack.lowerBound)
        #expect(StackWindow.low(sp: stack.lowerBound - 4096, rangeStart: stack.lowerBound, architecture: .x86_64) == stack.lowerBound)
        #expect(StackWindow.low(sp: 64, rangeStart: 0, architecture: .x86_64) == 0)
    }
}
