// ReportImages.swift — the report's images: each ELF object loaded in the process, with its build-id and its
// packaging metadata.
import FoundationEssentials

/// A loaded ELF image (executable or shared object) the report refers to.
public struct ImageRecord: Codable, Sendable, Equatable {
    /// The mapping's path with ` (deleted)` removed, or a pseudo-path such as `[vdso]`.
    public var path: String
    /// The last path component (`libc.so.6`).
    public var name: String
    /// The GNU build-id as lower-case hex, when the image has one.
    public var buildID: String?
    /// Where the image's first mapping (file offset 0) starts in the process.
    public var loadAddress: Address
    /// Bytes from the start of the first mapping to the end of the last one.
    public var size: Int
    /// The file offset of the first mapping (0 for ordinary ELF files).
    public var fileOffset: Address
    /// Whether the image ships with the app (see `InAppRule`).
    public var inApp: Bool
    /// The ELF machine (`x86_64`, `aarch64`): from the image's ELF header, else — its header not in memory or
    /// the core (a qemu core has no NT_FILE and no text) — the process's, whose code every image holds.
    public var architecture: String?
    /// Whether the file was deleted or replaced after it was mapped (its maps path ended in ` (deleted)`).
    public var deleted: Bool
    /// Whether this is the process's main executable.
    public var isMainExecutable: Bool
    /// The package the image belongs to, from its `.note.package` ELF note (systemd's packaging metadata).
    public var package: PackageRecord?

    /// Creates an image record; `name` defaults to the last component of `path`.
    public init(path: String, name: String? = nil, buildID: String?, loadAddress: Address, size: Int,
                fileOffset: Address = 0, inApp: Bool, architecture: String?, deleted: Bool = false,
                isMainExecutable: Bool = false, package: PackageRecord? = nil) {
        self.path = path
        self.name = name ?? ImageRecord.basename(path)
        self.buildID = buildID
        self.loadAddress = loadAddress
        self.size = size
        self.fileOffset = fileOffset
        self.inApp = inApp
        self.architecture = architecture
        self.deleted = deleted
        self.isMainExecutable = isMainExecutable
        self.package = package
    }

    /// The last non-empty component of a path (`/usr/lib/libc.so.6` → `libc.so.6`); the path itself when it has none.
    public static func basename(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

/// An image's packaging metadata (the FDO `.note.package` note: https://systemd.io/ELF_PACKAGE_METADATA/).
public struct PackageRecord: Codable, Sendable, Equatable {
    /// The packaging format (`deb`, `rpm`, …).
    public var type: String?
    /// The package name.
    public var name: String?
    /// The package version.
    public var version: String?
    /// The package architecture.
    public var architecture: String?

    public init(type: String? = nil, name: String? = nil, version: String? = nil, architecture: String? = nil) {
        self.type = type
        self.name = name
        self.version = version
        self.architecture = architecture
    }
}
