#!/bin/sh
# setup.sh - set up nnlab on a fresh Debian 12 machine (as root) and run it.
#
#   ./setup.sh run     install the build dependencies, build, install, and
#                      open the lab (nnlab) on its default preset, mnist-mlp-128;
#                      says each step with the time taken so far, and the build's
#                      progress (files compiled of those to compile; the GPU
#                      module's architectures and nvcc's passes, or why none is
#                      built), and where it installed
#   ./setup.sh check   install the dependencies, build with warnings as errors,
#                      run `make check`, then again under ASan+UBSan; reports
#                      the skipped cases, then ends with one line
#                      "N passed, N failed" (a skip or a known failure is neither)
#   ./setup.sh deps    only install the Debian packages
#   ./setup.sh build   only configure and build into build/
set -eu
[ "${NNLAB_SETUP_FUNCTIONS_ONLY:-}" = 1 ] || cd "$(dirname "$0")"
jobs=$(nproc 2>/dev/null || echo 2)

deps() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup.sh: installing packages needs root (or run: sudo $0 $*)" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends \
        build-essential autoconf automake libtool pkg-config \
        libopenblas-dev libblis4-pthread libncurses-dev libiniparser-dev zlib1g-dev libcmocka-dev libsimde-dev \
        dataset-fashion-mnist tmux python3 python3-numpy time clang libclang-rt-dev librsvg2-bin \
        libopenmpi-dev openmpi-bin >/dev/null
}

# autoreconf's twenty-odd lines of "installing ..." say nothing to a user:
# they are kept in a file and shown only when it fails.
autoreconf_quietly() {
    log=$(mktemp)
    if autoreconf -fi >"$log" 2>&1; then rm -f "$log"; return 0; fi
    cat "$log" >&2
    rm -f "$log"
    echo "setup.sh: autoreconf failed (its messages are above)" >&2
    exit 1
}

# configure_into DIR [configure arguments...]
configure_into() {
    dir=$1; shift
    [ -x configure ] || autoreconf_quietly
    mkdir -p "$dir"
    (cd "$dir" && ../configure --enable-werror "$@" >configure.out) || {
        cat "$dir/configure.out" "$dir/config.log" >&2 2>/dev/null; exit 1; }
}

build() {
    configure_into build
    make -C build -j"$jobs" >/dev/null
}

# ---- progress, for `run` (a fresh machine builds for minutes) ----------------
started=$(date +%s)
# step WHAT: one line, the time since setup.sh started first ("[1:05] building")
step() {
    t=$(($(date +%s) - started))
    printf 'setup.sh [%d:%02d] %s\n' $((t / 60)) $((t % 60)) "$*"
}

# The files a build of DIR would compile or link: the silent rules' "  CC"
# lines make -n would print (a guess: 0 when it cannot tell). With "nvcc" as
# a second argument, only the GPU module's files (the "  NVCC" lines).
build_steps() {
    what='CC|CXX|NVCC|CCLD|CXXLD|GEN'
    [ "${2:-}" = nvcc ] && what=NVCC
    make -n -C "$1" 2>/dev/null | grep -c -E "^echo \"  ($what) " || true
}

# Whether configure chose to build the GPU module into DIR (it found nvcc,
# the CUDA headers and libraries, and a test kernel compiled).
gpu_module_built() {
    grep -q '^#define NN_GPU_MODULE_BUILT 1' "$1/config.h" 2>/dev/null
}

# The GPU module's nvcc targets in DIR's Makefile, one a line, oldest first:
# "compute_75" for each virtual architecture (nvcc runs its compiler, cicc,
# once for each: the slow part), "sm_75" for each machine code.
gpu_targets() {
    sed -n 's/^NVCC_GENCODE = //p' "$1/Makefile" | tr ' ' '\n' |
        sed -n 's/.*arch=\(compute_[0-9]*\),code=\([a-z]*_[0-9]*\).*/\1 \2/p' |
        tr ' ' '\n' | sort -u | sort -t_ -k2,2n
}

# Says, before make, what the GPU module costs or why there is none. nvcc
# compiles each .cu file once per architecture, sm_75 (Turing) to the newest
# the toolkit lists, so that every GPU from Turing on runs machine code; on
# a 2-core machine that was 4 of a setup's 6 minutes.
say_gpu_module() {
    if ! gpu_module_built "$1"; then
        why=$(sed -n 's/^ *CUDA: *//p' "$1/configure.out" 2>/dev/null)
        step "no GPU module: configure found no usable CUDA toolkit (${why:-see $1/config.log}); the lab runs on the CPU and predicts GPUs from profiles"
        return 0
    fi
    sms=$(gpu_targets "$1" | grep '^sm_')
    first=$(echo "$sms" | head -n 1)
    last=$(echo "$sms" | tail -n 1)
    n_sm=$(echo "$sms" | grep -c .)
    step "the GPU module: nvcc compiles its $2 files for each of $n_sm architectures ($first to $last, and PTX for newer GPUs), $3 passes: the slow part (4 minutes on 2 cores), counted below as they run"
}

