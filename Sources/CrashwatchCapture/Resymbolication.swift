// Resymbolication.swift — `crashwatch symbolicate`: fills in function names, source lines and inline
// frames of a report after the fact (a stripped binary whose debug file arrives later). Images are
// matched by build-id only: a file is used when its own build-id note equals the report's, never
// because of its path, so a debug file of another build is refused.
import CrashwatchModel
import CrashwatchSystem

/// Re-symbolicates reports offline.
public enum Resymbolication {
    /// Returns `report` with every frame symbolicated from ELF and debug files whose build-ids match the
    /// report's images, searched in the image's recorded path, `debugDirectories` and `/usr/lib/debug`
    /// (`DIR/.build-id/xx/rest[.debug]`), then debuginfod when `DEBUGINFOD_URLS` is set. What could not be
    /// matched is added to the report's soft errors.
    public static func symbolicate(_ report: CrashReport, debugDirectories: [String]) -> CrashReport {
        var result = report
        var offline: [OfflineImage] = []
        for image in report.images {
            guard let buildIDText = image.buildID, let buildID = bytes(fromHex: buildIDText) else {
                result.softErrors.append(SoftError(stage: "symbols", image: image.path, message: "no build-id recorded: the image cannot be matched"))
                continue
            }
            // Every candidate is checked, so a file of another build is named even when a good one exists
            // (libdw, which also searches the debug directories, skips such files silently).
            var chosen: String?
            for candidate in candidates(for: image, buildIDText: buildIDText, debugDirectories: debugDirectories) {
                guard let found = buildIDOfFile(candidate) else { continue }
                if found == buildID {
                    if chosen == nil { chosen = candidate }
                    continue
                }
                result.softErrors.append(SoftError(
                    stage: "symbols", image: image.path,
                    message: "refused \(candidate): its build-id is \(ELFNotes.hexString(found)), not \(buildIDText)"))
            }
            let source: OfflineImage.Source = chosen.map { .file($0) } ?? .buildID(buildID)
            offline.append(OfflineImage(name: image.path, source: source, loadAddress: image.loadAddress.value,
                                        size: UInt64(max(image.size, 1))))
        }
        let symbolizer: Symbolizer
        do {
            symbolizer = try Symbolizer(offline: offline, debugDirectories: debugDirectories)
        } catch {
            result.softErrors.append(SoftError(stage: "symbols", message: "\(error)"))
            return result
        }
        for failure in symbolizer.failures {
            result.softErrors.append(SoftError(stage: "symbols", image: failure.path, message: failure.reason))
        }

        result.threads = report.threads.map { thread in
            var updated = thread
            var frames: [FrameRecord] = []
            // Records derived from inline info are rebuilt from the physical frame they came from.
            let physical = thread.frames.filter { $0.how != .inline }
            for (position, frame) in physical.enumerated() {
                var base = FrameRecord(index: frames.count, address: frame.address, imageIndex: frame.imageIndex,
                                       imageOffset: frame.imageOffset, how: frame.how)
                // Exact pcs, looked up as they are: an interrupted frame (`context`), and the signal
                // trampoline just inside one (the handler returned to its first instruction).
                let exact = frame.how == .context || (position > 0 && position + 1 < physical.count && physical[position + 1].how == .context)
                let pc = frame.address.value
                // Keep what the capture knew when nothing better is found.
                guard frame.imageIndex != nil, let found = symbolizer.lookup(exact ? pc : pc &- 1),
                      found.symbol != nil || !found.levels.isEmpty
                else {
                    base.symbol = frame.symbol
                    base.function = frame.function
                    base.symbolOffset = frame.symbolOffset
                    base.symbolSource = frame.symbolSource
                    frames.append(base)
                    continue
                }
                frames += SymbolizedFrame.records(for: base, found: found, exact: exact)
            }
            updated.frames = frames
            return updated
        }
        result.diagnostics.captureErrors = result.softErrors.count
        return result
    }

    /// Files that may hold the image, in the order they are tried.
    static func candidates(for image: ImageRecord, buildIDText: String, debugDirectories: [String]) -> [String] {
        let prefix = String(buildIDText.prefix(2)), rest = String(buildIDText.dropFirst(2))
        var paths = [image.path]
        for directory in debugDirectories + ["/usr/lib/debug"] {
            paths.append("\(directory)/.build-id/\(prefix)/\(rest).debug")
            paths.append("\(directory)/.build-id/\(prefix)/\(rest)")
        }
        return paths
    }

    /// The build-id note of an ELF file, or nil when it is missing, unreadable or not ELF.
    static func buildIDOfFile(_ path: String) -> [UInt8]? {
        guard let bytes = try? ProcFS.readBytes(path, limit: 1 << 20), let header = try? ELFHeaderInfo.parse(bytes) else { return nil }
        return ELFNotes.buildID(in: ELFNotes.notes(inFile: bytes, header: header))
    }

    /// Bytes from lower- or upper-case hex digits; nil for anything else.
    static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, !digits.isEmpty else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
        }
        return result
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 48...57: digit - 48
        case 97...102: digit - 87
        case 65...70: digit - 55
        default: nil
        }
    }
}
