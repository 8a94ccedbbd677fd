// ReportJSONDecodingRecords.swift — the readers of a report's process, host, threads, registers, frames,
// images, diagnostics and soft errors (the rules are in ReportJSONDecoding.swift's banner).

extension JSONReader {
    enum ProcessFields: Int, JSONFields {
        case pid, ppid, executable, executableResolved, commandLine, redacted, commandLineTrimmed, commandLineHex, cwd, uid
        case gid, startTime, comm, cgroup, systemdUnit, systemdInvocationID, app, environment
        static let keys = JSONKeys(Self.self)
    }

    /// Reads the process.
    mutating func process() throws -> ProcessRecord {
        var pid: Int32?, ppid: Int32?, executable: String?, executableResolved: String?, commandLine: [String]?
        var redacted: Bool?, commandLineTrimmed: Int?, commandLineHex: [String]?, cwd: String?, uid: UInt32?, gid: UInt32?
        var startTime: String?, comm: String?, cgroup: String?, systemdUnit: String?, systemdInvocationID: String?
        var app: AppRecord?, environment: [String: String]?
        try members { (reader, field: ProcessFields) in
            switch field {
            case .pid: pid = try reader.integer()
            case .ppid: ppid = try reader.integer()
            case .executable: executable = try reader.string()
            case .executableResolved: executableResolved = try reader.optionalString()
            case .commandLine: commandLine = try reader.elements { try $0.string() }
            case .redacted: redacted = try reader.bool()
            case .commandLineTrimmed: commandLineTrimmed = try reader.optionalInteger()
            case .commandLineHex: commandLineHex = try reader.null() ? nil : reader.elements { try $0.string() }
            case .cwd: cwd = try reader.optionalString()
            case .uid: uid = try reader.integer()
            case .gid: gid = try reader.integer()
            case .startTime: startTime = try reader.optionalString()
            case .comm: comm = try reader.string()
            case .cgroup: cgroup = try reader.optionalString()
            case .systemdUnit: systemdUnit = try reader.optionalString()
            case .systemdInvocationID: systemdInvocationID = try reader.optionalString()
            case .app: app = try reader.null() ? nil : reader.app()
            case .environment: environment = try reader.stringDictionary()
            }
        }
        var process = ProcessRecord(
            pid: try requiredMember(pid, "pid"), ppid: try requiredMember(ppid, "ppid"), executable: try requiredMember(executable, "executable"),
            commandLine: try requiredMember(commandLine, "commandLine"), redacted: try requiredMember(redacted, "redacted"), cwd: cwd,
            uid: try requiredMember(uid, "uid"), gid: try requiredMember(gid, "gid"), startTime: startTime, comm: try requiredMember(comm, "comm"),
            cgroup: cgroup, systemdUnit: systemdUnit, systemdInvocationID: systemdInvocationID, app: app,
            environment: try requiredMember(environment, "environment"))
        process.executableResolved = executableResolved
        process.commandLineTrimmed = commandLineTrimmed
        process.commandLineHex = commandLineHex
        return process
    }

    enum AppFields: Int, JSONFields {
        case name, version, release
        static let keys = JSONKeys(Self.self)
    }

    /// Reads the application's identity.
    mutating func app() throws -> AppRecord {
        var app = AppRecord()
        try members { (reader, field: AppFields) in
            switch field {
            case .name: app.name = try reader.optionalString()
            case .version: app.version = try reader.optionalString()
            case .release: app.release = try reader.optionalString()
            }
        }
        return app
    }

    enum HostFields: Int, JSONFields {
        case hostname, kernelRelease, kernelVersion, osName, osVersion, architecture, bootID
        static let keys = JSONKeys(Self.self)
    }

    /// Reads the host.
    mutating func host() throws -> HostRecord {
        var hostname: String?, kernelRelease: String?, kernelVersion: String?, osName: String?, osVersion: String?
        var architecture: String?, bootID: String?
        try members { (reader, field: HostFields) in
            switch field {
            case .hostname: hostname = try reader.string()
            case .kernelRelease: kernelRelease = try reader.string()
            case .kernelVersion: kernelVersion = try reader.string()
            case .osName: osName = try reader.string()
            case .osVersion: osVersion = try reader.optionalString()
            case .architecture: architecture = try reader.string()
            case .bootID: bootID = try reader.optionalString()
            }
        }
        return HostRecord(hostname: try requiredMember(hostname, "hostname"), kernelRelease: try requiredMember(kernelRelease, "kernelRelease"),
                          kernelVersion: try requiredMember(kernelVersion, "kernelVersion"), osName: try requiredMember(osName, "osName"),
                          osVersion: osVersion, architecture: try requiredMember(architecture, "architecture"), bootID: bootID)
    }

