#!/usr/bin/env bash
# Builds the crash fixtures.
#
#   Fixtures/build.sh OUTDIR [CC]
#
# Every Fixtures/*.c is a program built to OUTDIR/<name>, except lib*.c, each built as a shared
# object OUTDIR/lib*.so (-shared -fPIC). Flags: -pthread -Wall, then the BUILD: value from the
# file's header comment (default -O0 -g; it may hold link flags such as -ldl, so it is placed
# after the source file). CC is the second argument, else $CC, else gcc; a cross compiler such
# as aarch64-linux-gnu-gcc works too.
#
# A file is rebuilt only when its source (or this script) is newer than its output, or when
# OUTDIR was last built with another compiler. One line is printed per compiled file. Every
# file is attempted; the exit status is non-zero when any compile failed. OUTDIR/fixtures.list
# names every program fixture, one per line (shared objects are not listed).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 OUTDIR [CC]" >&2
    exit 2
fi

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$src_dir/$(basename "${BASH_SOURCE[0]}")"
mkdir -p "$1"
out_dir=$(cd "$1" && pwd)
cc=${2:-${CC:-gcc}}

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "build.sh: compiler not found: $cc" >&2
    exit 1
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

needs_build() {
    local source=$1 output=$2
    [[ $force -eq 1 || ! -e "$output" || "$source" -nt "$output" || "$self" -nt "$output" ]]
}

failed=()
programs=()

shopt -s nullglob
sources=("$src_dir"/*.c)
shopt -u nullglob
if [[ ${#sources[@]} -eq 0 ]]; then
    echo "build.sh: no sources in $src_dir" >&2
    exit 1
fi

# Shared objects first: programs may dlopen them.
for pass in lib program; do
    for source in "${sources[@]}"; do
        file=$(basename "$source" .c)
        if [[ $file == lib* ]]; then
            [[ $pass == lib ]] || continue
            output="$out_dir/$file.so"
            kind=(-shared -fPIC)
        else
            [[ $pass == program ]] || continue
            programs+=("$file")
            output="$out_dir/$file"
            kind=()
        fi
        needs_build "$source" "$output" || continue

        flags_text=$(header_value "$source" BUILD)
        [[ -n "$flags_text" ]] || flags_text="-O0 -g"
        read -r -a flags <<<"$flags_text"

        tmp="$out_dir/.$(basename "$output").tmp.$$"
        echo "build.sh: $cc ${kind[*]:+${kind[*]} }-pthread -Wall $(basename "$source") $flags_text -> $(basename "$output")"
        if "$cc" "${kind[@]}" -pthread -Wall "$source" "${flags[@]}" -o "$tmp"; then
            mv -f "$tmp" "$output"
        else
            rm -f "$tmp"
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
