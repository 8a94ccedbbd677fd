// swift-tools-version:6.0
// crashwatch: an out-of-process crash reporter for Linux.
// Layers (dependencies point down): CLI → Capture → Model/System → CCrashwatch (C shim).
import PackageDescription

let package = Package(
    name: "crashwatch",
    products: [
        .executable(name: "crashwatch", targets: ["crashwatch"]),
    ],
    targets: [
        // C shim: ptrace (variadic in glibc), fork+exec, wait macros, siginfo flattening.
        .target(
            name: "CCrashwatch",
            cSettings: [.unsafeFlags(["-Wall", "-Wextra", "-Werror=implicit-function-declaration"])],
            linkerSettings: [
                // libunwind-ptrace's remote unwinding (lzma: its symbols are otherwise undefined), libdw/libelf.
                .linkedLibrary("unwind-ptrace"), .linkedLibrary("unwind-generic"), .linkedLibrary("unwind"),
                .linkedLibrary("lzma"), .linkedLibrary("dw"), .linkedLibrary("elf"), .linkedLibrary("stdc++"),
            ]
        ),
        // The only Swift layer that calls Glibc and the shim: typed errors, EINTR, fds, /proc.
        .target(name: "CrashwatchSystem", dependencies: ["CCrashwatch", "CrashwatchModel"]),
        // Signal vocabulary and (later) the report types. Pure values.
        .target(name: "CrashwatchModel"),
        // Supervisor event loop and crash detection.
        .target(name: "CrashwatchCapture", dependencies: ["CrashwatchSystem", "CrashwatchModel"]),
        // Spool: atomic report files, listing, retention.
        .target(name: "CrashwatchSpool", dependencies: ["CrashwatchSystem"]),
        // Rendering reports for people: list lines, show pages, text export.
        .target(name: "CrashwatchExport", dependencies: ["CrashwatchModel"]),
        // Commands: parse, validate, run; exit codes.
        .target(name: "CrashwatchCLI", dependencies: ["CrashwatchCapture", "CrashwatchSpool", "CrashwatchExport", "CrashwatchSystem", "CrashwatchModel"]),
        .executableTarget(name: "crashwatch", dependencies: ["CrashwatchCLI"]),

        .testTarget(name: "CrashwatchSystemTests", dependencies: ["CrashwatchSystem"]),
        .testTarget(name: "CrashwatchModelTests", dependencies: ["CrashwatchModel"]),
        .testTarget(name: "CrashwatchCaptureTests", dependencies: ["CrashwatchCapture", "CrashwatchSystem"]),
        .testTarget(name: "CrashwatchSpoolTests", dependencies: ["CrashwatchSpool"]),
        .testTarget(name: "CrashwatchExportTests", dependencies: ["CrashwatchExport"]),
        .testTarget(name: "CrashwatchCLITests", dependencies: ["CrashwatchCLI"]),
        .testTarget(name: "IntegrationTests", exclude: ["transparency.py"]),
    ],
    swiftLanguageModes: [.v6]
)
