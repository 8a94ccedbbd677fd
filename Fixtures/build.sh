#!/usr/bin/env bash
# Builds the crash fixtures.
#
#   Fixtures/build.sh OUTDIR [CC]
#
# Every Fixtures/*.c is a program built to OUTDIR/<name>, except lib*.c, each built as a shared
# object OUTDIR/lib*.so (-shared -fPIC). Flags: -pthread -Wall, then the BUILD: value from the
# file's header comment (default -O0 -g; it may hold link flags such as -ldl, so it is placed
# after the source file). CC is the second argument, else $CC, else gcc; a cross compiler such
# as aarch64-linux-gnu-gcc works too. @OUTDIR@ in BUILD stands for the absolute OUTDIR, so a
# program can link against a lib*.so built here (-L@OUTDIR@ -lNAME); shared objects are built
# before programs. @ROOT@ stands for the repository's root (the parent of Fixtures/), for files
# outside Fixtures/ such as the annotation helpers (-I@ROOT@/annotations/swift).
#
# Every Fixtures/*.cpp is built the same way with the C++ compiler that matches CC (gcc -> g++,
# PREFIX-gcc -> PREFIX-g++, clang -> clang++, cc -> c++), which links libstdc++. Every
# Fixtures/*.swift is a program built with the swiftc found on PATH as
# `swiftc -module-name <name> SOURCE <BUILD flags> -o OUTPUT` (no -pthread -Wall), only when CC
# targets this machine. `C-FILES: F...` in a Swift file's header names C sources (relative to
# Fixtures/, e.g. ../annotations/swift/crashwatch_annotations.c) compiled with CC (-c -O2 -g
# -Wall) into objects linked into the program. A .cpp or .swift file whose compiler is missing
# (the C++ one of a cross CC, or swiftc) is skipped with a message, is not listed and does not
# fail the build.
#
# DEBUG: separate in a header (see README.md) splits the program's DWARF into a file found by
# build-id: after compiling (BUILD must link a build-id note, -Wl,--build-id), the debug file is
# made with objcopy --only-keep-debug, the program is stripped with strip --strip-all, and the
# debug file goes to OUTDIR/debug/.build-id/XX/REST.debug (XX: the build-id's first two hex
# digits, REST: the others). The source is compiled once more with -DOTHER_BUILD, which must
# give another build-id; that build's debug file goes to OUTDIR/debug-other/.build-id/YY/
# REST2.debug (its own id) and, as a copy, to OUTDIR/debug-wrong/.build-id/XX/REST.debug (the
# real program's path, the other build's content). No .gnu_debuglink is added. objcopy and strip
# are CC's (PREFIX-objcopy for PREFIX-gcc). The files placed are recorded in
# OUTDIR/.<name>.debug-files and removed before the next rebuild of <name>.
#
# DEBUG: debuglink instead copies the DWARF out to OUTDIR/<name>.debug (objcopy
# --only-keep-debug), strips the program (strip --strip-all) and adds a .gnu_debuglink section
# naming "<name>.debug" (objcopy --add-gnu-debuglink, which records the file's CRC). The debug
# file is recorded in OUTDIR/.<name>.debug-files like the others.
#
# PATCH-BYTE: SECTION OFFSET OLD NEW in a header overwrites one byte of the finished program
# (after any DEBUG step): the byte at OFFSET (decimal) in SECTION's contents in the file, which
# must be OLD (hex, 0x..; the build fails otherwise), becomes NEW. The section's file offset and
# size come from readelf -SW.
#
# COMPILER: clang in a C file's header builds it with clang (found on PATH) instead of CC, only
# when CC targets this machine (lld_c: clang -fuse-ld=lld).
#
# Every Fixtures/*.rs is a Rust program built with rustc (on PATH, else $HOME/.cargo/bin/rustc)
# as `rustc --crate-name <name> --crate-type bin SOURCE <BUILD flags> -o OUTPUT`; every
# Fixtures/*.go is a Go program built with the go on PATH as `go build <BUILD flags> -o OUTPUT
# SOURCE`, with GOPATH and GOCACHE under OUTDIR/.go, GO111MODULE=off, GOFLAGS empty,
# GOPROXY=off, GOTOOLCHAIN=local and CGO_ENABLED=0 (no network, nothing outside OUTDIR; `CGO: enabled`
# in the header: CGO_ENABLED=1, the C in its preamble built by gcc, go's default). `GO-FILES: F...`
# makes the program a package of SOURCE and the named files beside it (Go assembly, go_asm), built in
# OUTDIR/.go/package/<name> (rebuilt when they change too). Both have
# no default flags (BUILD may be empty) and are built only when CC targets this machine. The
# Rust and Go programs are not listed in OUTDIR/fixtures.list (check-bare.sh and the generic
# tests read only C, C++ and Swift sources); RealToolchainTests (AnnotationFixtureTests: annotate_*) runs them.
#
# Whenever a file is skipped for a missing compiler (rustc, go, clang, swiftc, a cross C++
# compiler), the line printed says why and OUTDIR/<name>.skipped holds that reason, so a test
# can report a skip instead of a failure; a build removes it.
#
# A file is rebuilt only when its source, this script, or a file it depends on is newer than its
# output (or a file DEBUG: separate placed is missing), or when OUTDIR was last built with another
# compiler. A source depends on its GO-FILES and C-FILES and on what it names by a quoted path
# relative to its own directory, followed four levels deep: `#include "F"` (C, C++; another
# fixture's source, ../annotations/crashwatch_annotations.h), `#[path = "F"]` (Rust), an import of
# "./D" or "../D" (Go, GOPATH mode: every file in D, ../annotations/go, not followed further). One
# line is printed per compiled file. Every file is attempted; the exit status is non-zero when
# any compile failed. OUTDIR/fixtures.list names every program fixture built, one per line
# (shared objects and skipped files are not listed).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 OUTDIR [CC]" >&2
    exit 2
