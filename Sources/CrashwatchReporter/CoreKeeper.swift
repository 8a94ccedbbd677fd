// CoreKeeper.swift — `core-handler --keep-core DIR`: the core dump itself, gzip-compressed as it streams past
// the report's reader, kept under its report's name; the directory keeps the newest of crashwatch's own.
import CrashwatchCapture
import CrashwatchSpool
import CrashwatchSystem
import FoundationEssentials

/// The core dump itself, kept gzip-compressed as it streams past (`core-handler --keep-core DIR`): compressed
/// into a temporary file while the report's reader consumes the core, then given the report's name with
/// `.core.gz`, or dropped when it passes its cap. The directory keeps the newest `count` of crashwatch's own
/// cores (`CompanionRetention`: the spool's trust model).
final class CoreKeeper {
    private let directory: DirectoryHandle
    private let path: String
    private let temporaryName: String
    private var file: WritableFile?
    private let writer: GzipWriter
    private let limit: UInt64
    private let count: Int
    /// Why the core is not kept, once something went wrong.
    private(set) var failure: String?

    init(directory path: String, limit: UInt64, count: Int, pid: Int32) throws {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        directory = try DirectoryHandle(openingPath: trimmed)
        // As for the spool: a directory another user owns, or others may write without the sticky bit, lets
        // them swap what is kept.
        try CompanionRetention.checkTrusted(directory, path: trimmed)
        self.path = trimmed
        temporaryName = ".tmp-core-\(pid)-\(UUID().uuidString.lowercased())"
        // A core holds the process's memory (keys, tokens, data): readable by root alone.
        let created = try directory.createFile(named: temporaryName, permissions: 0o600)
        do { try created.setPermissions(0o600) } catch {
            try? directory.removeFile(named: temporaryName)
            throw error
        }
        writer = try created.compressing()
        file = consume created
        self.limit = limit
        self.count = count
    }

    /// Copies what `input` consumes into the kept core.
    func attach(to input: InputStream) {
        input.tee = { [self] bytes in
            guard failure == nil else { return }
            do { try writer.write(bytes) } catch {
                failure = "writing the kept core: \(error)"
                return
            }
            if writer.written > limit { failure = "the compressed core passed --keep-core-max (\(limit) bytes)" }
        }
    }

    /// Removes what was written of the core: it is not one, or no report will name it.
    func discard() {
        _ = file.take()
        try? directory.removeFile(named: temporaryName)
    }

    /// Gives up keeping the core (the first reason stays).
    func abandon(_ reason: String) {
        if failure == nil { failure = reason }
    }

    /// Ends the core, names it `name.core.gz` and prunes the directory; the kept path, or why there is none.
    func finish(name: ReportFileName) -> Result<String, CoreFileError> {
        let finalName = String(name.text.dropLast(".json".count)) + Self.suffix
        if failure == nil {
            do {
                try writer.finish()
                // zlib holds back up to a few hundred KiB: the cap is checked once more with the whole stream.
                if writer.written > limit { throw CoreFileError("the compressed core passed --keep-core-max (\(limit) bytes)") }
                if let file = file.take() {
                    try file.synchronize()
                    try file.close()
                }
                try directory.rename(temporaryName, to: finalName)
                try directory.synchronize()
            } catch {
                failure = error is CoreFileError ? "\(error)" : "keeping the core: \(error)"
            }
        }
        if let failure {
            discard()
            return .failure(CoreFileError(failure + "; the core was not kept"))
        }
        // The newest `count` of crashwatch's own kept cores stay, this one whatever its name says; files of
        // other users (a sticky shared directory) are neither counted nor removed.
        _ = CompanionRetention.prune(directory, suffix: Self.suffix, keep: count, protecting: name)
        return .success("\(path)/\(finalName)")
    }

    /// The suffix of a kept core's name, after its report's name without `.json`.
    static let suffix = ".core.gz"
}