    enum ThreadFields: Int, JSONFields {
        case tid, name, crashed, state, syscall, registers, frames, unwindStopReason
        static let keys = JSONKeys(Self.self)
    }

    /// Reads one thread.
    mutating func thread() throws -> ThreadRecord {
        var tid: Int32?, name: String?, crashed: Bool?, registers: [RegisterValue]?, frames: [FrameRecord]?
        var unwindStopReason: String?, state: ThreadState?, syscall: SyscallRecord?
        try members { (reader, field: ThreadFields) in
            switch field {
            case .tid: tid = try reader.integer()
            case .name: name = try reader.optionalString()
            case .crashed: crashed = try reader.bool()
            case .state: state = try reader.optionalString().map(ThreadState.init(rawValue:))
            case .syscall: syscall = try reader.null() ? nil : reader.syscall()
            case .registers: registers = try reader.elements { try $0.register() }
            case .frames: frames = try reader.elements { try $0.frame() }
            case .unwindStopReason: unwindStopReason = try reader.optionalString()
            }
        }
        var thread = ThreadRecord(tid: try requiredMember(tid, "tid"), name: name, crashed: try requiredMember(crashed, "crashed"),
                            registers: try requiredMember(registers, "registers"), frames: try requiredMember(frames, "frames"),
                            unwindStopReason: unwindStopReason)
        thread.state = state
        thread.syscall = syscall
        return thread
    }

    enum SyscallFields: Int, JSONFields {
        case number, name
        static let keys = JSONKeys(Self.self)
    }

    /// Reads the system call a thread was in.
    mutating func syscall() throws -> SyscallRecord {
        var number: Int?, name: String?
        try members { (reader, field: SyscallFields) in
            switch field {
            case .number: number = try reader.integer()
            case .name: name = try reader.optionalString()
            }
        }
        return SyscallRecord(number: try requiredMember(number, "number"), name: name)
    }

    enum RegisterFields: Int, JSONFields {
        case name, value
        static let keys = JSONKeys(Self.self)
    }

    /// Reads one register.
    mutating func register() throws -> RegisterValue {
        var name: String?, value: Address?
        try members { (reader, field: RegisterFields) in
            switch field {
            case .name: name = try reader.string()
            case .value: value = try reader.address()
            }
        }
        return RegisterValue(try requiredMember(name, "name"), try requiredMember(value, "value"))
    }

    enum FrameFields: Int, JSONFields {
        case index, address, imageIndex, imageOffset, symbol, function, symbolOffset, symbolSource, file, line, column
        case inlined, how
        static let keys = JSONKeys(Self.self)
    }

    /// Reads one frame.
    mutating func frame() throws -> FrameRecord {
        var index: Int?, address: Address?, imageIndex: Int?, imageOffset: Address?, symbol: String?, function: String?
        var symbolOffset: Address?, symbolSource: String?, file: String?, line: Int?, column: Int?, inlined: Bool?, how: String?
        try members { (reader, field: FrameFields) in
            switch field {
            case .index: index = try reader.integer()
            case .address: address = try reader.address()
            case .imageIndex: imageIndex = try reader.optionalInteger()
            case .imageOffset: imageOffset = try reader.optionalAddress()
            case .symbol: symbol = try reader.optionalString()
            case .function: function = try reader.optionalString()
            case .symbolOffset: symbolOffset = try reader.optionalAddress()
            case .symbolSource: symbolSource = try reader.optionalString()
            case .file: file = try reader.optionalString()
            case .line: line = try reader.optionalInteger()
            case .column: column = try reader.optionalInteger()
            case .inlined: inlined = try reader.bool()
            case .how: how = try reader.string()
            }
        }
        return FrameRecord(index: try requiredMember(index, "index"), address: try requiredMember(address, "address"), imageIndex: imageIndex,
                           imageOffset: imageOffset, symbol: symbol, function: function, symbolOffset: symbolOffset,
                           symbolSource: symbolSource, file: file, line: line, column: column,
                           inlined: try requiredMember(inlined, "inlined"), how: FrameTrust(rawValue: try requiredMember(how, "how")))
    }

