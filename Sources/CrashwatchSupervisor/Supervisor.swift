// Supervisor.swift — `crashwatch run`'s engine: its options, its state, and how it starts: it spawns the
// command as a seized tracee and hands it to the event loop (DESIGN.md "Process model").
//
// Everything the Supervisor does runs on the thread that created it: ptrace only accepts requests from the
// thread that attached (PITFALLS.md). Its work is split by concern, one file each:
//   EventLoop.swift       the waitpid loop and what it does at each classified stop
//   StopRouting.swift     the pure classification of a waitpid report into the action the loop takes
//   StopAll.swift         stopping every thread of a crashed process, tolerating threads born and gone
//   HeldProcess.swift     the stopped process's scoped hold and its release
//   CrashCapture.swift    detected crashes, deaths and hangs → capture → release → processing job
//   SignalForwarding.swift signals sent to crashwatch → the child, once; job-control mirroring
//   ServiceRelay.swift    the sd_notify relay and the watchdog's hang captures
//   WorkerPool.swift      processing workers: slots, queue, deadlines, promotion
//   CrashPolicy.swift     when a signal is a crash
//   Attach.swift          `crashwatch attach`: seizing a running process, and detaching from it whole
//   ControlServer.swift   the control socket: snapshots of traced processes asked for by root or their owner
import CrashwatchModel
import CrashwatchSystem

/// How `crashwatch run` supervises its command.
public struct SupervisorOptions: Sendable {
    /// The command and its arguments; the first element is looked up in PATH like a shell does.
    public var command: [String]
    /// The same as the bytes crashwatch was given, passed on untouched (an argument need not be UTF-8);
    /// nil: `command`'s UTF-8.
    public var rawCommand: [[UInt8]]?
    /// Trace forked and vforked children too, so their crashes are reported (`--no-follow-forks` clears it).
    public var followForks: Bool = true
    /// How many times the loop polls `waitpid` without blocking before it sleeps: a tracee stopping in
    /// quick succession is then answered without a cross-CPU wakeup.
    public var busyPolls: Int = 200
    /// How long a capture may keep a crashed process stopped before it writes what it has, and how long
    /// its processing may take from the crash on.
    public var captureTimeoutNanoseconds: Int64 = 10_000_000_000
    /// Processing workers that run at once; more crashes wait their turn (their minimal reports are written).
    public var maximumWorkers: Int = 2
    /// Crashes that may wait for a worker; beyond this, a crash keeps its minimal report.
    public var maximumWaitingJobs: Int = 64
    /// systemd's `NOTIFY_SOCKET` for this service, if any: the program gets a relay socket instead, and
    /// what it sends there is sent on from crashwatch (the main process systemd listens to).
    public var notifySocket: String?
    /// The service's watchdog timeout (`WATCHDOG_USEC` addressed to crashwatch): when the program's pings
    /// stop for half of it, its threads are captured as a hang.
    public var watchdogTimeoutNanoseconds: Int64?
    /// Keep supervising after the main child exits, for as long as processes it started live (a
    /// `Type=forking` daemon: the main child forks the daemon and exits). crashwatch then ends as the
    /// last of them did; `mainChildExited` hears of the main child's own end.
    public var outlivesMainChild = false
    public var mainChildExited: (@Sendable (WaitStatus) -> Void)?
    /// How long a signal from the service manager (pid 1) waits for the program's own copy before
    /// crashwatch forwards it: systemd signals the main process first, then the rest of the cgroup.
    public var serviceManagerGraceNanoseconds: Int64 = 100_000_000
    /// For `attach`: the process is already running, nothing is forwarded to it, and TERM, INT and HUP sent to
    /// crashwatch detach from it (`Supervisor.attach(to:)`).
    public var attach = false

    public init(command: [String], followForks: Bool = true) {
        self.command = command
        self.followForks = followForks
    }
}

/// Why the supervisor could not run the command at all.
public enum SupervisorError: Error, Equatable, Sendable {
    /// No candidate path for the command existed (exit status 127, like a shell).
    case commandNotFound(String)
    /// The command exists but could not be executed (exit status 126), with the errno.
    case commandNotExecutable(String, ExecFailure)
    /// A system call the supervisor depends on failed.
    case system(SystemError)
    /// ptrace is refused here (a seccomp filter, Yama, missing capabilities): a line naming the cause and
    /// the fix. Nothing was started.
    case supervisionBlocked(String)
}

/// Runs one command under ptrace and reports its crashes to an observer.
public final class Supervisor {
    let options: SupervisorOptions
    private(set) weak var observer: (any SupervisorObserver)?
    let inbox: SignalInbox

