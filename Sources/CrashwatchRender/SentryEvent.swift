// SentryEvent.swift — a report as one Sentry event (Sentry's event payload for native crashes, what Sentry,
// GlitchTip and Bugsink take in an envelope): `platform: native`; the fault as the exception, with the
// signal as its mechanism and the faulting stack (oldest frame first, inline frames as frames of their own);
// every thread; `debug_meta.images` from build-ids; contexts, release, tags; the report's fingerprint (so the
// server groups by crashwatch's rules); the event id from the report id.
// A pure function of the report, so every attempt to ship a report sends the same event. The README's
// "Shipping to Sentry, GlitchTip or Bugsink" has the table of fields.
import CrashwatchModel

/// Encodes reports as Sentry events.
public enum SentryEvent {
    /// What the event takes from the shipper rather than the report.
    public struct Settings: Equatable, Sendable {
        /// The event's `environment` (`SENTRY_ENVIRONMENT`), when set.
        public var environment: String?
        /// crashwatch's version, for the event's `sdk`.
        public var version: String

        public init(environment: String? = nil, version: String) {
            self.environment = environment
            self.version = version
        }
    }

    /// Threads whose stacks the event carries at most (the others are listed without a stack), and frames per
    /// stack at most (the innermost are kept): bounds on the event's size whatever the process looked like.
    static let maxThreadsWithStacks = 128
    static let maxFramesPerStack = 256
    /// Threads listed at most (the exception's thread always is).
    static let maxThreads = 512

    /// The event as JSON.
    public static func event(for report: CrashReport, settings: Settings) -> [UInt8] {
        var json = JSONWriter(capacity: 16_384)
        json.object { json in
            json.member("event_id", eventID(of: report))
            json.member("timestamp", report.captureTime)
            json.member("platform", "native")
            json.member("level", level(of: report.kind))
            json.member("logger", "crashwatch")
            json.member("server_name", tagValue(report.host.hostname))
            if let release = release(of: report) { json.member("release", release) }
            if let environment = settings.environment.flatMap(environmentName) { json.member("environment", environment) }
            json.object("sdk") { json in
                json.member("name", "crashwatch")
                json.member("version", settings.version)
            }
            json.object("tags") { json in tags(of: report, into: &json) }
            if let fingerprint = report.fingerprint {
                // The server groups events by it: one issue per bug, whatever the run, host or build.
                json.member("fingerprint", strings: ["\(fingerprint.algorithm):\(fingerprint.value)"])
            }
            let fault = Fault(report)
            json.object("exception") { json in
                json.array("values") { json in exception(fault, in: report, into: &json) }
            }
            json.object("threads") { json in
                json.array("values") { json in threads(of: report, fault: fault, into: &json) }
            }
            json.object("debug_meta") { json in
                json.array("images") { json in images(of: report, into: &json) }
            }
            json.object("contexts") { json in contexts(of: report, into: &json) }
            json.object("extra") { json in
                json.member("crashwatch_report_id", report.id)
                json.member("soft_errors", report.softErrors.count)
            }
        }
        return json.bytes
    }

