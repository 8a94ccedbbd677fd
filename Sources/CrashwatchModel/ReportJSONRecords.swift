// ReportJSONRecords.swift — one writer per record type of a report, in the order a report contains them, each
// member in declaration order (the layout rules are in ReportJSON.swift's banner).

extension JSONWriter {

    /// Writes the whole report as the top-level object.
    mutating func write(_ report: CrashReport) {
        let indent = 2
        member("schemaVersion", indent: indent, first: true); integer(report.schemaVersion)
        member("format", indent: indent); string(report.format)
        member("id", indent: indent); string(report.id)
        member("kind", indent: indent); string(report.kind.rawValue)
        member("captureTime", indent: indent); string(report.captureTime)
        member("captureDurationMs", indent: indent); double(report.captureDurationMs)
        member("holdDurationMs", indent: indent)
        if let hold = report.holdDurationMs, hold.isFinite { double(hold) } else { field("null") }
        member("crashwatchVersion", indent: indent); string(report.crashwatchVersion)
        member("signal", indent: indent); write(report.signal, indent: indent)
        member("hang", indent: indent)
        if let hang = report.hang { write(hang, indent: indent) } else { null() }
        member("exit", indent: indent)
        if let exit = report.exit { write(exit, indent: indent) } else { null() }
        member("hangReportID", indent: indent); string(report.hangReportID)
        member("runID", indent: indent); string(report.runID)
        member("source", indent: indent); string(report.source)
        member("coreFile", indent: indent); string(report.coreFile)
        member("fingerprint", indent: indent)
        if let fingerprint = report.fingerprint { write(fingerprint, indent: indent) } else { null() }
        member("annotations", indent: indent)
        if let annotations = report.annotations { write(environment: annotations, indent: indent) } else { null() }
        member("breadcrumbs", indent: indent)
        if let breadcrumbs = report.breadcrumbs { lines(breadcrumbs, indent: indent) { $0.write($1) } } else { null() }
        member("process", indent: indent); write(report.process, indent: indent)
        member("host", indent: indent); write(report.host, indent: indent)
        member("threads", indent: indent); lines(report.threads, indent: indent) { $0.write($1, indent: indent + 2) }
        member("images", indent: indent); lines(report.images, indent: indent) { $0.write($1) }
        member("diagnostics", indent: indent); write(report.diagnostics, indent: indent)
        member("softErrors", indent: indent); lines(report.softErrors, indent: indent) { $0.write($1) }
        closeObject(indent: 0)
    }

    /// Writes the fatal signal as an object whose members sit at `indent + 2`.
    mutating func write(_ signal: SignalRecord, indent: Int) {
        let inner = indent + 2
        writeSignalMembers(signal, indent: inner)
        member("originalFault", indent: inner)
        if let fault = signal.originalFault { write(fault, indent: inner) } else { null() }
        member("activeFaults", indent: inner); lines(signal.activeFaults, indent: inner) { $0.write($1, indent: inner + 2) }
        closeObject(indent: indent)
    }

    /// Writes the members a fatal signal and an original fault share (the first opens the object), at `inner`.
    mutating func writeSignalMembers(_ signal: some SignalMembers, indent inner: Int) {
        member("number", indent: inner, first: true); integer(signal.number)
        member("name", indent: inner); string(signal.name)
        member("code", indent: inner); integer(signal.code)
        member("codeName", indent: inner); string(signal.codeName)
        member("faultAddress", indent: inner); address(signal.faultAddress)
        member("senderPID", indent: inner); integer(signal.senderPID)
        member("senderUID", indent: inner); integer(signal.senderUID)
        member("syscall", indent: inner); integer(signal.syscall)
        member("description", indent: inner); string(signal.description)
    }

    /// Writes a fingerprint as an object whose members sit at `indent + 2`.
    mutating func write(_ fingerprint: FingerprintRecord, indent: Int) {
        let inner = indent + 2
        member("algorithm", indent: inner, first: true); string(fingerprint.algorithm)
        member("value", indent: inner); string(fingerprint.value)
        member("kind", indent: inner); string(fingerprint.kind)
        member("signal", indent: inner); string(fingerprint.signal)
        member("program", indent: inner); string(fingerprint.program)
        member("frames", indent: inner); strings(fingerprint.frames)
        closeObject(indent: indent)
    }

