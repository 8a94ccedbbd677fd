// FingerprintRules.swift — the fingerprint's two tables of judgement: how a function name is normalized (what
// varies across rebuilds or signature edits goes: compiler clone suffixes, Rust's legacy hash, Go's ABI suffix,
// parameter lists, return types and qualifiers) and which frames are crash machinery (signal delivery, libc's
// abort and assert, C++'s terminate chain, Rust's panic machinery, Go's panic and signal runtime, Swift's
// fatalError runtime). Pure functions over text; changing either changes `Fingerprint.algorithm`.

/// The name rules and the machinery table of `Fingerprint`.
public enum FingerprintRules {
    /// The longest key kept, in bytes (names in reports are capped already; this bounds a hand-made one).
    static let maximumKeyBytes = 512

    /// `name` as the fingerprint hashes it: `crashwatch_demo::Widget::explode(int) const` →
    /// `crashwatch_demo::Widget::explode`, `crash_here.isra.0` → `crash_here`, `runtime.raise.abi0` →
    /// `runtime.raise`, `swift_trap.crashHere(Swift.Array<Swift.Int>, Swift.Int) -> Swift.Int` →
    /// `swift_trap.crashHere`, `app::f::h0123456789abcdef` → `app::f`. Template and generic arguments stay.
    public static func normalizedName(_ name: String) -> String {
        var text = Array(name.utf8.prefix(2 * maximumKeyBytes))
        trimSpaces(&text)
        for _ in 0..<8 {
            let before = text.count
            stripCloneSuffix(&text)
            stripRustHash(&text)
            if text.count == before { break }
        }
        stripReturnType(&text)
        stripQualifiers(&text)
        stripParameterList(&text)
        trimSpaces(&text)
        return capped(String(decoding: text, as: UTF8.self))
    }

    /// Whether a normalized name is crash machinery: a frame every crash of its kind shares, never hashed.
    /// A Swift closure (`closure #1 … in Swift._assertionFailure`) is machinery when its outermost function is.
    public static func isMachinery(_ name: String) -> Bool {
        var subject = Substring(name)
        if subject.hasPrefix("closure #") || subject.hasPrefix("implicit closure #"),
           let last = subject.ranges(of: " in ").last { subject = subject[last.upperBound...] }
        if machineryNames.contains(String(subject)) { return true }
        if machineryPrefixes.contains(where: { subject.hasPrefix($0) }) { return true }
        if subject.hasPrefix("core::option::") || subject.hasPrefix("core::result::") {
            return unwrapMethods.contains(where: { subject.hasSuffix($0) })
        }
        return false
    }

    /// Functions that are machinery by their exact (normalized) name.
    static let machineryNames: Set<String> = [
        // Signal delivery.
        "__restore_rt", "__kernel_rt_sigreturn", "__sigreturn",
        // libc: abort, raise, assert, fortify, heap checks.
        "abort", "__GI_abort", "raise", "__GI_raise", "gsignal", "pthread_kill", "__pthread_kill", "__pthread_kill_implementation",
        "__pthread_kill_internal", "__GI___pthread_kill", "tgkill", "__assert_fail", "__assert_fail_base", "__GI___assert_fail",
        "__assert_perror_fail", "__libc_message", "__libc_fatal", "__fortify_fail", "__chk_fail", "__stack_chk_fail",
        "malloc_printerr",
        // C++: the terminate chain.
        "std::terminate", "__cxxabiv1::__terminate", "__cxxabiv1::__unexpected", "std::unexpected",
        "__gnu_cxx::__verbose_terminate_handler", "__cxa_throw", "__cxa_rethrow", "__cxa_call_terminate",
        "__cxa_call_unexpected", "__cxa_pure_virtual", "__cxa_deleted_virtual", "__cxa_bad_cast", "__cxa_bad_typeid",
        "_Unwind_RaiseException", "_Unwind_Resume",
        // Rust: panic and abort.
        "rust_begin_unwind", "__rustc::rust_begin_unwind", "__rust_start_panic", "__rustc::__rust_start_panic",
        "rust_panic", "std::process::abort", "std::rt::__rust_abort", "__rustc::__rust_abort",
        "std::sys::pal::unix::abort_internal", "std::sys::abort_internal",
        // Go: the signal and panic runtime.
        "runtime.gopanic", "runtime.crash", "runtime.raise", "runtime.raiseproc", "runtime.dieFromSignal", "runtime.abort",
        "runtime.systemstack", "runtime.systemstack_switch", "runtime.mcall", "runtime.startpanic_m", "runtime.dopanic_m",
        "runtime.badsignal", "runtime.preprintpanics", "runtime.printpanics", "runtime.morestack",
        // Swift: fatalError and the runtime's error reporting.
        "Swift._assertionFailure", "Swift.fatalError", "Swift._fatalErrorMessage", "Swift._preconditionFailure",
        "Swift.preconditionFailure", "Swift.precondition", "Swift.assertionFailure", "Swift.assert",
        "Swift._unimplementedInitializer", "swift_reportError", "swift::fatalError", "swift::fatalErrorv",
        "swift_deletedMethodError", "swift_dynamicCastFailure", "swift::swift_dynamicCastFailure",
    ]

