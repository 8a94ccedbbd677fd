// WorkerReport.swift — what a processing worker's report is trusted for. The worker parses what the crashed
// program controlled (its memory, its files' unwind tables and DWARF) and could be subverted by it; its output
// file is its own. So the final report is built by the supervisor from its own capture — id, kind, times,
// signal, process, host, thread ids, names and registers, images, build-ids, the in-app rule — and takes from
// the worker only what the worker alone can find: each thread's frames (addresses, how each was found, names,
// source lines, inline levels), why unwinding stopped, which handled faults were still active (checked
// against the faults the supervisor saw), the app's annotations and breadcrumbs (read from the app's own memory,
// so no escalation: bounded again, the operator's annotations still winning), and its soft errors. Everything taken is decoded whole, bounded and
// re-checked; a report that is not this crash's is refused.
import CrashwatchModel
import CrashwatchSymbols
import CrashwatchSystem

/// Why a worker's report was refused.
public struct WorkerReportError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ text: String) { description = text }
}

public enum WorkerReport {
    /// The most frame records taken per thread, per physical frame the worker may unwind (inline levels).
    static let recordsPerFrame = 16
    /// The longest `how` or `symbolSource` taken.
    static let maximumWordBytes = 64

    /// The final report of `capture` with the frames the worker found in `bytes` (its report, at most a
    /// report's size limit plus slack, checked by the caller). `state` is how far the worker got;
    /// `extraSoftErrors` say what went wrong after; `deadlineExceeded` whether the worker was killed at the
    /// deadline.
    public static func accept(_ bytes: [UInt8], capture: RawCapture, table: ImageTable? = nil, state: ProcessingState,
                              crashwatchVersion: String, extraSoftErrors: [SoftError] = [], deadlineExceeded: Bool = false,
                              finishedNanoseconds: Int64? = nil) throws(WorkerReportError) -> CrashReport {
        // One pass: the decoder refuses malformed JSON anywhere in the bytes as well as a wrong member.
        let worker: CrashReport
        do { worker = try CrashReport.decode(bytes) } catch {
            throw WorkerReportError("the processing worker's report does not decode: \(error)")
        }
        guard worker.id == capture.reportID else { throw WorkerReportError("the processing worker's report is not this crash's") }

        // The handled faults the worker found active, as the supervisor recorded them.
        var chain: [RawFault] = []
        for active in worker.signal.activeFaults {
            guard let fault = capture.handledFaults.first(where: { matches($0, active) }) else {
                throw WorkerReportError("the processing worker's report names a handled fault the supervisor did not see")
            }
            if !chain.contains(where: { $0.tid == fault.tid && $0.timeNanoseconds == fault.timeNanoseconds }) { chain.append(fault) }
        }
        chain.sort { $0.timeNanoseconds < $1.timeNanoseconds }
        var builder = ReportBuilder<NoProcessing>(capture: capture, processor: nil, table: table)
        builder.acceptedChain = chain
        var report = builder.build(finishedNanoseconds: finishedNanoseconds)
        report.crashwatchVersion = crashwatchVersion
        let table = builder.table

        // Frames, thread by thread (by tid, in the supervisor's order), then the original fault's.
        var images = ImageReferences(capture: capture, table: table)
        let limit = max(capture.options.maxFrames, 1) * recordsPerFrame
        var theirs: [Int32: ThreadRecord] = [:]
        for thread in worker.threads where theirs[thread.tid] == nil { theirs[thread.tid] = thread }
        var softErrors = report.softErrors
        for index in report.threads.indices {
            let tid = report.threads[index].tid
            guard let thread = theirs[tid] else {
                // The supervisor's pc frame stays, placed again among the images.
                report.threads[index].frames = accepted(report.threads[index].frames, images: &images, limit: limit)
                if !report.threads[index].registers.isEmpty {
                    softErrors.append(SoftError(stage: "processing", tid: tid, message: "the processing worker's report has no frames for this thread"))
                }
                continue
            }
            report.threads[index].frames = accepted(thread.frames, images: &images, limit: limit)
            report.threads[index].unwindStopReason = thread.unwindStopReason.map(capped)
        }
        if let original = report.signal.originalFault, let found = worker.signal.originalFault,
           found.tid == original.tid, found.time == original.time {
            report.signal.originalFault?.frames = accepted(found.frames, images: &images, limit: limit)
        }
        let imageRecords = images.records { start in
            // A build-id the worker read from the very file mapped, for an image whose memory gave none.
            let image = table.image(containing: start)
            return worker.images.first { $0.loadAddress.value == (image?.baseAddress ?? start) && $0.path == image.map { capped($0.path) } }?
                .buildID.flatMap { Hex.bytes($0) != nil && $0.utf8.count <= 128 ? $0 : nil }
        }
        report.images = imageRecords

        // The app's annotations and breadcrumbs come from its own memory: taken (only when the capture copied a
        // table), bounded again, under the operator's (whose values win a shared key) and redacted again.
        let declared = capture.annotationTables != nil
        report.annotations = AnnotationRules.merged(
            app: declared ? (worker.annotations ?? [:]).sorted { $0.key < $1.key }.prefix(AnnotationFormat.maximumAnnotations)
                .map { ($0.key, $0.value) } : [],
            operator: capture.operatorAnnotations ?? [:], deny: capture.annotationDeny)
        report.breadcrumbs = declared ? worker.breadcrumbs.map(AnnotationRules.bounded) : nil

        // The worker's own soft errors: those after the capture's, which its report repeats first.
        var added = worker.softErrors
        if added.starts(with: capture.softErrors) { added.removeFirst(capture.softErrors.count) }
        softErrors += added.prefix(ReportBuilder<NoProcessing>.maximumSoftErrors).map { error in
            SoftError(stage: word(error.stage), tid: error.tid,
                      image: error.image.map(capped), message: capped(error.message))
        }
        softErrors = ReportBuilder<NoProcessing>.bounded(softErrors + extraSoftErrors)
        report.softErrors = softErrors
        report.diagnostics.captureErrors = softErrors.count
        report.diagnostics.deadlineExceeded = deadlineExceeded || softErrors.contains { $0.stage == "deadline" }
        report.diagnostics.processing = state
        return report
    }

