// NotifyFilterTests.swift — what the sd_notify relay sends on to systemd: the service's own fields, never a
// main-PID change, never NOTIFYACCESS that widens, descriptors only for the fd store or a barrier.
@testable import CrashwatchSupervisor
import Testing

@Suite struct NotifyFilterTests {
    private func decide(_ text: String, descriptors: Int = 0) -> NotifyDecision {
        NotifyFilter.decide(Array(text.utf8), descriptorCount: descriptors)
    }

    private func forwarded(_ text: String, descriptors: Int = 0) -> String {
        String(decoding: decide(text, descriptors: descriptors).forwarded, as: UTF8.self)
    }

    @Test("the service's own fields go on, in order, whatever their values")
    func ownFields() {
        let all = """
            READY=1\nRELOADING=1\nMONOTONIC_USEC=123\nSTOPPING=1\nSTATUS=Completed 66% of it\nERRNO=2\n\
            BUSERROR=org.freedesktop.DBus.Error.TimedOut\nVARLINKERROR=org.varlink.service.InvalidParameter\n\
            EXIT_STATUS=3\nWATCHDOG=trigger\nEXTEND_TIMEOUT_USEC=5000000\nRESTART_RESET=1\nFDSTOREREMOVE=1\n\
            FDNAME=db\nFDPOLL=0
            """
        #expect(forwarded(all) == all)
        #expect(forwarded("STATUS=a=b") == "STATUS=a=b", "only the first = separates the name")
    }

    @Test("every main-PID change is dropped, with the rest of the message kept")
    func mainPIDDropped() {
        #expect(forwarded("READY=1\nSTATUS=serving\nMAINPID=4711") == "READY=1\nSTATUS=serving")
        #expect(forwarded("MAINPID=1") == "")
        #expect(forwarded("MAINPIDFDID=12345\nSTATUS=x") == "STATUS=x")
        #expect(forwarded("MAINPIDFD=1", descriptors: 1) == "")
    }

    @Test("MAINPIDFD=1 with a pidfd: neither the line nor the descriptor goes, even beside FDSTORE=1")
    func mainPIDFDDescriptorClosed() {
        let alone = decide("MAINPIDFD=1", descriptors: 1)
        #expect(alone.forwarded.isEmpty && !alone.passesDescriptors)
        let mixed = decide("FDSTORE=1\nMAINPIDFD=1", descriptors: 1)
        #expect(String(decoding: mixed.forwarded, as: UTF8.self) == "FDSTORE=1")
        #expect(!mixed.passesDescriptors, "the descriptor was sent as the main PID's pidfd")
    }

    @Test("descriptors go only with FDSTORE=1; otherwise they are closed")
    func descriptorsOnlyForTheStore() {
        let stored = decide("FDSTORE=1\nFDNAME=stored", descriptors: 2)
        #expect(String(decoding: stored.forwarded, as: UTF8.self) == "FDSTORE=1\nFDNAME=stored" && stored.passesDescriptors)
        #expect(!decide("STATUS=here is a descriptor", descriptors: 1).passesDescriptors)
        #expect(!decide("FDSTORE=0\nFDNAME=x", descriptors: 1).passesDescriptors, "systemd stores only with FDSTORE=1")
        #expect(!decide("FDNAME=x", descriptors: 1).passesDescriptors)
        #expect(!decide("FDSTORE=1").passesDescriptors, "nothing to pass")
        #expect(!decide("X_FDSTORE=1", descriptors: 1).passesDescriptors)
    }

    @Test("NOTIFYACCESS= goes on only when it narrows who systemd listens to")
    func notifyAccess() {
        #expect(forwarded("NOTIFYACCESS=none") == "NOTIFYACCESS=none")
        #expect(forwarded("NOTIFYACCESS=main") == "NOTIFYACCESS=main")
        #expect(forwarded("NOTIFYACCESS=all\nREADY=1") == "READY=1")
        #expect(forwarded("NOTIFYACCESS=exec") == "")
        #expect(forwarded("NOTIFYACCESS=main ") == "", "not a value systemd accepts as main")
    }

    @Test("unknown names, extensions and lines without = are dropped; so are empty lines")
    func unknownDropped() {
        #expect(forwarded("X_SYSTEMD_UNIT_ACTIVE=foo.service\nREADY=1") == "READY=1")
        #expect(forwarded("BOGUS\n\nready=1\nREADY=1\n") == "READY=1", "names are case-sensitive")
        #expect(forwarded("") == "")
        #expect(forwarded("=1\nREADY") == "")
    }

    @Test("BARRIER=1 alone with one descriptor goes on with it; any other barrier message is dropped whole")
    func barrier() {
        let barrier = decide("BARRIER=1", descriptors: 1)
        #expect(String(decoding: barrier.forwarded, as: UTF8.self) == "BARRIER=1" && barrier.passesDescriptors)
        #expect(decide("BARRIER=1\n", descriptors: 1).passesDescriptors, "a trailing newline is the same message")
        let mixed = decide("BARRIER=1\nMAINPIDFD=1", descriptors: 1)
        #expect(mixed.forwarded.isEmpty && !mixed.passesDescriptors)
        #expect(decide("BARRIER=1\nREADY=1", descriptors: 1).forwarded.isEmpty, "systemd ignores it all")
        #expect(decide("BARRIER=1", descriptors: 2).forwarded.isEmpty, "a protocol violation")
        #expect(decide("BARRIER=1").forwarded.isEmpty)
    }

    @Test("watchdog pings and timeouts are noted from kept lines")
    func watchdogObserved() {
        let ping = decide("WATCHDOG=1")
        #expect(ping.watchdogPing && String(decoding: ping.forwarded, as: UTF8.self) == "WATCHDOG=1")
        #expect(!decide("WATCHDOG=trigger").watchdogPing)
        #expect(!decide("X_WATCHDOG=1").watchdogPing)
        #expect(decide("WATCHDOG_USEC=20000000").watchdogTimeoutNanoseconds == 20_000_000_000)
        #expect(decide("WATCHDOG_USEC=0").watchdogTimeoutNanoseconds == nil)
        #expect(decide("WATCHDOG_USEC=+5").watchdogTimeoutNanoseconds == nil)
        #expect(decide("WATCHDOG_USEC=99999999999999999999").watchdogTimeoutNanoseconds == nil)
        #expect(decide("WATCHDOG_USEC=9223372036854775").watchdogTimeoutNanoseconds == nil, "would overflow in ns")
    }
}