    /// Functions that are machinery by how their (normalized) name begins.
    static let machineryPrefixes: [String] = [
        "std::__throw_", "std::panicking::", "core::panicking::", "std::sys::backtrace::__rust_end_short_backtrace",
        "std::sys_common::backtrace::__rust_end_short_backtrace", "panic_abort::", "panic_unwind::",
        "std::sys::pal::unix::stack_overflow::", "runtime.panic", "runtime.goPanic", "runtime.sig", "runtime.throw",
        "runtime.fatal", "runtime.gopanic.", "runtime.crash.",
    ]

    /// Last path components that make a `core::option::`/`core::result::` function machinery.
    static let unwrapMethods = ["::unwrap", "::expect", "::unwrap_failed", "::expect_failed", "::unwrap_err", "::expect_err"]

    /// `text` cut to `maximumKeyBytes` bytes (at a character boundary).
    static func capped(_ text: String) -> String {
        guard text.utf8.count > maximumKeyBytes else { return text }
        var cut = text.utf8.prefix(maximumKeyBytes)
        while !cut.isEmpty, String(cut) == nil { cut = cut.dropLast() }
        return String(cut) ?? ""
    }

    // MARK: Steps

    private static func trimSpaces(_ text: inout [UInt8]) {
        while text.last == UInt8(ascii: " ") { text.removeLast() }
        while text.first == UInt8(ascii: " ") { text.removeFirst() }
    }

    /// Removes one compiler clone suffix: GCC's `.isra.0`, `.constprop.1`, `.part.0`, `.cold`, `.lto_priv.0`,
    /// LLVM's `.llvm.123`, Go's `.abi0`, and their demangled form ` [clone .isra.0]`.
    private static func stripCloneSuffix(_ text: inout [UInt8]) {
        if text.last == UInt8(ascii: "]"), let open = lastRange(of: " [clone .", in: text) {
            text.removeSubrange(open...); return
        }
        for suffix in [".isra", ".constprop", ".part", ".cold", ".lto_priv", ".llvm", ".abi0"] {
            let marker = Array(suffix.utf8)
            guard let start = lastRange(of: marker, in: text), start > 0 else { continue }
            let rest = text[(start + marker.count)...]
            // The marker, then nothing or `.DIGITS`.
            if rest.isEmpty || (rest.first == UInt8(ascii: ".") && rest.count > 1 && rest.dropFirst().allSatisfy(isDigit)) {
                text.removeSubrange(start...); return
            }
        }
    }

    /// Removes a legacy Rust hash, `::h` and 16 hex digits at the end.
    private static func stripRustHash(_ text: inout [UInt8]) {
        guard text.count > 19 else { return }
        let tail = text.suffix(19)
        guard tail.starts(with: Array("::h".utf8)), tail.dropFirst(3).allSatisfy({ Hex.nibble($0) != nil }) else { return }
        text.removeLast(19)
    }

