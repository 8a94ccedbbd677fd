// ImageReferences.swift — the report's image list as frames are placed: each image a frame refers to gets one
// index, the main executable always listed; what ReportBuilder uses to fill `imageIndex` and `images`.
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchSystem

/// The images a report's frames are in, each given an index as a frame first refers to it (so frame indices
/// stay valid), plus the main executable: their records come from the capture — maps, build-ids read from
/// memory, the in-app rule — whoever found the frames.
struct ImageReferences {
    private let capture: RawCapture
    private let table: ImageTable
    private let identities: [UInt64: RawImage]
    private var used: [LoadedImage] = []
    private var index: [UInt64: Int] = [:]

    init(capture: RawCapture, table: ImageTable) {
        self.capture = capture
        self.table = table
        var identities: [UInt64: RawImage] = [:]
        for image in capture.images { identities[image.start] = image }
        self.identities = identities
    }

    /// Sets `record`'s image index and offset from its address; false when no image holds it.
    mutating func place(_ record: inout FrameRecord) -> Bool {
        guard let image = table.image(containing: record.address.value) else {
            record.imageIndex = nil
            record.imageOffset = nil
            return false
        }
        record.imageIndex = indexOf(image)
        record.imageOffset = Address(record.address.value &- (image.baseAddress ?? image.start))
        return true
    }

    private mutating func indexOf(_ image: LoadedImage) -> Int {
        if let found = index[image.start] { return found }
        used.append(image)
        index[image.start] = used.count - 1
        return used.count - 1
    }

    /// The images frames referred to (in that order), then the main executable when no frame touched it.
    /// `fileBuildID`: a build-id read from an image's file, for an image whose memory gave none.
    mutating func records(fileBuildID: (UInt64) -> String?) -> [ImageRecord] {
        let mainExecutable = capture.process.resolvedExecutable
        if let main = table.images.first(where: { $0.path == mainExecutable }) { _ = indexOf(main) }
        let rule = InAppRule(appRoots: capture.options.appRoots, executablePath: mainExecutable)
        return used.map { image in
            let identity = identities[image.start]
            return ImageRecord(
                path: capped(image.path), buildID: identity?.buildID ?? fileBuildID(image.start),
                loadAddress: Address(image.baseAddress ?? image.start), size: Int(clamping: image.size),
                fileOffset: Address(image.mappings.first?.offset ?? 0),
                inApp: image.kind == .file && rule.isInApp(image.path),
                architecture: (identity?.architecture ?? capture.architecture).rawValue, deleted: image.isDeleted,
                isMainExecutable: image.path == mainExecutable, package: identity?.package)
        }
    }
}
