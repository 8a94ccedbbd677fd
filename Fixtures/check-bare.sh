#!/usr/bin/env bash
# Runs every fixture bare (no supervisor) and compares what really happens with its header:
# the exit status (EXIT:) and, where given, the exact stdout (STDOUT:). A fixture's ENV:
# assignments (NAME=VALUE, space separated) are added to its environment. Programs without an
# EXIT: key are helpers (clean_exec) and are skipped.
#
#   Fixtures/check-bare.sh [OUTDIR]
#
# Builds into OUTDIR (default: a temporary directory) with build.sh first. Each fixture runs in
# its own temporary directory holding a copy of its binary and the lib*.so files (deleted_exe
# deletes its own binary; dlopen_crash loads its plugin from beside its executable), with
# stdin from /dev/null, core dumps off and a 10 s timeout. Exit status 0 when all match.
# Exit codes above 128 cannot be told apart from signal deaths here; no fixture uses one.
set -euo pipefail

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/crashwatch-check-bare.XXXXXX")
trap 'rm -rf "$work"' EXIT
out_dir=${1:-$work/build}

"$src_dir/build.sh" "$out_dir" >/dev/null
out_dir=$(cd "$out_dir" && pwd)

header_value() {
    local file=$1 key=$2
    awk -v key="$key" '
        NR == 1 && $0 !~ /^\/\*/ { exit }
        {
            if (match($0, "^[ \t]*\\*[ \t]*" key ":")) {
                value = substr($0, RSTART + RLENGTH)
                sub(/^[ \t]+/, "", value)
                sub(/[ \t]+$/, "", value)
                print value
                found = 1
                exit
            }
            if ($0 ~ /\*\//) { exit }
        }
        END { if (!found) exit 1 }' "$file"
}

ulimit -c 0
failures=0
while read -r name; do
    source=""
    for extension in c cpp swift; do
        [[ -f "$src_dir/$name.$extension" ]] && { source="$src_dir/$name.$extension"; break; }
    done
    [[ -n "$source" ]] || { echo "FAIL $name: no source"; failures=$((failures + 1)); continue; }
    # A program without an EXIT: key is a helper, not a fixture (clean_exec).
    expected_exit=$(header_value "$source" EXIT) || { echo "skip $name (no EXIT: key, a helper)"; continue; }
    args_text=$(header_value "$source" ARGS || true)
    read -r -a args <<<"$args_text"
    env_text=$(header_value "$source" ENV || true)
    read -r -a env_assignments <<<"$env_text"

    run_dir="$work/run-$name"
    mkdir -p "$run_dir"
    cp "$out_dir/$name" "$run_dir/"
    cp "$out_dir"/lib*.so "$run_dir/" 2>/dev/null || true

    set +e
    # The braces' 2>/dev/null silences bash's own "Segmentation fault" job messages.
    { (cd "$run_dir" && exec env "${env_assignments[@]}" timeout 10 "./$name" "${args[@]}" </dev/null >"$run_dir/.stdout" 2>"$run_dir/.stderr"); } 2>/dev/null
    status=$?
    set -e

    if [[ $status -eq 124 ]]; then
        actual="timeout"
    elif [[ $status -gt 128 ]]; then
        actual="signal SIG$(kill -l $((status - 128)))"
    else
        actual="code $status"
    fi

    problems=()
    [[ "$actual" == "$expected_exit" ]] || problems+=("exit: expected '$expected_exit', got '$actual'")
    if expected_stdout=$(header_value "$source" STDOUT); then
        expected_stdout=$(printf '%b' "$expected_stdout")
        actual_stdout=$(cat "$run_dir/.stdout")
        [[ "$actual_stdout" == "$expected_stdout" ]] ||
            problems+=("stdout: expected $(printf '%q' "$expected_stdout"), got $(printf '%q' "$actual_stdout")")
    fi
    if [[ ${#problems[@]} -eq 0 ]]; then
        echo "ok   $name ($actual)"
    else
        failures=$((failures + 1))
        echo "FAIL $name: ${problems[*]}"
        sed 's/^/     stderr: /' "$run_dir/.stderr"
    fi
    rm -rf "$run_dir"
done <"$out_dir/fixtures.list"

if [[ $failures -gt 0 ]]; then
    echo "$failures fixture(s) differ from their headers" >&2
    exit 1
fi