    /// Writes a hang as an object whose members sit at `indent + 2`.
    mutating func write(_ hang: HangRecord, indent: Int) {
        let inner = indent + 2
        member("source", indent: inner, first: true); string(hang.source)
        member("startTime", indent: inner); string(hang.startTime)
        member("durationMs", indent: inner); double(hang.durationMs.isFinite ? hang.durationMs : 0)
        member("unfinished", indent: inner); bool(hang.unfinished)
        member("watchdogTimeoutMs", indent: inner)
        if let timeout = hang.watchdogTimeoutMs, timeout.isFinite { double(timeout) } else { null() }
        closeObject(indent: indent)
    }

    /// Writes an abnormal exit's reason as an object whose members sit at `indent + 2`.
    mutating func write(_ exit: ExitRecord, indent: Int) {
        let inner = indent + 2
        member("reason", indent: inner, first: true); string(exit.reason)
        member("source", indent: inner); string(exit.source)
        member("evidence", indent: inner); string(exit.evidence)
        closeObject(indent: indent)
    }

    /// Writes the original fault as an object whose members sit at `indent + 2`.
    mutating func write(_ fault: OriginalFault, indent: Int) {
        let inner = indent + 2
        writeSignalMembers(fault, indent: inner)
        member("tid", indent: inner); integer(fault.tid)
        member("time", indent: inner); string(fault.time)
        member("registers", indent: inner); lines(fault.registers, indent: inner) { $0.write($1) }
        member("frames", indent: inner); lines(fault.frames, indent: inner) { $0.write($1) }
        closeObject(indent: indent)
    }

    /// Writes the process as an object whose members sit at `indent + 2`.
    mutating func write(_ process: ProcessRecord, indent: Int) {
        let inner = indent + 2
        member("pid", indent: inner, first: true); integer(process.pid)
        member("ppid", indent: inner); integer(process.ppid)
        member("executable", indent: inner); string(process.executable)
        member("executableResolved", indent: inner); string(process.executableResolved)
        member("commandLine", indent: inner); strings(process.commandLine)
        member("redacted", indent: inner); bool(process.redacted)
        member("commandLineTrimmed", indent: inner); integer(process.commandLineTrimmed)
        member("commandLineHex", indent: inner)
        if let hex = process.commandLineHex { strings(hex) } else { null() }
        member("cwd", indent: inner); string(process.cwd)
        member("uid", indent: inner); integer(process.uid)
        member("gid", indent: inner); integer(process.gid)
        member("startTime", indent: inner); string(process.startTime)
        member("comm", indent: inner); string(process.comm)
        member("cgroup", indent: inner); string(process.cgroup)
        member("systemdUnit", indent: inner); string(process.systemdUnit)
        member("systemdInvocationID", indent: inner); string(process.systemdInvocationID)
        member("app", indent: inner)
        if let app = process.app { write(app, indent: inner) } else { null() }
        member("environment", indent: inner); write(environment: process.environment, indent: inner)
        closeObject(indent: indent)
    }

    /// Writes the application's identity as an object whose members sit at `indent + 2`.
    mutating func write(_ app: AppRecord, indent: Int) {
        let inner = indent + 2
        member("name", indent: inner, first: true); string(app.name)
        member("version", indent: inner); string(app.version)
        member("release", indent: inner); string(app.release)
        closeObject(indent: indent)
    }

