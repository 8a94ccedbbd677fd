// SyscallNamesTests.swift — crashwatch's system call names against the kernel's own headers as installed here
// (x86-64's unistd_64.h, and the generic table aarch64 uses, from the cross compiler's headers): every number in
// the tables is the one the header gives that name. Skips a header that is not installed, saying so.
import CrashwatchCapture
import Foundation
import Testing

@Suite struct SyscallNamesTests {
    /// `#define __NR_name NUMBER` (and `__NR3264_name`) lines of a header, name to number.
    private func numbers(in path: String) -> [String: Int]? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var numbers: [String: Int] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("#define __NR") {
            let parts = line.split(separator: " ")
            guard parts.count >= 3, let number = Int(parts[2]) else { continue }
            let name = parts[1].replacingOccurrences(of: "__NR3264_", with: "").replacingOccurrences(of: "__NR_", with: "")
            numbers[name] = number
        }
        return numbers
    }

    @Test("every name in a table has the number the kernel's header gives it", arguments: [
        (Architecture.x86_64, "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
        (Architecture.aarch64, "/usr/aarch64-linux-gnu/include/asm-generic/unistd.h"),
    ])
    func matchesHeaders(_ architecture: Architecture, _ header: String) throws {
        guard let numbers = numbers(in: header) else {
            print("skip: \(header) is not installed")
            return
        }
        var checked = 0
        for number in 0..<512 {
            guard let name = SyscallNames.name(of: number, architecture: architecture) else { continue }
            #expect(numbers[name] == number, "\(architecture) \(name): table \(number), header \(numbers[name].map(String.init) ?? "none")")
            checked += 1
        }
        #expect(checked >= 50)
        #expect(SyscallNames.name(of: 100_000, architecture: architecture) == nil)
    }
}