fi

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root_dir=$(dirname "$src_dir")
self="$src_dir/$(basename "${BASH_SOURCE[0]}")"
mkdir -p "$1"
out_dir=$(cd "$1" && pwd)
cc=${2:-${CC:-gcc}}

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "build.sh: compiler not found: $cc" >&2
    exit 1
fi

# The C++ compiler matching CC, and the binutils prefix of CC's toolchain.
cc_base=$(basename "$cc")
cc_dir=$(dirname "$cc")
[[ "$cc" == */* ]] || cc_dir=""
tool_prefix=""
case "$cc_base" in
    *-gcc | *-gcc-[0-9]*) tool_prefix=${cc_base%gcc*} ;;
esac
case "$cc_base" in
    gcc | *-gcc | gcc-[0-9]* | *-gcc-[0-9]*) cxx_base=$(sed 's/gcc\(-[0-9.]*\)\{0,1\}$/g++\1/' <<<"$cc_base") ;;
    clang | *-clang | clang-[0-9]* | *-clang-[0-9]*) cxx_base=$(sed 's/clang\(-[0-9.]*\)\{0,1\}$/clang++\1/' <<<"$cc_base") ;;
    cc) cxx_base=c++ ;;
    *) cxx_base="" ;;
esac
cxx=""
if [[ -n "$cxx_base" ]]; then
    cxx=${cc_dir:+$cc_dir/}$cxx_base
    command -v "$cxx" >/dev/null 2>&1 || cxx=""
fi
objcopy=${tool_prefix}objcopy
strip=${tool_prefix}strip

# swiftc only for native builds: CC must target this machine's architecture.
swiftc=""
target=$("$cc" -dumpmachine 2>/dev/null || true)
if [[ "$target" == "$(uname -m)"-* ]]; then
    swiftc=$(command -v swiftc 2>/dev/null || true)
fi

# rustc (PATH, else ~/.cargo/bin) and go for the Rust and Go fixtures, native builds only. A
# rustup proxy without an installed toolchain does not count.
rustc=""
go_tool=""
rust_why=""
go_why=""
if [[ "$target" == "$(uname -m)"-* ]]; then
    for candidate in "$(command -v rustc 2>/dev/null || true)" "${HOME:-/root}/.cargo/bin/rustc"; do
        if [[ -n "$candidate" && -x "$candidate" ]] && "$candidate" --version >/dev/null 2>&1; then
            rustc=$candidate
            break
        fi
    done
    rust_why="rustc not found (neither on PATH nor in \$HOME/.cargo/bin); the Rust fixtures are not built"
    go_tool=$(command -v go 2>/dev/null || true)
    go_why="go not found on PATH (Debian: golang-go); the Go fixtures are not built"
else
    rust_why="Rust fixtures build only for this machine, CC targets ${target:-?}"
    go_why="Go fixtures build only for this machine, CC targets ${target:-?}"
fi

# Another compiler than last time (e.g. switching to the aarch64 cross compiler): rebuild all.
stamp="$out_dir/.build-cc"
force=0
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$cc" ]]; then
    force=1
fi

# The value of KEY: in the header comment (the first /* ... */ block) of a source file.
header_value() {
    local file=$1 key=$2
    awk -v key="$key" '
        NR == 1 && $0 !~ /^\/\*/ { exit }
        {
            line = $0
            if (match(line, "^[ \t]*\\*[ \t]*" key ":")) {
                value = substr(line, RSTART + RLENGTH)
                sub(/^[ \t]+/, "", value)
                sub(/[ \t]+$/, "", value)
                print value
                exit
            }
            if (line ~ /\*\//) { exit }
        }' "$file"
}

# The files DEBUG: separate placed for a fixture, one per line, relative to OUTDIR: a copy of OUTDIR elsewhere
# (another checkout's .build) must never name, and so remove, the files of this one.
debug_manifest() { echo "$out_dir/.$1.debug-files"; }

# Writes fixture NAME's manifest from absolute paths under OUTDIR.
write_manifest() {
    local name=$1 path
    shift
    for path in "$@"; do printf '%s\n' "${path#"$out_dir"/}"; done >"$(debug_manifest "$name")"
}

# The absolute paths fixture NAME's manifest lists under OUTDIR; a line that is absolute (an older manifest,
# or a copied one) or climbs out of OUTDIR is ignored.
manifest_paths() {
    local manifest placed
    manifest=$(debug_manifest "$1")
    [[ -f "$manifest" ]] || return 0
    while read -r placed; do
        [[ -n "$placed" && "$placed" != /* && "$placed" != *..* ]] && printf '%s\n' "$out_dir/$placed"
    done <"$manifest"
}

# The files SOURCE depends on, one absolute path per line: its GO-FILES and C-FILES (relative to
# Fixtures/), and what it names by a quoted path relative to its own directory — `#include "F"` (C,
# C++), `#[path = "F"]` (Rust), a Go import of "./D" or "../D" (every file in D) — each followed in
# turn, four levels deep at most.
dependencies() {
    local source=$1 depth=$2 directory named
    directory=$(dirname "$source")
    ((depth <= 4)) || return 0
    for named in $(header_value "$source" GO-FILES) $(header_value "$source" C-FILES); do
        [[ -f "$src_dir/$named" ]] && echo "$src_dir/$named" && dependencies "$src_dir/$named" $((depth + 1))
    done
    while read -r named; do
        [[ -n "$named" ]] || continue
        if [[ -f "$directory/$named" ]]; then
            echo "$directory/$named"
            dependencies "$directory/$named" $((depth + 1))
        elif [[ -d "$directory/$named" && "$named" == .* ]]; then
            find "$directory/$named" -maxdepth 1 -type f
        fi
    done < <(sed -n -e 's/^[ \t]*#[ \t]*include "\([^"]*\)".*$/\1/p' -e 's/^[ \t]*#\[path = "\([^"]*\)"\].*$/\1/p' \
                 -e 's/^[ \t]*\(import \)\{0,1\}[A-Za-z_]* *"\(\.\{1,2\}\/[^"]*\)"$/\2/p' "$source")
}

needs_build() {
    local source=$1 output=$2 name=$3 debug_mode=$4
    [[ $force -eq 1 || ! -e "$output" || "$source" -nt "$output" || "$self" -nt "$output" ]] && return 0
    # A fixture is rebuilt when a file it depends on changes (another fixture's source it #includes,
    # its GO-FILES and C-FILES, the annotation helpers).
    local dependency
    while read -r dependency; do
        [[ "$dependency" -nt "$output" ]] && return 0
    done < <(dependencies "$source" 0)
    if [[ -n $debug_mode ]]; then
        local placed
        [[ -f "$(debug_manifest "$name")" && -n "$(manifest_paths "$name")" ]] || return 0
        while read -r placed; do
            [[ -e "$placed" ]] || return 0
        done < <(manifest_paths "$name")
    fi
    return 1
}

# The GNU build-id of an ELF file in hex, or nothing.
build_id() {
    LC_ALL=C readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}

# Where a debug file for BUILD-ID lives under a debug directory.
build_id_path() {
    local root=$1 id=$2
    echo "$root/.build-id/${id:0:2}/${id:2}.debug"
}

# DEBUG: separate for a freshly compiled program TMP (to be installed as fixture NAME): split
# out the debug file, strip TMP, build the -DOTHER_BUILD variant and place the three debug
# files. Arguments after NAME: the compile command for the other build, without its -o.
separate_debug() {
    local tmp=$1 name=$2
    shift 2
    local id other_id other_tmp="$tmp.other"
    id=$(build_id "$tmp")
    if [[ -z "$id" || ${#id} -lt 3 ]]; then
        echo "build.sh: $name: DEBUG: separate needs a build-id note (-Wl,--build-id in BUILD)" >&2
        return 1
    fi
    "$@" -o "$other_tmp" || return 1
    other_id=$(build_id "$other_tmp")
    if [[ -z "$other_id" || "$other_id" == "$id" ]]; then
        echo "build.sh: $name: the -DOTHER_BUILD build has no build-id or the same one ($id)" >&2
        rm -f "$other_tmp"
        return 1
    fi
    "$objcopy" --only-keep-debug "$tmp" "$tmp.debug" &&
        "$objcopy" --only-keep-debug "$other_tmp" "$other_tmp.debug" &&
        "$strip" --strip-all "$tmp" || { rm -f "$other_tmp" "$tmp.debug" "$other_tmp.debug"; return 1; }
    rm -f "$other_tmp"
    chmod 0644 "$tmp.debug" "$other_tmp.debug"

    # Drop what an earlier build of this fixture placed (its build-ids may differ).
    local placed
    while read -r placed; do
        rm -f "$placed"
        rmdir "$(dirname "$placed")" 2>/dev/null || true
    done < <(manifest_paths "$name")

    local real_path other_path wrong_path
    real_path=$(build_id_path "$out_dir/debug" "$id")
    other_path=$(build_id_path "$out_dir/debug-other" "$other_id")
    wrong_path=$(build_id_path "$out_dir/debug-wrong" "$id")
    # (set -e does not apply here: this runs inside an if condition.)
    mkdir -p "$(dirname "$real_path")" "$(dirname "$other_path")" "$(dirname "$wrong_path")" &&
        cp -f "$other_tmp.debug" "$wrong_path" &&
        mv -f "$other_tmp.debug" "$other_path" &&
        mv -f "$tmp.debug" "$real_path" &&
        write_manifest "$name" "$real_path" "$other_path" "$wrong_path"
}

# DEBUG: debuglink for a freshly compiled program TMP (to be installed as fixture NAME): the
# DWARF to OUTDIR/NAME.debug, TMP stripped and given a .gnu_debuglink naming NAME.debug.
debuglink_debug() {
    local tmp=$1 name=$2
    local debug_file="$out_dir/$name.debug"
    "$objcopy" --only-keep-debug "$tmp" "$tmp.debug" &&
        "$strip" --strip-all "$tmp" &&
        chmod 0644 "$tmp.debug" &&
        mv -f "$tmp.debug" "$debug_file" &&
        "$objcopy" --add-gnu-debuglink="$debug_file" "$tmp" &&
        write_manifest "$name" "$debug_file" || { rm -f "$tmp.debug"; return 1; }
}

# PATCH-BYTE: SECTION OFFSET OLD NEW for the finished program FILE (fixture NAME).
patch_byte() {
    local file=$1 name=$2 section offset old new extra
    read -r section offset old new extra <<<"$3"
    if [[ -z "$new" || -n "$extra" || ! "$offset" =~ ^[0-9]+$ || ! "$old" =~ ^0x[0-9a-fA-F]{1,2}$ ||
          ! "$new" =~ ^0x[0-9a-fA-F]{1,2}$ ]]; then
        echo "build.sh: $name: PATCH-BYTE needs SECTION OFFSET 0xOLD 0xNEW, not '$3'" >&2
        return 1
    fi
    # readelf -SW: "[Nr] Name Type Address Off Size ..."; "[ 1]" splits in two fields, so find
    # the name field and count from there.
    local location
    location=$(LC_ALL=C readelf -SW "$file" 2>/dev/null | awk -v section="$section" '
        { for (i = 1; i <= NF; i++) if ($i == section && $(i - 1) ~ /\]$/) { print $(i + 3), $(i + 4); exit } }')
    if [[ -z "$location" ]]; then
        echo "build.sh: $name: PATCH-BYTE: no section $section" >&2
        return 1
    fi
    local section_offset section_size position current
    read -r section_offset section_size <<<"$location"
    if ((offset >= 16#$section_size)); then
        echo "build.sh: $name: PATCH-BYTE: offset $offset is past the end of $section (0x$section_size bytes)" >&2
        return 1
    fi
    position=$((16#$section_offset + offset))
    current=$(od -An -tx1 -j "$position" -N1 "$file" | tr -d ' \n')
    if ((16#$current != old)); then
        echo "build.sh: $name: PATCH-BYTE: byte $offset of $section is 0x$current, not $old" >&2
        return 1
    fi
    printf "\\x$(printf '%02x' "$((new))")" | dd of="$file" bs=1 seek="$position" conv=notrunc status=none
}

failed=()
programs=()

shopt -s nullglob
sources=("$src_dir"/*.c "$src_dir"/*.cpp "$src_dir"/*.swift "$src_dir"/*.rs "$src_dir"/*.go)
shopt -u nullglob
if [[ ${#sources[@]} -eq 0 ]]; then
    echo "build.sh: no sources in $src_dir" >&2
    exit 1
fi

# Shared objects first: programs may dlopen them.
for pass in lib program; do
    for source in "${sources[@]}"; do
        base=$(basename "$source")
        extension=${base##*.}
        file=${base%.*}
        if [[ $file == lib* && $extension != swift && $extension != rs && $extension != go ]]; then
            [[ $pass == lib ]] || continue
            output="$out_dir/$file.so"
            kind=(-shared -fPIC)
        else
            [[ $pass == program ]] || continue
            output="$out_dir/$file"
            kind=()
        fi

        why=""
        case "$extension" in
            c) compiler=$cc
               wanted=$(header_value "$source" COMPILER)
               if [[ -n "$wanted" ]]; then
                   if [[ "$target" != "$(uname -m)"-* ]]; then
                       compiler=""
                       why="COMPILER: $wanted builds only for this machine, CC targets ${target:-?}"
                   else
                       compiler=$(command -v "$wanted" 2>/dev/null || true)
                       why="COMPILER: $wanted not found on PATH"
                   fi
               fi ;;
            cpp) compiler=$cxx ;;
            swift) compiler=$swiftc ;;
            rs) compiler=$rustc; why=$rust_why ;;
            go) compiler=$go_tool; why=$go_why ;;
        esac
        if [[ -z "$compiler" ]]; then
            case "$extension" in
                cpp) why="no C++ compiler matching $cc${cxx_base:+ ($cxx_base not found)}" ;;
                swift) [[ "$target" == "$(uname -m)"-* ]] && why="swiftc not found on PATH" ||
                           why="swiftc builds only for this machine, CC targets ${target:-?}" ;;
            esac
            echo "build.sh: skipping $base: $why"
            rm -f "$output"
            [[ $pass == lib ]] || printf '%s: %s\n' "$base" "$why" >"$out_dir/$file.skipped"
            continue
        fi
        rm -f "$out_dir/$file.skipped"
        # Rust and Go programs are left out of fixtures.list (see the top of this file).
        [[ $pass == lib || $extension == rs || $extension == go ]] || programs+=("$file")

        debug_mode=$(header_value "$source" DEBUG)
        case "$debug_mode" in
            "" | separate | debuglink) ;;
            *) echo "build.sh: $base: unknown DEBUG: $debug_mode (separate or debuglink)" >&2
               failed+=("$file"); continue ;;
        esac
        separate=0
        [[ "$debug_mode" == separate ]] && separate=1
        patch=$(header_value "$source" PATCH-BYTE)
        needs_build "$source" "$output" "$file" "$debug_mode" || continue

        flags_text=$(header_value "$source" BUILD)
        [[ -n "$flags_text" || $extension == rs || $extension == go ]] || flags_text="-O0 -g"
        flags=()
        read -r -a flags <<<"$flags_text"
        # After splitting, so an OUTDIR with spaces stays one argument.
        flags=("${flags[@]//@OUTDIR@/$out_dir}")
        flags=("${flags[@]//@ROOT@/$root_dir}")

        if [[ $extension == swift ]]; then
            # C-FILES: C sources (relative to Fixtures/) compiled with CC into objects linked into the program.
            objects=()
            for c_file in $(header_value "$source" C-FILES); do
                objects+=("$out_dir/.$file.$(basename "$c_file" .c).o")
                "$cc" -c -O2 -g -Wall "$src_dir/$c_file" -o "${objects[-1]}" || { failed+=("$file"); continue 2; }
            done
            command_line=("$compiler" -module-name "$file" "$source" "${objects[@]}" "${flags[@]}")
            shown="swiftc -module-name $file $base${objects[*]:+ + C-FILES} $flags_text"
        elif [[ $extension == rs ]]; then
            command_line=("$compiler" --crate-name "$file" --crate-type bin "$source" "${flags[@]}")
            shown="rustc --crate-name $file --crate-type bin $base $flags_text"
        elif [[ $extension == go ]]; then
            # go wants its flags (-o included) before the source: the source goes last, below.
            mkdir -p "$out_dir/.go/path" "$out_dir/.go/cache"
            cgo=0
            [[ "$(header_value "$source" CGO)" != enabled ]] || cgo=1
            command_line=(env GOPATH="$out_dir/.go/path" GOCACHE="$out_dir/.go/cache" GOFLAGS= GO111MODULE=off
                          GOPROXY=off GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=$cgo "$compiler" build "${flags[@]}")
            shown="go build${flags_text:+ $flags_text} $base"
            [[ $cgo == 0 ]] || shown="CGO_ENABLED=1 $shown"
            # GO-FILES: the program is a package of its source and these files beside it (Go assembly), built
            # in a directory of its own under OUTDIR/.go.
            go_files=$(header_value "$source" GO-FILES)
            go_target=$source
            if [[ -n "$go_files" ]]; then
                package="$out_dir/.go/package/$file"
                rm -rf "$package" && mkdir -p "$package" && cp "$source" "$package/" &&
                    (cd "$src_dir" && cp $go_files "$package/") || { failed+=("$file"); continue; }
                command_line=(env --chdir="$package" "${command_line[@]:1}")
                go_target=.
                shown+=" + $go_files"
            fi
        else
            command_line=("$compiler" "${kind[@]}" -pthread -Wall "$source" "${flags[@]}")
            shown="$compiler ${kind[*]:+${kind[*]} }-pthread -Wall $base $flags_text"
        fi

        tmp="$out_dir/.$(basename "$output").tmp.$$"
        [[ $separate == 0 ]] || shown+=" (DEBUG: separate, + -DOTHER_BUILD)"
        [[ "$debug_mode" != debuglink ]] || shown+=" (DEBUG: debuglink)"
        [[ -z "$patch" ]] || shown+=" (PATCH-BYTE: $patch)"
        echo "build.sh: $shown -> $(basename "$output")"
        output_args=(-o "$tmp")
        [[ $extension != go ]] || output_args+=("$go_target")
        if "${command_line[@]}" "${output_args[@]}" &&
            { [[ $separate == 0 ]] || separate_debug "$tmp" "$file" "${command_line[@]}" -DOTHER_BUILD; } &&
            { [[ "$debug_mode" != debuglink ]] || debuglink_debug "$tmp" "$file"; } &&
            { [[ -z "$patch" ]] || patch_byte "$tmp" "$file" "$patch"; }; then
            mv -f "$tmp" "$output"
        else
            rm -f "$tmp" "$tmp".*
            failed+=("$file")
        fi
    done
done

printf '%s\n' "${programs[@]}" >"$out_dir/.fixtures.list.tmp.$$"
mv -f "$out_dir/.fixtures.list.tmp.$$" "$out_dir/fixtures.list"

if [[ ${#failed[@]} -gt 0 ]]; then
    # Leave the stamp alone so the next run retries against the same compiler.
    echo "build.sh: FAILED: ${failed[*]}" >&2
    exit 1
fi
printf '%s\n' "$cc" >"$stamp"