    /// Writes a breadcrumb as a one-line object.
    mutating func write(_ breadcrumb: BreadcrumbRecord) {
        field(#"{"time": "#); string(breadcrumb.time)
        field(#", "level": "#); string(breadcrumb.level)
        field(#", "message": "#); string(breadcrumb.message)
        endObject()
    }

    /// Writes the environment (or the annotations) as an object with sorted keys at `indent + 2`, or `{}` when it is empty.
    mutating func write(environment: [String: String], indent: Int) {
        if environment.isEmpty { literal("{}"); return }
        for (offset, variable) in environment.sorted(by: { $0.key < $1.key }).enumerated() {
            newline(after: offset == 0 ? .openObject : .comma, indent: indent + 2)
            string(variable.key)
            layoutBreak(": ")
            string(variable.value)
        }
        closeObject(indent: indent)
    }

    /// Writes the host as an object whose members sit at `indent + 2`.
    mutating func write(_ host: HostRecord, indent: Int) {
        let inner = indent + 2
        member("hostname", indent: inner, first: true); string(host.hostname)
        member("kernelRelease", indent: inner); string(host.kernelRelease)
        member("kernelVersion", indent: inner); string(host.kernelVersion)
        member("osName", indent: inner); string(host.osName)
        member("osVersion", indent: inner); string(host.osVersion)
        member("architecture", indent: inner); string(host.architecture)
        member("bootID", indent: inner); string(host.bootID)
        closeObject(indent: indent)
    }

    /// Writes one thread as an object whose members sit at `indent + 2`.
    mutating func write(_ thread: ThreadRecord, indent: Int) {
        let inner = indent + 2
        member("tid", indent: inner, first: true); integer(thread.tid)
        member("name", indent: inner); string(thread.name)
        member("crashed", indent: inner); bool(thread.crashed)
        member("state", indent: inner); string(thread.state?.rawValue)
        member("syscall", indent: inner)
        if let syscall = thread.syscall { write(syscall) } else { null() }
        member("registers", indent: inner); lines(thread.registers, indent: inner) { $0.write($1) }
        member("frames", indent: inner); lines(thread.frames, indent: inner) { $0.write($1) }
        member("unwindStopReason", indent: inner); string(thread.unwindStopReason)
        closeObject(indent: indent)
    }

    /// Writes a system call as a one-line object.
    mutating func write(_ syscall: SyscallRecord) {
        field(#"{"number": "#); integer(syscall.number)
        field(#", "name": "#); string(syscall.name)
        endObject()
    }

    /// Writes one register as a one-line object.
    mutating func write(_ register: RegisterValue) {
        field(#"{"name": "#); string(register.name)
        field(#", "value": "#); address(register.value)
        endObject()
    }

    /// Writes one frame as a one-line object.
    mutating func write(_ frame: FrameRecord) {
        field(#"{"index": "#); integer(frame.index)
        field(#", "address": "#); address(frame.address)
        field(#", "imageIndex": "#); integer(frame.imageIndex)
        field(#", "imageOffset": "#); address(frame.imageOffset)
        field(#", "symbol": "#); string(frame.symbol)
        field(#", "function": "#); string(frame.function)
        field(#", "symbolOffset": "#); address(frame.symbolOffset)
        field(#", "symbolSource": "#); string(frame.symbolSource)
        field(#", "file": "#); string(frame.file)
        field(#", "line": "#); integer(frame.line)
        field(#", "column": "#); integer(frame.column)
        field(#", "inlined": "#); bool(frame.inlined)
        field(#", "how": "#); string(frame.how.rawValue)
        endObject()
    }

    /// Writes one image as a one-line object.
    mutating func write(_ image: ImageRecord) {
        field(#"{"path": "#); string(image.path)
        field(#", "name": "#); string(image.name)
        field(#", "buildID": "#); string(image.buildID)
        field(#", "loadAddress": "#); address(image.loadAddress)
        field(#", "size": "#); integer(image.size)
        field(#", "fileOffset": "#); address(image.fileOffset)
        field(#", "inApp": "#); bool(image.inApp)
        field(#", "architecture": "#); string(image.architecture)
        field(#", "deleted": "#); bool(image.deleted)
        field(#", "isMainExecutable": "#); bool(image.isMainExecutable)
        field(#", "package": "#)
        if let package = image.package {
            field(#"{"type": "#); string(package.type)
            field(#", "name": "#); string(package.name)
            field(#", "version": "#); string(package.version)
            field(#", "architecture": "#); string(package.architecture)
            endObject()
        } else {
            field("null")
        }
        endObject()
    }

    /// Writes the diagnostics as an object whose members sit at `indent + 2`.
    mutating func write(_ diagnostics: Diagnostics, indent: Int) {
        let inner = indent + 2
        member("ptraceScope", indent: inner, first: true); integer(diagnostics.ptraceScope)
        member("seccompMode", indent: inner); integer(diagnostics.seccompMode)
        member("captureErrors", indent: inner); integer(diagnostics.captureErrors)
        member("deadlineExceeded", indent: inner); bool(diagnostics.deadlineExceeded)
        member("processing", indent: inner)
        if let processing = diagnostics.processing { string(processing.rawValue) } else { field("null") }
        closeObject(indent: indent)
    }

    /// Writes one soft error as a one-line object.
    mutating func write(_ error: SoftError) {
        field(#"{"stage": "#); string(error.stage)
        field(#", "tid": "#); integer(error.tid)
        field(#", "image": "#); string(error.image)
        field(#", "message": "#); string(error.message)
        endObject()
    }
}

/// The members a fatal signal and an original fault share, in declaration order: one writer for both.
protocol SignalMembers {
    var number: Int32 { get }
    var name: String { get }
    var code: Int32 { get }
    var codeName: String { get }
    var faultAddress: Address? { get }
    var senderPID: Int32? { get }
    var senderUID: UInt32? { get }
    var syscall: Int32? { get }
    var description: String { get }
}

extension SignalRecord: SignalMembers {}
extension OriginalFault: SignalMembers {}