    enum ImageFields: Int, JSONFields {
        case path, name, buildID, loadAddress, size, fileOffset, inApp, architecture, deleted, isMainExecutable, package
        static let keys = JSONKeys(Self.self)
    }

    /// Reads one image.
    mutating func image() throws -> ImageRecord {
        var path: String?, name: String?, buildID: String?, loadAddress: Address?, size: Int?, fileOffset: Address?
        var inApp: Bool?, architecture: String?, deleted: Bool?, isMainExecutable: Bool?, package: PackageRecord?
        try members { (reader, field: ImageFields) in
            switch field {
            case .path: path = try reader.string()
            case .name: name = try reader.string()
            case .buildID: buildID = try reader.optionalString()
            case .loadAddress: loadAddress = try reader.address()
            case .size: size = try reader.integer()
            case .fileOffset: fileOffset = try reader.address()
            case .inApp: inApp = try reader.bool()
            case .architecture: architecture = try reader.optionalString()
            case .deleted: deleted = try reader.bool()
            case .isMainExecutable: isMainExecutable = try reader.bool()
            case .package: package = try reader.null() ? nil : reader.package()
            }
        }
        return ImageRecord(path: try requiredMember(path, "path"), name: try requiredMember(name, "name"), buildID: buildID,
                           loadAddress: try requiredMember(loadAddress, "loadAddress"), size: try requiredMember(size, "size"),
                           fileOffset: try requiredMember(fileOffset, "fileOffset"), inApp: try requiredMember(inApp, "inApp"),
                           architecture: architecture, deleted: try requiredMember(deleted, "deleted"),
                           isMainExecutable: try requiredMember(isMainExecutable, "isMainExecutable"), package: package)
    }

    enum PackageFields: Int, JSONFields {
        case type, name, version, architecture
        static let keys = JSONKeys(Self.self)
    }

    /// Reads an image's package.
    mutating func package() throws -> PackageRecord {
        var package = PackageRecord()
        try members { (reader, field: PackageFields) in
            switch field {
            case .type: package.type = try reader.optionalString()
            case .name: package.name = try reader.optionalString()
            case .version: package.version = try reader.optionalString()
            case .architecture: package.architecture = try reader.optionalString()
            }
        }
        return package
    }

    enum DiagnosticsFields: Int, JSONFields {
        case ptraceScope, seccompMode, captureErrors, deadlineExceeded, processing, annotationBytes
        static let keys = JSONKeys(Self.self)
    }

    /// Reads the diagnostics; `processing` must be one of `ProcessingState`'s values.
    mutating func diagnostics() throws -> Diagnostics {
        var ptraceScope: Int?, seccompMode: Int?, captureErrors: Int?, deadlineExceeded: Bool?, processing: ProcessingState?
        var annotationBytes: Int?
        try members { (reader, field: DiagnosticsFields) in
            switch field {
            case .ptraceScope: ptraceScope = try reader.optionalInteger()
            case .seccompMode: seccompMode = try reader.optionalInteger()
            case .captureErrors: captureErrors = try reader.integer()
            case .deadlineExceeded: deadlineExceeded = try reader.bool()
            case .annotationBytes: annotationBytes = try reader.optionalInteger()
            case .processing:
                let start = reader.at
                guard let text = try reader.optionalString() else { break }
                guard let state = ProcessingState(rawValue: text) else {
                    throw JSONReadError(kind: .invalid("Cannot initialize ProcessingState from invalid String value \(text)"), offset: start)
                }
                processing = state
            }
        }
        var diagnostics = Diagnostics(ptraceScope: ptraceScope, seccompMode: seccompMode,
                                      captureErrors: try requiredMember(captureErrors, "captureErrors"),
                                      deadlineExceeded: try requiredMember(deadlineExceeded, "deadlineExceeded"))
        diagnostics.processing = processing
        diagnostics.annotationBytes = annotationBytes
        return diagnostics
    }

    enum SoftErrorFields: Int, JSONFields {
        case stage, tid, image, message
        static let keys = JSONKeys(Self.self)
    }

    /// Reads one soft error.
    mutating func softError() throws -> SoftError {
        var stage: String?, tid: Int32?, image: String?, message: String?
        try members { (reader, field: SoftErrorFields) in
            switch field {
            case .stage: stage = try reader.string()
            case .tid: tid = try reader.optionalInteger()
            case .image: image = try reader.optionalString()
            case .message: message = try reader.string()
            }
        }
        return SoftError(stage: try requiredMember(stage, "stage"), tid: tid, image: image, message: try requiredMember(message, "message"))
    }
}
