// Readelf.swift — what binutils' readelf says about a file, to check crashwatch's own ELF readers against.
import Foundation
import Testing

/// Answers from `readelf`, run in the C locale.
public enum Readelf {
    /// The build-ids `readelf -n` prints for a file, in lower-case hex, in the order printed; fails the test
    /// when readelf is not installed or fails.
    public static func buildIDs(of path: String) throws -> [String] {
        let output = try Subprocess.output(try #require(Paths.which("readelf"), "readelf (binutils) is not installed"),
                                           ["-n", path], environment: ["LC_ALL": "C"])
        return output.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "Build ID: ") else { return nil }
            return String(line[range.upperBound...]).trimmingCharacters(in: .whitespaces)
        }
    }

    /// The first build-id `readelf -n` prints for a file, or nil when it has none.
    public static func buildID(of path: String) throws -> String? { try buildIDs(of: path).first }
}
