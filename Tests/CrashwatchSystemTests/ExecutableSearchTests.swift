// ExecutableSearchTests.swift — the execvp-like order in which command names are looked up.
import CrashwatchSystem
import Testing

@Suite struct ExecutableSearchTests {
    @Test func nameWithSlashIsUsedAsIs() {
        #expect(ExecutableSearch.candidates(for: "./app", path: "/usr/bin") == ["./app"])
        #expect(ExecutableSearch.candidates(for: "/bin/true", path: nil) == ["/bin/true"])
    }

    @Test func searchesPathInOrder() {
        #expect(ExecutableSearch.candidates(for: "cat", path: "/usr/local/bin:/usr/bin/:/bin")
            == ["/usr/local/bin/cat", "/usr/bin/cat", "/bin/cat"])
    }

    @Test func emptyEntryMeansCurrentDirectory() {
        #expect(ExecutableSearch.candidates(for: "app", path: ":/bin") == ["app", "/bin/app"])
        #expect(ExecutableSearch.candidates(for: "app", path: "/bin:") == ["/bin/app", "app"])
    }

    @Test func unsetPathUsesGlibcDefault() {
        #expect(ExecutableSearch.candidates(for: "ls", path: nil) == ["/bin/ls", "/usr/bin/ls"])
    }
}
