// MinimalReportLimit.swift — the minimal report kept under the report size limit, like the full one. Frames
// cannot make a minimal report large (one per thread); threads can: a core may claim thousands of them, each
// in an image with a path of PATH_MAX bytes. So after `ReportSizeLimit.encode`, threads go too.
import CrashwatchModel

extension ReportSizeLimit {
    /// The minimal report of `capture` (`ReportBuilder.minimal`) encoded within `limit` bytes: when the report
    /// is over it, the threads that did not crash are left out from the last, half of them at a time, then all
    /// but the first ten soft errors, each step said in a soft error. Above `limit` only when one thread and
    /// ten soft errors are.
    public static func encodeMinimal(_ capture: RawCapture, crashwatchVersion: String, extraSoftErrors: [SoftError] = [],
                                     limit: Int) throws -> [UInt8] {
        func encoded(_ capture: RawCapture, _ extra: [SoftError]) throws -> [UInt8] {
            try encode(ReportBuilder.minimal(capture, crashwatchVersion: crashwatchVersion, extraSoftErrors: extra), limit: limit)
        }
        var bytes = try encoded(capture, extraSoftErrors)
        var reduced = capture
        var extra = extraSoftErrors
        while bytes.count > limit && reduced.threads.count > 1 {
            // The crashed threads first, then the rest in their order; the report keeps the capture's order.
            let order = reduced.threads.indices.filter { reduced.threads[$0].crashed } + reduced.threads.indices.filter { !reduced.threads[$0].crashed }
            let kept = Set(order.prefix(reduced.threads.count / 2))
            reduced.threads = reduced.threads.indices.filter(kept.contains).map { reduced.threads[$0] }
            extra = extraSoftErrors + [SoftError(stage: "report", message:
                "the minimal report was over \(limit) bytes: \(capture.threads.count - reduced.threads.count) of \(capture.threads.count) threads were left out")]
            bytes = try encoded(reduced, extra)
        }
        if bytes.count > limit && reduced.softErrors.count + extra.count > 10 {
            let all = reduced.softErrors + extra
            reduced.softErrors = Array(all.prefix(9)) + [SoftError(stage: "report", message:
                "the minimal report was over \(limit) bytes: \(all.count - 9) soft errors were left out")]
            bytes = try encoded(reduced, [])
        }
        return bytes
    }
}