    /// Removes a return type: the text after the last ` -> ` outside brackets, when it holds no space outside brackets
    /// (Swift's `f(Swift.Int) -> Swift.Int`; a closure's inner arrow, followed by ` in …`, stays).
    private static func stripReturnType(_ text: inout [UInt8]) {
        var arrow: Int?
        var spaceAfterArrow = false
        scanTopLevel(text) { index in
            if text[index...].starts(with: arrowBytes) { arrow = index; spaceAfterArrow = false }
            else if text[index] == UInt8(ascii: " "), let start = arrow, index > start + 3 { spaceAfterArrow = true }
        }
        if let arrow, !spaceAfterArrow { text.removeSubrange(arrow...) }
    }

    /// Removes trailing qualifiers: ` const`, ` volatile`, ` &`, ` &&`, ` noexcept`, ` throws`, ` rethrows`, ` async`.
    private static func stripQualifiers(_ text: inout [UInt8]) {
        for _ in 0..<8 {
            guard let word = ["const", "volatile", "&&", "&", "noexcept", "throws", "rethrows", "async"].first(where: {
                let marker = Array(" \($0)".utf8)
                return text.count > marker.count && text.suffix(marker.count).elementsEqual(marker)
            }) else { return }
            text.removeLast(word.utf8.count + 1)
        }
    }

    /// Removes the parameter list at the end: the last `(…)` outside brackets, when the name ends with it and it
    /// neither starts the name (`(anonymous namespace)`) nor is an operator's own (`operator()`).
    private static func stripParameterList(_ text: inout [UInt8]) {
        guard text.last == UInt8(ascii: ")") else { return }
        var open: Int?
        scanTopLevel(text) { index in if text[index] == UInt8(ascii: "(") { open = index } }
        guard let start = open, start > 0 else { return }
        text.removeSubrange(start...)
    }

    /// Calls `body` with the index of every byte outside brackets (`()`, `[]`, `<>`, `{}`); an arrow's `>` and an
    /// operator's symbols (`operator<<`, `operator()`) are not brackets. Brackets inside are visited as they open.
    private static func scanTopLevel(_ text: [UInt8], _ body: (Int) -> Void) {
        var depth = 0
        var index = 0
        while index < text.count {
            let byte = text[index]
            if byte == UInt8(ascii: "o"), text[index...].starts(with: operatorBytes), index + 8 < text.count, !isWordByte(text[index + 8]) {
                index += 8
                if index + 1 < text.count, text[index] == UInt8(ascii: "("), text[index + 1] == UInt8(ascii: ")") { index += 2 }
                while index < text.count, operatorSymbolBytes.contains(text[index]) { index += 1 }
                continue
            }
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "<"), UInt8(ascii: "{"):
                if depth == 0 { body(index) }
                depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth = max(depth - 1, 0)
            case UInt8(ascii: ">") where index > 0 && text[index - 1] == UInt8(ascii: "-"):
                if depth == 0 { body(index) }
            case UInt8(ascii: ">"):
                depth = max(depth - 1, 0)
            default:
                if depth == 0 { body(index) }
            }
            index += 1
        }
    }

    private static let arrowBytes = Array(" -> ".utf8)
    private static let operatorBytes = Array("operator".utf8)
    private static let operatorSymbolBytes = Array("<>=!+-*/%^&|~,[]".utf8)

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || byte == UInt8(ascii: "_")
    }

    /// The start of the last occurrence of `marker` in `text`.
    private static func lastRange(of marker: String, in text: [UInt8]) -> Int? { lastRange(of: Array(marker.utf8), in: text) }

    private static func lastRange(of marker: [UInt8], in text: [UInt8]) -> Int? {
        guard text.count >= marker.count, !marker.isEmpty else { return nil }
        for start in stride(from: text.count - marker.count, through: 0, by: -1) where text[start..<(start + marker.count)].elementsEqual(marker) {
            return start
        }
        return nil
    }
}
