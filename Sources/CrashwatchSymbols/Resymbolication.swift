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
    /// (`DIR/.build-id/xx/rest[.debug]`), then debuginfod (`DEBUGINFOD_URLS`) when `useDebuginfod`. What
    /// could not be matched is added to the report's soft errors.
    public static func symbolicate(_ report: CrashReport, debugDirectories: [String], useDebuginfod: Bool) -> CrashReport {
        var result = report
        let symbolizer: Symbolizer
        do {
            symbolizer = try Symbolizer(debugDirectories: debugDirectories, useDebuginfod: useDebuginfod)
        } catch {
            result.softErrors.append(SoftError(stage: "symbols", message: "\(error)"))
            return result
        }
        var opened: [OwnedDescriptor] = []
        for image in report.images {
            guard let buildIDText = image.buildID, !buildIDText.isEmpty, let buildID = Hex.bytes(buildIDText) else {
                result.softErrors.append(SoftError(stage: "symbols", image: image.path, message: "no build-id recorded: the image cannot be matched"))
                continue
            }
            // Every candidate is checked, so a file of another build is named even when a good one exists
            // (libdw, which also searches the debug directories, skips such files silently).
            var chosen: OwnedDescriptor?
            for candidate in candidates(for: image, buildIDText: buildIDText, debugDirectories: debugDirectories) {
                guard let file = try? UntrustedFile.open(candidate.path, followLinks: candidate.trusted),
                      let found = ELFFile.buildID(of: file) else { continue }
                if found == buildID {
                    if chosen == nil { chosen = file }
                    continue
                }
                result.softErrors.append(SoftError(
                    stage: "symbols", image: image.path,
                    message: "refused \(candidate.path): its build-id is \(Hex.string(found)), not \(buildIDText)"))
            }
            let failure: String?
            if let chosen {
                opened.append(chosen)
                failure = symbolizer.report(name: image.path, fd: chosen.fd, loadAddress: image.loadAddress.value)
            } else {
                failure = symbolizer.report(name: image.path, start: image.loadAddress.value,
                                            end: image.loadAddress.value &+ UInt64(max(image.size, 1)), buildID: buildID)
            }
            if let failure { result.softErrors.append(SoftError(stage: "symbols", image: image.path, message: failure)) }
        }
        symbolizer.endReporting()

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

    /// Files that may hold the image, in the order they are tried: its recorded path (a path the
    /// crashed process chose: no link is followed there), then the build-id trees of trusted directories.
    static func candidates(for image: ImageRecord, buildIDText: String, debugDirectories: [String]) -> [(path: String, trusted: Bool)] {
        let prefix = String(buildIDText.prefix(2)), rest = String(buildIDText.dropFirst(2))
        var paths = [(image.path, false)]
        for directory in debugDirectories + ["/usr/lib/debug"] {
            paths.append(("\(directory)/.build-id/\(prefix)/\(rest).debug", true))
            paths.append(("\(directory)/.build-id/\(prefix)/\(rest)", true))
        }
        return paths
    }

}