    var mainPID: Int32 = 0
    /// False until the main child's first exec: its start-up stops are ours, not the program's.
    var mainExecuted = false
    /// The last crash signal each thread handled; dropped when the thread exits.
    var handledFaults: [Int32: NestedFaults] = [:]
    /// Each thread's signal dispositions, read cheaply at every crash signal it takes.
    let dispositions = DispositionReader()
    /// Processes already reported (crashed or killed), so one death yields one record.
    var reportedProcesses: Set<Int32> = []
    /// The threads of processes released to die of their crash, by thread id, each with its process: at
    /// their exit stops nothing is left to learn (no exit status, no /proc look-up of the thread group).
    var dyingThreads: [Int32: Int32] = [:]
    /// Crashed processes whose other threads were left in their stops for the kernel's kill, by crashed
    /// thread: its next report (its exit, normally after the kill) lets them go, so none is left stopped
    /// should the fatal signal not end the process.
    var leftForKill: [Int32: StoppedProcess] = [:]
    /// Threads waiting in vfork() for their child to exec or exit, by the child's pid: such a thread cannot
    /// stop until then (the kernel's wait ends only for the child, or a kill), so a capture does not wait
    /// for it.
    var vforkParents: [Int32: Int32] = [:]
    /// Stops of other processes that arrived while a capture (or a forwarding check) waited for its own.
    var deferredEvents: [WaitEvent] = []
    /// Signals sent to the supervisor during a capture, forwarded after it.
    var deferredSignals: [ReceivedSignal] = []
    /// Signals sent to crashwatch on their way to the child, and the job-control stops it mirrors.
    let forwarding: SignalForwarder
    /// The sd_notify relay's socket, when systemd gave crashwatch a NOTIFY_SOCKET.
    var relay: NotifySocket?
    var lastTimerCheck: Int64 = 0
    var relayFailureReported = false
    /// The program's watchdog pings, for hang reports.
    var watchdog = WatchdogPings()
    /// Processing workers running and jobs waiting for a free slot.
    var workers: WorkerPool
    /// The main child's end, once seen: the supervisor returns it when no job is left.
    var finalStatus: WaitStatus?
    /// Processes followed (the main child, and every fork when `outlivesMainChild`; vfork children always),
    /// for `outlivesMainChild`, and how the last one ended.
    var followedProcesses: Set<Int32> = []
    var lastProcessEnd: WaitStatus?
    var mainChildEnded = false
    /// The control socket, while the supervisor runs (nil when it could not be opened).
    var control: ControlServer?
    /// Set by `attach`: the main process is not crashwatch's child, and TERM, INT and HUP detach from it.
    var attached = false
    /// A detach was asked for (attach only); done at the loop's next turn.
    var detachRequested = false
    /// Every traced task was let go (attach only): the supervisor ends once its jobs are done.
    var detached = false

    /// Blocks the supervisor's signals on the calling thread. Call before any other thread starts.
    public init(options: SupervisorOptions, observer: any SupervisorObserver) throws(SupervisorError) {
        self.options = options
        self.observer = observer
        forwarding = SignalForwarder(serviceManagerGraceNanoseconds: options.serviceManagerGraceNanoseconds)
        workers = WorkerPool(maximumWorkers: options.maximumWorkers, maximumWaitingJobs: options.maximumWaitingJobs)
        do {
            inbox = try SignalInbox(signals: [.chld] + (options.attach ? detachSignals : forwardedSignals))
        } catch {
            throw .system(error)
        }
        Self.rehearseDescription()
    }

    /// Spawns the command, supervises it until it ends, and returns how it ended.
    /// Followed processes still running then are left running (detached when the supervisor exits).
    public func run() throws(SupervisorError) -> WaitStatus {
        let preflight = PtracePreflight.check()
        if let blocked = preflight.blocker { throw .supervisionBlocked(blocked) }
        if let warning = preflight.warning { observer?.supervisorWarning("crashwatch: \(warning)") }
        do {
            try SelfProcess.becomeSubreaper()
        } catch {
            throw .system(error)
        }
        let command = options.command[0]
        watchdog.timeout = options.watchdogTimeoutNanoseconds
        let child: SpawnedChild
        do {
            child = try spawnTraced(
                argv: commandBytes,
                candidates: commandCandidates,
                environment: relayEnvironment(),
                childMask: inbox.previousMask,
                ptraceOptions: Ptrace.seizeOptions(followForks: options.followForks))
        } catch where error.isPermissionDenied {
            throw .supervisionBlocked(PtracePreflight.refusalReason())
        } catch {
            throw .system(error)
        }
        mainPID = child.pid
        followedProcesses.insert(child.pid)
        observer?.supervisorStarted()
        openControlSocket()

        let status: WaitStatus
        do {
            defer { control = nil }
            status = try loop()
        } catch {
            throw .system(error)
        }
        if !mainExecuted, let error = child.execFailure() {
            throw error.isNotFound ? .commandNotFound(command) : .commandNotExecutable(command, error)
        }
        return status
    }

    /// Replaces crashwatch with the command, unsupervised (after `run` threw `.supervisionBlocked`):
    /// the program then is the service's main process itself. Returns only if it could not be executed.
    public func execUnsupervised() -> SupervisorError {
        let failure = SelfProcess.execUnsupervised(argv: commandBytes, candidates: commandCandidates, mask: inbox.previousMask)
        return failure.isNotFound ? .commandNotFound(options.command[0]) : .commandNotExecutable(options.command[0], failure)
    }

    /// The command's argv as crashwatch was given it (bytes, untouched).
    private var commandBytes: [[UInt8]] { options.rawCommand ?? options.command.map { Array($0.utf8) } }

    /// Where the command may be, in the order `execvp` tries them.
    private var commandCandidates: [[UInt8]] { ExecutableSearch.candidates(for: commandBytes[0], path: environmentPath()) }
}