    /// Whether the worker's active fault is the supervisor's handled fault: same thread, signal and time.
    private static func matches(_ fault: RawFault, _ record: OriginalFault) -> Bool {
        fault.tid == record.tid && fault.signal.signal.number == record.number
            && RFC3339.format(nanosecondsSinceEpoch: fault.timeNanoseconds) == record.time
    }

    /// The worker's frame records, renumbered and re-placed among the capture's images: its addresses, how
    /// each was found, names and lines (capped), at most `limit`.
    private static func accepted(_ frames: [FrameRecord], images: inout ImageReferences, limit: Int) -> [FrameRecord] {
        var records: [FrameRecord] = []
        records.reserveCapacity(min(frames.count, limit))
        for frame in frames.prefix(limit) {
            var record = FrameRecord(index: records.count, address: frame.address, how: FrameTrust(rawValue: word(frame.how.rawValue)))
            _ = images.place(&record)
            record.symbol = frame.symbol.map(capped)
            record.function = frame.function.map(capped)
            record.symbolOffset = frame.symbolOffset
            record.symbolSource = frame.symbolSource.map(word)
            record.file = frame.file.map(capped)
            record.line = frame.line.flatMap { (1...Int(Int32.max)).contains($0) ? $0 : nil }
            record.column = frame.column.flatMap { (1...Int(Int32.max)).contains($0) ? $0 : nil }
            record.inlined = frame.inlined
            records.append(record)
        }
        return records
    }

    private static func word(_ text: String) -> String {
        String(decoding: text.utf8.prefix(maximumWordBytes), as: UTF8.self)
    }
}
