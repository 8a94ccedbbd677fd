// AnnotationFixtureTests.swift — what the app knew when it crashed, from programs that declare the annotation table
// (annotations/, docs/annotations.md) in C, C++, Rust, Swift and Go, stripped, linked by gold (two overlapping note
// segments), and in a library loaded with dlopen:
// each runs under the real `crashwatch run` and its report must carry exactly the annotations and the breadcrumbs
// its header states (ANNOTATIONS, BREADCRUMBS), oldest breadcrumb first, after the ring wrapped. And the helpers
// themselves: the C header builds warning-free in every dialect it promises, and each built fixture carries the
// `crashwatch` note in the image that declares the table.
import CrashwatchTestSupport
import Foundation
import Testing

/// The fixtures that declare a table and crash, with the languages they are written in.
private let annotationFixtures = ["annotate_c", "annotate_cxx", "annotate_stripped", "annotate_dlopen", "annotate_gold",
                                  "annotate_rust", "annotate_swift", "annotate_go"]

extension Fixture {
    /// `ANNOTATIONS: KEY=VALUE ...`: the report's annotations, exactly.
    var expectedAnnotations: [String: String]? {
        keys["ANNOTATIONS"].map { text in
            Dictionary(uniqueKeysWithValues: text.split(separator: " ").map { pair in
                let equals = pair.firstIndex(of: "=") ?? pair.endIndex
                return (String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
            })
        }
    }

    /// `BREADCRUMBS: FIRST...LAST`: the numbers N of the breadcrumbs `step N` the report holds, oldest first.
    var expectedBreadcrumbNumbers: ClosedRange<Int>? {
        guard let text = keys["BREADCRUMBS"], let dots = text.range(of: "..."),
              let first = Int(text[..<dots.lowerBound]), let last = Int(text[dots.upperBound...]), first <= last else { return nil }
        return first...last
    }
}

@Suite struct AnnotationFixtureTests {
    @Test("each fixture's report carries exactly the annotations and the last breadcrumbs it set before the crash",
          arguments: annotationFixtures)
    func reportCarriesWhatTheAppSet(_ name: String) throws {
        let fixture = Fixture(name, extensions: ["c", "cpp", "rs", "swift", "go"])
        let executable = try fixture.executable()
        let expectedAnnotations = try #require(fixture.expectedAnnotations, "\(name) states no ANNOTATIONS")
        let numbers = try #require(fixture.expectedBreadcrumbNumbers, "\(name) states no BREADCRUMBS")
        let started = Date()
        let (result, reports, spool) = try runCapturing(executable, fixture.arguments, options: fixture.captureOptions,
                                                        environment: fixture.environment)
        defer { spool.remove() }
        #expect(result.termination == fixture.expectedExit, "\(result.stderr)")
        let report = try #require(reports.first, "no report; stderr: \(result.stderr)")
        #expect(reports.count == 1)

        #expect(report.json["annotations"] as? [String: String] == expectedAnnotations)

        let breadcrumbs = try #require(report.json["breadcrumbs"] as? [[String: Any]], "no breadcrumbs in \(report.path)")
        #expect(breadcrumbs.map { $0["message"] as? String } == numbers.map { "step \($0)" })
        #expect(breadcrumbs.map { $0["level"] as? String } == numbers.map { ["debug", "info", "warning", "error", "fatal"][$0 % 5] })
        // Times: each one the program's clock when it wrote the breadcrumb, so within this run and in order (a
        // millisecond either way: the report keeps milliseconds).
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let times = breadcrumbs.map { ($0["time"] as? String).flatMap(parser.date(from:)) }
        let captured = try #require((report.json["captureTime"] as? String).flatMap(parser.date(from:)))
        #expect(times.allSatisfy { $0 != nil }, "\(breadcrumbs.map { $0["time"] ?? "nil" })")
        let known = times.compactMap { $0 }
        #expect(known.allSatisfy { $0 >= started.addingTimeInterval(-0.001) && $0 <= captured.addingTimeInterval(0.001) }, "\(known), run started \(started), captured \(captured)")
        #expect(zip(known, known.dropFirst()).allSatisfy { $0 <= $1 }, "\(known)")

        // A well-formed table leaves nothing to complain about.
        let softErrors = (report.json["softErrors"] as? [[String: Any]] ?? []).filter {
            let text = "\($0["stage"] ?? "") \($0["message"] ?? "")".lowercased()
            return text.contains("annotation") || text.contains("breadcrumb")
        }
        #expect(softErrors.isEmpty, "\(softErrors)")
    }

    @Test("each fixture carries one crashwatch note in the image that declares the table, and none elsewhere",
          arguments: annotationFixtures)
    func noteIsInTheDeclaringImage(_ name: String) throws {
        let fixture = Fixture(name, extensions: ["c", "cpp", "rs", "swift", "go"])
        let executable = try fixture.executable()
        let declaring = name == "annotate_dlopen" ? Paths.fixture("libannotate_plugin.so") : executable
        #expect(try crashwatchNotes(in: declaring) == 1)
        if declaring != executable {
            #expect(try crashwatchNotes(in: executable) == 0)
        }
    }

    @Test("the stripped fixture has no symbol table: the note is the only way to its table")
    func strippedHasNoSymbols() throws {
        let executable = try Fixture("annotate_stripped").executable()
        let sections = try Subprocess.output("/usr/bin/readelf", ["-SW", executable])
        #expect(!sections.contains(".symtab"))
        let symbols = try Subprocess.output("/usr/bin/readelf", ["--dyn-syms", "-W", executable])
        #expect(!symbols.contains("crashwatch"))
    }

    @Test("the C header builds warning-free as C99, C11, C++11 and C++17, with gcc and clang, and for aarch64",
          arguments: [["gcc", "-std=c99"], ["gcc", "-std=c11"], ["clang", "-std=c99"], ["g++", "-std=c++11"],
                      ["clang++", "-std=c++17"], ["aarch64-linux-gnu-gcc", "-std=c99"]])
    func headerBuilds(_ command: [String]) throws {
        let compiler = try #require(Paths.which(command[0]), "\(command[0]) is not installed (make deps); skip")
        let directory = try TemporaryDirectory("cw-header")
        defer { directory.remove() }
        let isCxx = command[0].hasSuffix("++")
        let source = directory.join(isCxx ? "use.cpp" : "use.c")
        try """
            #define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
            #include "crashwatch_annotations.h"
            int main(void) {
                if (crashwatch_annotate("key", "value") != 0) return 1;
                crashwatch_breadcrumb(CRASHWATCH_INFO, "message");
                return crashwatch_annotate("key", 0);
            }

            """.write(toFile: source, atomically: true, encoding: .utf8)
        let result = try Subprocess.run(compiler, [command[1], "-Wall", "-Wextra", "-Werror", "-pedantic",
                                                   "-I\(Paths.root)/annotations", source, "-o", directory.join("use")])
        #expect(result.termination == .exited(0), "\(command.joined(separator: " ")): \(result.stderr)")
        #expect(try crashwatchNotes(in: directory.join("use")) == 1)
    }
}

/// How many notes of owner `crashwatch` an ELF file carries, as `readelf -n` lists them.
private func crashwatchNotes(in path: String) throws -> Int {
    let notes = try Subprocess.output("/usr/bin/readelf", ["-n", "-W", path])
    return notes.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("crashwatch ") }.count
}
