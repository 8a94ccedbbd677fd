#!/bin/bash
# The first process of the test container: run by harness.py as
#   unshare --pid --mount --uts --ipc --fork --propagation private --kill-child -- container-init.sh
# so it is PID 1 of a new PID namespace, inside a private mount namespace (nothing it mounts is seen
# by the host). It
#   1. moves itself into the container's cgroup in every hierarchy (CW_CGROUP_DIRS, host paths the
#      harness created) and unshares the cgroup namespace there (stage "cgroup"), so that systemd
#      sees that cgroup as its root "/" and manages only what is below it;
#   2. mounts the root (an overlay over the cached debootstrap root, upper layer per run), /proc
#      (with /proc/sys read-only), /sys read-only, /sys/fs/cgroup (a tmpfs holding the namespace's
#      view of each hierarchy, read-write), a private /dev, /run, and read-only bind mounts
#      (CW_BINDS: the Swift runtime);
#   3. makes the root "/" and execs systemd as PID 1, with container=... in its environment
#      (systemd's CONTAINER_INTERFACE).
# Every error names the step and exits non-zero (the harness shows this script's output).
set -euo pipefail

fail() {
    echo "container-init: $*" >&2
    exit 1
}

stage=${1:-cgroup}

if [[ $stage == cgroup ]]; then
    # Stage 1: join the container's cgroups, then a new cgroup namespace rooted there.
    while IFS= read -r dir; do
        [[ -n $dir ]] || continue
        echo 0 >"$dir/cgroup.procs" || fail "cannot move PID 1 into the cgroup $dir (writing 0 to its cgroup.procs)"
    done <<<"${CW_CGROUP_DIRS:-}"
    exec unshare --cgroup -- "$0" mounts
    fail "exec unshare --cgroup failed"
fi

[[ $stage == mounts ]] || fail "unknown stage $stage"

root=${CW_MERGED:?}
[[ -d $root ]] || fail "the mount point $root does not exist"

# The root: the cached tree read-only below, this run's changes above.
mount -t overlay overlay -o "lowerdir=${CW_LOWER:?},upperdir=${CW_UPPER:?},workdir=${CW_WORK:?}" "$root" ||
    fail "mounting the overlay root (lower $CW_LOWER, upper $CW_UPPER) on $root failed"

# Read-only bind mounts from the host at the same path (the Swift runtime crashwatch links to).
while IFS= read -r path; do
    [[ -n $path ]] || continue
    [[ -d $path ]] || fail "bind source $path does not exist on the host"
    mkdir -p "$root$path" || fail "cannot create the bind mount point $root$path"
    mount --bind "$path" "$root$path" || fail "bind-mounting $path failed"
    mount -o remount,bind,ro "$root$path" || fail "remounting $path read-only failed"
done <<<"${CW_BINDS:-}"

# /proc of the new PID namespace; /proc/sys and /proc/sysrq-trigger read-only (systemd would
# otherwise raise the host's fs.file-max and fs.nr_open).
mount -t proc -o nosuid,nodev,noexec proc "$root/proc" || fail "mounting /proc failed"
for p in sys sysrq-trigger; do
    [[ -e $root/proc/$p ]] || continue
    mount --bind "$root/proc/$p" "$root/proc/$p" || fail "bind-mounting /proc/$p failed"
    mount -o remount,bind,ro "$root/proc/$p" || fail "remounting /proc/$p read-only failed"
done

# /sys read-only; a tmpfs on /sys/fs/cgroup with this cgroup namespace's view of each hierarchy.
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys" || fail "mounting /sys failed"
mount -t tmpfs -o nosuid,nodev,noexec,mode=755,size=1m tmpfs "$root/sys/fs/cgroup" ||
    fail "mounting the tmpfs on /sys/fs/cgroup failed"
# CW_CGROUP_MOUNTS lines: "TARGET FSTYPE OPTIONS" (TARGET relative to /sys/fs/cgroup; "." on a pure
# cgroup2 host: cgroup2 directly on /sys/fs/cgroup, over the tmpfs), or "TARGET -> LINK" for the links
# of co-mounted controllers (cpu -> cpu,cpuacct).
if [[ -n ${CW_CGROUP_MOUNTS:-} ]]; then
    while read -r target fstype options; do
        [[ -n $target ]] || continue
        if [[ $fstype == "->" ]]; then
            ln -s "$target" "$root/sys/fs/cgroup/$options" || fail "cannot link /sys/fs/cgroup/$options"
            continue
        fi
        mkdir -p "$root/sys/fs/cgroup/$target" || fail "cannot create /sys/fs/cgroup/$target"
        mount -t "$fstype" -o "nosuid,nodev,noexec,$options" cgroup "$root/sys/fs/cgroup/$target" ||
            fail "mounting the $fstype hierarchy ($options) on /sys/fs/cgroup/$target failed"
    done <<<"$CW_CGROUP_MOUNTS"
fi

# A private /dev: a tmpfs with the harmless device nodes bound from the host, its own devpts.
mount -t tmpfs -o nosuid,mode=755,size=4m tmpfs "$root/dev" || fail "mounting the tmpfs on /dev failed"
for node in null zero full random urandom tty; do
    touch "$root/dev/$node"
    mount --bind "/dev/$node" "$root/dev/$node" || fail "bind-mounting /dev/$node failed"
done
# No console: systemd's status output goes nowhere (its log is in the journal and on stderr).
touch "$root/dev/console"
mount --bind /dev/null "$root/dev/console" || fail "bind-mounting /dev/null on /dev/console failed"
mkdir -p "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5,nosuid,noexec devpts "$root/dev/pts" ||
    fail "mounting a new devpts instance failed"
ln -s pts/ptmx "$root/dev/ptmx"
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$root/dev/shm" || fail "mounting /dev/shm failed"
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"

mount -t tmpfs -o nosuid,nodev,mode=755,size=64m tmpfs "$root/run" || fail "mounting /run failed"

# The root becomes "/" (as switch_root does) and systemd becomes PID 1.
cd "$root"
mount --move . / || fail "moving the root onto / failed"
exec chroot . /usr/bin/env -i container="${CW_CONTAINER_NAME:-crashwatch-test}" \
    PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    /lib/systemd/systemd --system --show-status=no
