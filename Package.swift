// swift-tools-version:6.0
// crashwatch: an out-of-process crash reporter for Linux.
// Layers (dependencies point down): CLI → Reporter → Capture → Supervisor, Symbols → Model/System → CCrashwatch
// (C shim); Spool, Render and Ship beside them. docs/how-it-works.md "Layers" says what each holds and where a crash goes.
import PackageDescription

let package = Package(
    name: "crashwatch",
    products: [
        .executable(name: "crashwatch", targets: ["crashwatch"]),
    ],
    targets: [
        // C shim, one file and header per concern: ptrace (variadic in glibc), spawn, the worker, signals, the
        // captured address space and its unwinders (libunwind, libdw), libdw symbols, demangling, HTTP, gzip.
        .target(
            name: "CCrashwatch",
            cSettings: [.unsafeFlags(["-Wall", "-Wextra", "-Werror=implicit-function-declaration"])],
            linkerSettings: [
                // libunwind-ptrace's remote unwinding (lzma: its symbols are otherwise undefined), libdw/libelf,
                // libiberty (libiberty-dev: static, PIC; only its Rust demangler is linked in).
                .linkedLibrary("unwind-ptrace"), .linkedLibrary("unwind-generic"), .linkedLibrary("unwind"),
                .linkedLibrary("lzma"), .linkedLibrary("dw"), .linkedLibrary("elf"), .linkedLibrary("stdc++"),
                .linkedLibrary("iberty"),
                // zlib: gzip for shipped requests (already loaded by libdw). libcurl is dlopen'ed by http.c, not linked.
                .linkedLibrary("z"), .linkedLibrary("dl"),
            ]
        ),
        // The only Swift layer that calls Glibc and the shim: typed errors, EINTR, fds, /proc.
        .target(name: "CrashwatchSystem", dependencies: ["CCrashwatch", "CrashwatchModel"]),
        // Pure values and parsers: signals, the report types, the one JSON writer, the one decimal parser, RFC 3339 times.
        .target(name: "CrashwatchModel"),
        // The supervisor: event loop, stop routing, crash policy, stop-all, forwarding, service relay, worker pool.
        .target(name: "CrashwatchSupervisor", dependencies: ["CrashwatchSystem", "CrashwatchModel"]),
        // Symbols: ELF notes and build-ids, symbolized frames, demangled names, offline re-symbolication.
        .target(name: "CrashwatchSymbols", dependencies: ["CrashwatchSystem", "CrashwatchModel"]),
        // Capture sources → the raw capture (live process, core file), the worker's processing, the one report builder.
        .target(name: "CrashwatchCapture", dependencies: ["CrashwatchSupervisor", "CrashwatchSymbols", "CrashwatchSystem", "CrashwatchModel"]),
        // Reporter: the driver of a crash from the supervisor's stop to the spool (minimal report, the worker's launch
        // and its report taken back, final report, journal entry), for live crashes and cores alike.
        .target(name: "CrashwatchReporter", dependencies: ["CrashwatchCapture", "CrashwatchSupervisor", "CrashwatchSpool",
                                                          "CrashwatchRender", "CrashwatchSystem", "CrashwatchModel"]),
        // Spool: atomic report files, listing, retention.
        .target(name: "CrashwatchSpool", dependencies: ["CrashwatchSystem", "CrashwatchModel"]),
        // Rendering reports for people: list lines, show pages, text and HTML export.
        .target(name: "CrashwatchRender", dependencies: ["CrashwatchModel"]),
        // Shipping: OTLP/HTTP export of spool reports (claim, send, settle), retries and backoff.
        .target(name: "CrashwatchShip", dependencies: ["CrashwatchRender", "CrashwatchSpool", "CrashwatchSystem", "CrashwatchModel"]),
        // Commands: parse, validate, run; exit codes.
        .target(name: "CrashwatchCLI", dependencies: ["CrashwatchReporter", "CrashwatchCapture", "CrashwatchSupervisor", "CrashwatchSymbols", "CrashwatchSpool",
                                                     "CrashwatchRender", "CrashwatchShip", "CrashwatchSystem", "CrashwatchModel"]),
        // lld with packed relative relocations (DT_RELR, glibc 2.36): the 37,893 relocations Swift's metadata
        // needs take 4 KB instead of 890 KB, all of which ld.so read at every start and kept resident.
        .executableTarget(name: "crashwatch", dependencies: ["CrashwatchCLI"],
                          linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"])]),

        // The tests' shared helpers: temporary directories, the process runner, fixture paths and headers, sample
        // reports, socket helpers. A regular target under Tests/, depended on by the test targets.
        .target(name: "CrashwatchTestSupport", dependencies: ["CrashwatchModel"], path: "Tests/CrashwatchTestSupport"),
        .testTarget(name: "CrashwatchSystemTests", dependencies: ["CrashwatchSystem", "CrashwatchModel", "CrashwatchTestSupport"]),
        .testTarget(name: "CrashwatchModelTests", dependencies: ["CrashwatchModel", "CrashwatchTestSupport"]),
        .testTarget(name: "CrashwatchSupervisorTests", dependencies: ["CrashwatchSupervisor", "CrashwatchSystem"]),
        .testTarget(name: "CrashwatchCaptureTests", dependencies: ["CrashwatchCapture", "CrashwatchSupervisor", "CrashwatchSymbols", "CrashwatchSystem", "CrashwatchTestSupport"]),
        .testTarget(name: "CrashwatchSymbolsTests", dependencies: ["CrashwatchSymbols", "CrashwatchSystem", "CrashwatchTestSupport"]),
        .testTarget(name: "CrashwatchSpoolTests", dependencies: ["CrashwatchSpool", "CrashwatchTestSupport"]),
        .testTarget(name: "CrashwatchRenderTests", dependencies: ["CrashwatchRender", "CrashwatchTestSupport"]),
        .testTarget(name: "CrashwatchShipTests", dependencies: ["CrashwatchShip", "CrashwatchSpool", "CrashwatchRender", "CrashwatchSystem", "CrashwatchModel", "CrashwatchTestSupport"]),
        .testTarget(name: "CrashwatchCLITests", dependencies: ["CrashwatchCLI", "CrashwatchTestSupport"]),
        .testTarget(name: "CrashwatchReporterTests", dependencies: ["CrashwatchReporter", "CrashwatchModel", "CrashwatchSystem", "CrashwatchTestSupport"]),
        .testTarget(name: "IntegrationTests", dependencies: ["CrashwatchTestSupport", "CrashwatchSystem"], exclude: ["transparency.py"]),
    ],
    swiftLanguageModes: [.v6]
)
