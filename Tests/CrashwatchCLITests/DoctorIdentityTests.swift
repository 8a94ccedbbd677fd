// DoctorIdentityTests.swift — what `doctor --unit` takes from `systemctl show`: the unit's user, environment,
// and the --spool and --config of its `crashwatch run` (those after `--` are the program's own).
@testable import CrashwatchCLI
import Testing

@Suite struct DoctorIdentityTests {
    @Test("User=, Environment= and ExecStart='s crashwatch options are taken; the program's own arguments are not")
    func parseShow() {
        let text = """
            User=shop
            Environment=CRASHWATCH_SPOOL=/var/lib/shop/crashes LANG=C.UTF-8
            ExecStart={ path=/usr/bin/crashwatch ; argv[]=/usr/bin/crashwatch run --config=/etc/shop/cw.conf --spool /srv/spool -- /opt/shop/bin/shopd --spool /x ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }
            LoadState=loaded
            """
        let unit = DoctorIdentity.parse(show: text)
        #expect(unit.user == "shop")
        #expect(unit.environment == ["CRASHWATCH_SPOOL=/var/lib/shop/crashes", "LANG=C.UTF-8"])
        #expect(unit.options == ["--config", "/etc/shop/cw.conf", "--spool", "/srv/spool"])
    }

    @Test("a unit without User= runs as root; one that is not crashwatch gives no options")
    func rootAndForeign() {
        let unit = DoctorIdentity.parse(show: "User=\nEnvironment=\nExecStart={ path=/usr/sbin/nginx ; argv[]=/usr/sbin/nginx -g daemon off; ; ignore_errors=no }\n")
        #expect(unit.user == nil && unit.environment.isEmpty && unit.options.isEmpty)
    }
}
