#!/usr/bin/env bash
# hisp.sh: set up, build and run hisp on Debian 12.
#
#   ./hisp.sh demo [options]   install what is missing, build, run `hisp demo`
#                              (options go to hisp demo: --n N, --backend B, --json, ...)
#   ./hisp.sh test             install, build, run the test suite (last line:
#                              check's summary); exit status = the tests'
#   ./hisp.sh test-sanitize    the same with the AddressSanitizer/UBSan build
#   ./hisp.sh test-tsan        the concurrency suites under ThreadSanitizer
#                              (build/tsan: library and test program only)
#   ./hisp.sh test-install     build, `scons install` into a temporary prefix,
#                              run README's build lines against it as written
#                              (examples/spmv_example.c through pkg-config,
#                              shared and static; README's program) and build
#                              the example through CMake (shared and static)
#   ./hisp.sh build            install and build only
#   ./hisp.sh help             this text
#
# Packages come from apt-get (sudo when not root), only when something is
# missing. The CUDA backend is built when a CUDA toolkit is found (nvcc under
# $CUDA_HOME, /usr/local/cuda or on PATH); it needs no GPU to build.
# Installing and building are quiet: one line each ("building (scons ...)
# ... done in 2 min"); when one fails, the last lines of its output and the
# log file that holds all of it.
# Environment: HISP_SCONS_FLAGS adds scons options (e.g. "cuda=no"),
# HISP_JOBS sets the build parallelism (default: number of CPUs),
# HISP_VERBOSE=1 shows the build's commands as they run.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

PACKAGES=(scons check pkg-config pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo cmake)
# MSREP (issue 7): hwloc for NUMA placement, OpenMPI for hisp-mpi and its tests
PACKAGES+=(libhwloc-dev libopenmpi-dev openmpi-bin)
# compressed Matrix Market files (.gz, .bz2): zlib and libbz2
PACKAGES+=(zlib1g-dev libbz2-dev)
# the CLI tests' second oracle of hisp multiply (tests/spgemm_scipy.py)
PACKAGES+=(python3-scipy)
JOBS="${HISP_JOBS:-$(nproc 2>/dev/null || echo 2)}"
read -r -a EXTRA <<<"${HISP_SCONS_FLAGS:-}"

say() { echo "hisp.sh: $*" >&2; }

usage() { # the comment block at the top of this file
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}

duration() { # seconds -> "42 s" or "3 min 5 s"
    if [ "$1" -lt 60 ]; then echo "$1 s"; else echo "$(($1 / 60)) min $(($1 % 60)) s"; fi
}

# quietly WHAT COMMAND...: one line "hisp.sh: WHAT ... done in N s" with the
# command's output kept in a log, shown (its tail) only when it fails;
# HISP_VERBOSE=1 runs it in plain view
quietly() {
    local what=$1 log t0=$SECONDS
    shift
    if [ "${HISP_VERBOSE:-0}" = 1 ]; then
        say "$what"
        "$@"
        return
    fi
    log=$(mktemp "${TMPDIR:-/tmp}/hisp.sh-log.XXXXXX")
    printf 'hisp.sh: %s ... ' "$what" >&2
    if "$@" >"$log" 2>&1; then
        echo "done in $(duration $((SECONDS - t0)))" >&2
        rm -f "$log"
    else
        echo "FAILED after $(duration $((SECONDS - t0)))" >&2
        say "the last 40 lines of its output (all of it: $log; HISP_VERBOSE=1 shows it as it runs):"
        tail -n 40 "$log" >&2
        return 1
    fi
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

install_deps() {
    local missing=() p
    if command -v dpkg-query >/dev/null 2>&1; then
        for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
        command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
    else
        command -v scons >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1 && return 0
        say "scons or gcc is missing and this is not a Debian system: install them by hand"
        return 1
    fi
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            say "missing packages (${missing[*]}), and not root and no sudo to install them"
            return 1
        fi
    fi
    apt_install() {
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
            "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                --no-install-recommends "$@"
    }
    quietly "installing ${missing[*]} (apt-get)" apt_install "${missing[@]}"
}

find_cuda() {
    # scons cuda=auto looks under $CUDA_HOME (default /usr/local/cuda)
    if [ -z "${CUDA_HOME:-}" ] && [ ! -x /usr/local/cuda/bin/nvcc ] && command -v nvcc >/dev/null 2>&1; then
        CUDA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
        export CUDA_HOME
    fi
}

build() { # build [scons options...]
    install_deps
    find_cuda
    quietly "building (scons -Q -j$JOBS${*:+ $*}${EXTRA[*]:+ ${EXTRA[*]}})" \
        scons -Q -j"$JOBS" "$@" "${EXTRA[@]}"
}

asan_env() {
    export ASAN_OPTIONS="${ASAN_OPTIONS:-protect_shadow_gap=0:allocator_may_return_null=1:detect_leaks=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
    if [ -f tests/lsan.supp ]; then
        export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}"
    fi
}

cmd="${1:-help}"
[ $# -gt 0 ] && shift
case "$cmd" in
demo)
    build
    # PoCL's worker threads are not pinned by default; on small VMs they
    # can end up sharing one core (seen on the 2-vCPU CI machine)
    export POCL_AFFINITY="${POCL_AFFINITY:-1}"
    exec build/bin/hisp demo "$@"
    ;;
test)
    build
    # run the binary directly (not `scons test`): its summary line stays last
    status=0
    build/tests/check_hisp || status=$?
    exit "$status"
    ;;
test-sanitize)
    build sanitize=1
    asan_env
    status=0
    build/sanitize/tests/check_hisp || status=$?
    exit "$status"
    ;;
test-tsan)
    # the suites whose threads share hisp objects (first use, HiSparse
    # families read while edited, handles checked while others are made, a
    # plan's worker threads in solves over two devices: PoCL sub-devices and
    # reference contexts): the rest runs single-threaded code that the other
    # variants cover, and TSan is slow
    build tsan=1 build/tsan/tests/check_hisp
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
    status=0
    for suite in concurrency hisparse_mt handles solver_dist:threads; do # suite[:test case]
        if [[ $suite == *:* ]]; then
            CK_RUN_SUITE=${suite%%:*} CK_RUN_CASE=${suite#*:} build/tsan/tests/check_hisp ||
                status=$?
        else
            CK_RUN_SUITE=$suite build/tsan/tests/check_hisp || status=$?
        fi
    done
    exit "$status"
    ;;
test-install)
    build
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    build install prefix="$tmp/prefix" >"$tmp/install.log" 2>&1 || {
        cat "$tmp/install.log"
        exit 1
    }
    examples/test_install.sh "$tmp/prefix"
    ;;
build)
    build "$@"
    ;;
help | -h | --help)
    usage
    ;;
*)
    say "unknown command '$cmd'"
    usage >&2
    exit 1
    ;;
esac