# Condenses make's silent-rules lines ("  CC  src/core/net.lo") into
# "building N/M file" with the time: on a terminal one line redrawn, else a
# line every tenth of the way. nvcc's --verbose lines ("#$ cicc ... -arch
# compute_86": one per file and architecture) count the GPU module's passes
# (P of PASSES, a line every tenth of them off a terminal); its other "#$"
# lines are dropped. Any other line (a warning, an error) passes.
condense() {
    awk -v total="$1" -v tty="$2" -v passes="${3:-0}" -v started="$started" '
        function now() { srand(); return srand() }
        function clock(t) { t = now() - started; return sprintf("[%d:%02d]", int(t / 60), t % 60) }
        function count(k, all) { return all > 0 ? sprintf("%d/%d", k, all) : k }
        function show(line, k, all, kind) {
            if (tty) { printf "\r%-79.79s", line; shown = 1; fflush() }
            else if (all <= 0 ? k % 20 == 0 : int(k * 10 / all) > tenth[kind]) {
                tenth[kind] = all > 0 ? int(k * 10 / all) : 0; print line; fflush()
            }
        }
        /^  (CC|CXX|NVCC|CCLD|CXXLD|GEN) / {
            n++
            show(sprintf("setup.sh %s building %s  %s %s", clock(), count(n, total), $1, $2), n, total, "files")
            next
        }
        /^#\$ / {
            if ($0 !~ /cicc/ || !match($0, /-arch compute_[0-9]+/)) next
            p++
            show(sprintf("setup.sh %s building %s  GPU module: nvcc pass %s, sm_%s", clock(),
                         count(n, total), count(p, passes), substr($0, RSTART + 14, RLENGTH - 14)),
                 p, passes, "passes")
            next
        }
        { if (shown) { printf "\n"; shown = 0 } print; fflush() }
        END { if (shown) printf "\n" }'
}

# configure and make with progress; make's status is kept past the pipe
# (POSIX sh has no pipefail). The GPU module's nvcc runs --verbose
# (NVCC_PROGRESS, empty in a plain make) so that its passes can be counted.
build_with_progress() {
    step "configuring (autoreconf, ./configure: half a minute)"
    configure_into build
    total=$(build_steps build)
    nvcc_files=$(build_steps build nvcc)
    passes=0 verbose=
    if gpu_module_built build && [ "${nvcc_files:-0}" -gt 0 ]; then
        passes=$((nvcc_files * $(gpu_targets build | grep -c '^compute_')))
        verbose=--verbose
    fi
    tty=0
    [ -t 1 ] && tty=1
    step "building ${total:-?} files on $jobs cores (make -j$jobs; minutes on a fresh machine)"
    say_gpu_module build "${nvcc_files:-0}" "$passes"
    rc_file=$(mktemp)
    { make -C build -j"$jobs" NVCC_PROGRESS="$verbose" 2>&1; echo $? >"$rc_file"; } |
        condense "$total" "$tty" "$passes"
    rc=$(cat "$rc_file")
    rm -f "$rc_file"
    if [ "$rc" -ne 0 ]; then
        step "the build failed (make exited $rc): its messages are above"
        exit 1
    fi
    step "built"
}

# make install, then where it went: a user who did not choose the prefix
# must find the program, the presets and the manual. The folders are
# make's own (a one-rule makefile read after build/Makefile prints them).
install_and_say() {
    make -C build install >/dev/null || {
        step "make install failed (its messages are above)"; exit 1; }
    dirs=$(printf 'nnlab-print-dirs:\n\t@echo "$(prefix)|$(bindir)|$(pkgdatadir)"\n' |
        MAKEFLAGS= MAKELEVEL= make -s --no-print-directory -C build -f Makefile -f - nnlab-print-dirs 2>/dev/null) || dirs=
    prefix=${dirs%%|*} rest=${dirs#*|}
    bindir=${rest%%|*} datadir=${rest#*|}
    if [ -z "$dirs" ]; then step "installed (make install: the prefix configure was given)"; return 0; fi
    step "installed into $prefix: the program $bindir/nnlab, the presets in $datadir/presets; man nnlab"
}

# Counts the per-case results the TAP driver left in DIR/tests/*.trs.
count() {
    cat "$1"/tests/*.trs "$1"/tests/*/*.trs 2>/dev/null | awk -v what="$2" '
        $1 == ":test-result:" && $2 == what { n++ } END { print n + 0 }'
}

# Results of an earlier run (a test since renamed or removed) must not count.
forget_results() {
    rm -f "$1"/tests/*.trs "$1"/tests/*/*.trs
}

check() {
    status=0
    configure_into build
    forget_results build
    make -C build -j"$jobs" check || status=1
    # The sanitizer build compiles the GPU module for one architecture: no GPU
    # runs it here (its kernels run under the sanitizers on the emulated GPU,
    # which is the host compiler's build), and nvcc's twelve architectures
    # cost minutes on a slow 2-core machine; the plain build keeps them all.
    configure_into build-asan \
        CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
        LDFLAGS="-fsanitize=address,undefined" NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90"
    forget_results build-asan
    ASAN_OPTIONS=detect_leaks=1 make -C build-asan -j"$jobs" check || status=1
    passed=0 failed=0 skipped=0 known=0
    for d in build build-asan; do
        passed=$((passed + $(count $d PASS)))
        failed=$((failed + $(count $d FAIL) + $(count $d XPASS) + $(count $d ERROR)))
        skipped=$((skipped + $(count $d SKIP)))
        known=$((known + $(count $d XFAIL)))
    done
    if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi   # a build that broke
    echo "$skipped skipped (counted neither passed nor failed)"
    # a known failure (a TODO case: the H100 model's batch-16 points, tests/test_model_h100) is
    # not a pass either
    [ "$known" -eq 0 ] || echo "$known known failures, marked TODO (counted neither passed nor failed)"
    echo "$passed passed, $failed failed"
    return "$status"
}

# tests/setup-progress.sh reads the functions alone
[ "${NNLAB_SETUP_FUNCTIONS_ONLY:-}" = 1 ] && return 0

case "${1:-}" in
    deps) deps ;;
    build) build ;;
    run)
        step "installing the Debian packages (apt-get: a minute or two on a fresh machine)"
        deps
        build_with_progress
        step "installing nnlab (make install)"
        install_and_say
        step "ready: opening the lab"
        exec nnlab
        ;;
    check)
        deps
        check
        ;;
    *) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