    /// The event id: the report id's 32 hex digits (a UUID without its dashes), lower case, so a retry sends
    /// the same event and the server drops a duplicate. A report id of anything else is hashed into 32 digits.
    public static func eventID(of report: CrashReport) -> String {
        let digits = report.id.lowercased().filter(\.isHexDigit)
        if digits.count == 32, report.id.count <= 36 { return String(digits) }
        // FNV-1a over the id's bytes, twice with different seeds: stable, not random.
        var first: UInt64 = 0xcbf2_9ce4_8422_2325, second: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in report.id.utf8 {
            first = (first ^ UInt64(byte)) &* 0x100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return paddedHex(first, digits: 16) + paddedHex(second, digits: 16)
    }

    /// `fatal` for a crash, `info` for a snapshot (a look at a running process, no fault), `error` for a hang
    /// (the process was left running) or an abnormal exit.
    static func level(of kind: ReportKind) -> String {
        kind == .crash ? "fatal" : kind == .snapshot ? "info" : "error"
    }

    // MARK: The fault

    /// The fault the exception describes: the original fault when a handler ran first, else the final signal.
    struct Fault {
        /// The signal's name, number, `si_code` and its name, and description.
        var name: String
        var number: Int32
        var code: Int32
        var codeName: String
        var description: String
        /// The fault address, when the signal has one.
        var address: Address?
        /// The thread the fault happened on.
        var tid: Int32?
        /// Its stack, innermost first, and its registers.
        var frames: [FrameRecord]
        var registers: [RegisterValue]

        /// The fault of `report`.
        init(_ report: CrashReport) {
            let signal = report.signal
            frames = ReportSummary.faultFrames(of: report)
            if let original = signal.originalFault, !original.frames.isEmpty {
                (name, number, code, codeName) = (original.name, original.number, original.code, original.codeName)
                description = original.description + " (handled, then \(signal.name))"
                (address, tid, registers) = (original.faultAddress, original.tid, original.registers)
                return
            }
            (name, number, code, codeName, description) = (signal.name, signal.number, signal.code, signal.codeName, signal.description)
            address = signal.faultAddress
            let thread = report.crashedThread ?? report.threads.first { $0.tid == report.process.pid }
            tid = thread?.tid
            registers = thread?.registers ?? []
        }
    }

    /// The exception: the signal (a hang: `Hang`) and its description, the faulting thread, the mechanism, the stack.
    static func exception(_ fault: Fault, in report: CrashReport, into json: inout JSONWriter) {
        json.object { json in
            switch report.kind {
            case .hang:
                let milliseconds = Int64(min(max(report.hang?.durationMs ?? 0, 0), 9e15).rounded(.down))
                json.member("type", "Hang")
                json.member("value", "no \(report.hang?.source ?? "watchdog") ping for \(milliseconds) ms")
            case .snapshot:
                json.member("type", "Snapshot")
                json.member("value", ThreadStates.summary(of: report) ?? "\(report.threads.count) threads")
            case .abnormalExit:
                json.member("type", fault.name)
                json.member("value", "killed by \(fault.name)" + (report.exit.map { " (\($0.reason))" } ?? ""))
            default:
                json.member("type", fault.name)
                json.member("value", fault.description)
            }
            if let tid = fault.tid { json.member("thread_id", tid) }
            json.object("mechanism") { json in mechanism(fault, kind: report.kind, into: &json) }
            json.object("stacktrace") { json in
                stacktrace(fault.frames, in: report, into: &json)
                registers(fault.registers, into: &json)
            }
        }
    }

    /// A crash's mechanism is the signal (`signalhandler`, not handled); a hang's the watchdog (handled: the
    /// process was left running); a snapshot's `crashwatch.snapshot` (handled, likewise); an abnormal exit's the
    /// kernel's kill.
    static func mechanism(_ fault: Fault, kind: ReportKind, into json: inout JSONWriter) {
        switch kind {
        case .hang:
            json.member("type", "watchdog")
            json.member("handled", true)
        case .snapshot:
            json.member("type", "crashwatch.snapshot")
            json.member("handled", true)
        default:
            json.member("type", kind == .crash ? "signalhandler" : "abnormal_exit")
            json.member("handled", false)
            json.member("synthetic", true)
            if let address = fault.address {
                json.object("data") { json in json.member("fault_address", address.description) }
            }
            json.object("meta") { json in
                json.object("signal") { json in
                    json.member("number", fault.number)
                    json.member("code", fault.code)
                    json.member("name", fault.name)
                    json.member("code_name", fault.codeName)
                }
            }
        }
    }

    // MARK: Stacks

    /// `"frames":[…]`, oldest first (Sentry's order; the report's is innermost first), at most
    /// `maxFramesPerStack` of the innermost.
    static func stacktrace(_ frames: [FrameRecord], in report: CrashReport, into json: inout JSONWriter) {
        json.array("frames") { json in
            for frame in frames.prefix(maxFramesPerStack).reversed() { self.frame(frame, in: report, into: &json) }
        }
    }

    /// One frame: its address, names, source position, image and whether that image is in-app.
    static func frame(_ frame: FrameRecord, in report: CrashReport, into json: inout JSONWriter) {
        json.object { json in
            json.member("instruction_addr", frame.address.description)
            let image = FrameText.image(of: frame, in: report)
            if let function = frame.function ?? frame.symbol, !function.isEmpty {
                json.member("function", function)
                if let symbol = frame.symbol, !symbol.isEmpty, symbol != function { json.member("symbol", symbol) }
            }
            if let file = frame.file, !file.isEmpty {
                json.member("filename", file)
                if file.hasPrefix("/") { json.member("abs_path", file) }
                if let line = frame.line, line > 0 { json.member("lineno", line) }
                if let column = frame.column, column > 0 { json.member("colno", column) }
            }
            if let image {
                json.member("package", image.path)
                json.member("image_addr", image.loadAddress.description)
            }
            json.member("in_app", image?.inApp ?? false)
        }
    }

    /// `"registers":{"rip":"0x…",…}` (at most 128), or nothing without registers.
    static func registers(_ registers: [RegisterValue], into json: inout JSONWriter) {
        guard !registers.isEmpty else { return }
        json.object("registers") { json in
            for register in registers.prefix(128) { json.member(register.name, register.value.description) }
        }
    }

    /// Every thread (at most `maxThreads`): id, name, crashed; its stack, but for the thread whose stack is the
    /// exception's.
    static func threads(of report: CrashReport, fault: Fault, into json: inout JSONWriter) {
        let faultFromThread = report.signal.originalFault.map { $0.frames.isEmpty } ?? true
        var stacks = 0
        var listed = Array(report.threads.prefix(maxThreads))
        if let tid = fault.tid, !listed.contains(where: { $0.tid == tid }), let thread = report.threads.first(where: { $0.tid == tid }) {
            listed.append(thread)
        }
        for thread in listed {
            json.object { json in
                json.member("id", thread.tid)
                if let name = thread.name, !name.isEmpty { json.member("name", name) }
                json.member("crashed", thread.crashed)
                json.member("current", thread.tid == fault.tid)
                let isFaultStack = faultFromThread && thread.tid == fault.tid
                if !isFaultStack, !thread.frames.isEmpty, stacks < maxThreadsWithStacks {
                    stacks += 1
                    json.object("stacktrace") { json in
                        stacktrace(thread.frames, in: report, into: &json)
                        if thread.crashed { registers(thread.registers, into: &json) }
                    }
                }
            }
        }
    }

    // MARK: Images

    /// Every image with a build-id, as an ELF debug image: `code_id` the build-id, `debug_id` derived from it.
    /// An image without a build-id cannot be identified to a symbol server and is left out.
    static func images(of report: CrashReport, into json: inout JSONWriter) {
        for image in report.images {
            guard let buildID = image.buildID, let debugID = debugID(fromBuildID: buildID) else { continue }
            json.object { json in
                json.member("type", "elf")
                json.member("code_id", buildID.lowercased())
                json.member("debug_id", debugID)
                json.member("code_file", image.path)
                json.member("image_addr", image.loadAddress.description)
                json.member("image_size", max(image.size, 0))
                json.member("arch", sentryArch(image.architecture ?? report.host.architecture))
            }
        }
    }

    /// Sentry's debug id of an ELF build-id: its first 16 bytes (zero-padded when shorter) read as a
    /// little-endian GUID — the first three fields byte-swapped, as Breakpad does — written as a UUID.
    public static func debugID(fromBuildID buildID: String) -> String? {
        guard var bytes = Hex.bytes(buildID), !bytes.isEmpty else { return nil }
        bytes = Array(bytes.prefix(16)) + Array(repeating: 0, count: max(0, 16 - bytes.count))
        bytes[0..<4].reverse()
        bytes[4..<6].reverse()
        bytes[6..<8].reverse()
        let hex = Hex.string(bytes)
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex.dropFirst(range.lowerBound).prefix(range.count))
        }
        return parts.joined(separator: "-")
    }

    /// Sentry's architecture name for a kernel machine name.
    static func sentryArch(_ machine: String) -> String {
        switch machine {
        case "aarch64", "arm64": "arm64"
        case "i386", "i486", "i586", "i686": "x86"
        default: machine
        }
    }

    /// `count` lower-case hex digits, zero-padded.
    static func paddedHex(_ value: UInt64, digits count: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, count - digits.count)) + digits
    }
}
