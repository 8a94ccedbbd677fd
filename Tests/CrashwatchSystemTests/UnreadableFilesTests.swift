// UnreadableFilesTests.swift — which mappings crashwatch never reads: those on the FUSE file systems a
// process's mountinfo lists, matched by device as /proc/PID/maps prints it (hex major:minor).
import CrashwatchSystem
import Testing

@Suite struct UnreadableFilesTests {
    static let mountinfo = """
        22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
        45 22 0:39 / /tmp/cw-fuse-stall-AbCdEf rw,nosuid,nodev,relatime - fuse.fuse_stall fuse_stall rw,user_id=0,group_id=0
        46 22 0:41 / /mnt/sshfs\\040mount rw,relatime shared:2 - fuse.sshfs user@host:/ rw,user_id=1000
        47 22 8:17 / /media/usb rw,relatime - fuseblk /dev/sdb1 rw,user_id=0
        48 22 0:40 / /sys/fs/fuse/connections rw,relatime - fusectl none rw
        49 22 0:5 / /dev rw,nosuid - devtmpfs udev rw
        """

    @Test("FUSE mounts (fuse.*, fuseblk) are found by device, in the maps' hex spelling; fusectl and the rest are not")
    func devices() {
        let files = UnreadableFiles(mountinfo: Self.mountinfo)
        #expect(files.devices == Set<UInt64>([0 << 32 | 39, 0 << 32 | 41, 8 << 32 | 17]))
        #expect(files.contains(mapsDevice: "00:27"))
        #expect(files.contains(mapsDevice: "00:29"))
        #expect(files.contains(mapsDevice: "08:11"))
        #expect(!files.contains(mapsDevice: "00:28"))  // fusectl
        #expect(!files.contains(mapsDevice: "fe:00"))  // ext4
        #expect(!files.contains(mapsDevice: "00:00"))  // anonymous memory
        #expect(!files.contains(mapsDevice: "garbage"))
    }

    @Test("dashes in paths and optional fields, an escaped \" - \" in a mount point: only the lone \"-\" field separates")
    func separator() {
        let table = """
            50 22 0:42 /sub-dir /mnt/a-b\\040-\\040fuse rw,relatime shared:3 master:1 - fuse.x-y src-dir rw
            51 22 0:43 /-/- /mnt/-\\040- rw - tmpfs fuse rw
            52 22 0:44 / /mnt/fuse- rw
            53 22 0:45 / /mnt/x rw -
            54 22 0:46:1 / /mnt/y rw - fuse z rw
            55 22 0:47 / /mnt/z rw  -  fuseblk /dev/sdc1 rw
            """
        let files = UnreadableFiles(mountinfo: table, complete: false)
        #expect(files.devices == Set<UInt64>([42, 47]))
        // Lines without a separator, or without a device of two numbers, list nothing.
        #expect(files.listed == Set<UInt64>([42, 43, 47]))
    }

    @Test("without FUSE mounts nothing is unreadable and the argument area is read without looking further")
    func none() {
        let files = UnreadableFiles(mountinfo: "22 1 254:0 / / rw - ext4 /dev/vda rw\n")
        #expect(files.devices.isEmpty)
        #expect(files.argumentsReadable(pid: 1, through: 1))
    }

    @Test("a mount table not read whole: a file on a device the part read does not list is not read either (a FUSE mount hidden past the limit)")
    func truncated() {
        // The part read: the root file system and a tmpfs; the FUSE mount came after the cut.
        let part = "22 1 254:0 / / rw - ext4 /dev/vda rw\n23 22 0:30 / /tmp rw - tmpfs tmpfs rw\n"
        let files = UnreadableFiles(mountinfo: part, complete: false)
        #expect(!files.complete)
        #expect(!files.contains(mapsDevice: "fe:00"))  // listed: ext4
        #expect(!files.contains(mapsDevice: "00:1e"))  // listed: tmpfs
        #expect(!files.contains(mapsDevice: "00:00"))  // anonymous memory
        #expect(files.contains(mapsDevice: "00:2a"))  // not listed: may be the FUSE mount
        #expect(files.contains(mapsDevice: "garbage"))
        // The whole table, the same lines: nothing unknown is feared.
        #expect(!UnreadableFiles(mountinfo: part).contains(mapsDevice: "00:2a"))
    }
}
