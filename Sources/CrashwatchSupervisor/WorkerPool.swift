// WorkerPool.swift — the processing workers a supervisor runs after it released a crashed process: a bounded
// number at once and a bounded queue (a crash beyond them keeps its minimal report), each killed at its
// deadline, and moved out of the background when it starves (DESIGN.md "Capture and processing").
import CrashwatchModel
import CrashwatchSystem

/// Processing workers running, by pid, and jobs waiting for a free slot.
struct WorkerPool {
    let maximumWorkers: Int
    let maximumWaitingJobs: Int
    private var running: [Int32: ProcessingJob] = [:]
    private var waiting: [ProcessingJob] = []

    init(maximumWorkers: Int, maximumWaitingJobs: Int) {
        self.maximumWorkers = maximumWorkers
        self.maximumWaitingJobs = maximumWaitingJobs
    }

    /// The pids of the workers running.
    var runningPIDs: [Int32] { Array(running.keys) }

    /// Whether no job runs or waits.
    var isIdle: Bool { running.isEmpty && waiting.isEmpty }

    /// The running job whose worker is `pid`.
    func job(of pid: Int32) -> ProcessingJob? { running.isEmpty ? nil : running[pid] }

    /// Starts `job` now if a worker slot is free, else queues it (or, with the queue full, skips it).
    /// `report` hears of every job that ends here.
    mutating func enqueue(_ job: ProcessingJob, report: (ProcessingJob, WorkerOutcome) -> Void) {
        if running.count < maximumWorkers {
            start(job, report: report)
        } else if waiting.count < maximumWaitingJobs {
            waiting.append(job)
        } else {
            report(job, .skipped)
        }
    }

    private mutating func start(_ job: ProcessingJob, report: (ProcessingJob, WorkerOutcome) -> Void) {
        guard Clock.monotonicNanoseconds() < job.deadlineNanoseconds else { return report(job, .deadlinePassed) }
        do {
            let pid = try spawnWorker(arguments: job.arguments + ["--hold-ns", String(job.holdNanoseconds)],
                                      environment: job.environment, descriptors: job.descriptors.map(\.fd),
                                      standardError: job.standardError?.fd,
                                      limits: job.limits)
            let now = Clock.monotonicNanoseconds()
            job.promoteAtNanoseconds = now + (job.deadlineNanoseconds - now) / 2
            job.starvationCheckAtNanoseconds = now + Self.starvationCheckInterval
            running[pid] = job
        } catch {
            report(job, .notStarted("\(error)"))
        }
    }

    /// The worker `pid` ended: its job is reported, and waiting jobs take the free slots.
    mutating func finish(pid: Int32, outcome: WorkerOutcome, report: (ProcessingJob, WorkerOutcome) -> Void) {
        guard let job = running.removeValue(forKey: pid) else { return }
        report(job, outcome)
        while running.count < maximumWorkers, !waiting.isEmpty {
            start(waiting.removeFirst(), report: report)
        }
    }

    /// A worker one of whose threads has waited this long on a run queue, runnable, is starved: busy programs
    /// take its CPU.
    private static let starvedAfterNanoseconds: Int64 = 50_000_000
    /// How often a running worker is looked at for that (`/proc/PID/schedstat`).
    private static let starvationCheckInterval: Int64 = 25_000_000

    /// Kills workers past their deadline, and moves out of the background (SCHED_BATCH at nice 19, yielding
    /// every 0.25 ms) to SCHED_OTHER at nice 0 those that are starved, or still running halfway to it — on a
    /// machine kept busy, a worker yielding to every other task would otherwise finish only then (a threads64
    /// crash beside two busy loops: 6 s, against 50 ms); returns how long the loop may sleep before the next
    /// of these is due (milliseconds, -1 for no limit).
    func enforceDeadlines() -> Int32 {
        guard !running.isEmpty else { return -1 }
        let now = Clock.monotonicNanoseconds()
        var next = Int64.max
        for (pid, job) in running {
            if now >= job.deadlineNanoseconds {
                if !job.killedAtDeadline {
                    job.killedAtDeadline = true
                    killProcess(pid)
                }
                continue
            }
            // Only a worker started in the background has anything to be promoted from; none is under a seccomp
            // filter (`WorkerLimits.background`), which could kill crashwatch itself for the `sched_setscheduler`.
            if !job.promoted && job.limits.background {
                var starved = false
                if now >= job.starvationCheckAtNanoseconds {
                    starved = (workerRunQueueWaitNanoseconds(pid) ?? 0) >= Self.starvedAfterNanoseconds
                    job.starvationCheckAtNanoseconds = now + Self.starvationCheckInterval
                }
                if starved || now >= job.promoteAtNanoseconds {
                    job.promoted = true
                    _ = promoteWorker(pid)
                } else {
                    next = min(next, min(job.promoteAtNanoseconds, job.starvationCheckAtNanoseconds) - now)
                }
            }
            next = min(next, job.deadlineNanoseconds - now)
        }
        return next == Int64.max ? 100 : Int32(min(next / 1_000_000 + 1, 60_000))
    }
}

extension Supervisor {
    /// Queues the processing of a capture (`WorkerPool.enqueue`).
    func enqueue(_ job: ProcessingJob) {
        workers.enqueue(job) { job, outcome in observer?.supervisorFinished(job, outcome: outcome) }
    }

    /// The worker `pid` ended with `outcome`.
    func finishJob(of pid: Int32, outcome: WorkerOutcome) {
        workers.finish(pid: pid, outcome: outcome) { job, outcome in observer?.supervisorFinished(job, outcome: outcome) }
    }

    /// Kills workers past their deadline and promotes starved ones (`WorkerPool.enforceDeadlines`).
    func enforceJobDeadlines() -> Int32 { workers.enforceDeadlines() }
}
