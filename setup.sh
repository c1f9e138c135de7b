#!/bin/sh
# setup.sh - set up nnlab on a fresh Debian 12 machine (as root) and run it.
#
#   ./setup.sh run     install the build dependencies, build, install, and
#                      open the lab (nnlab) on its default preset, mnist-mlp-128
#   ./setup.sh check   install the dependencies, build with warnings as errors,
#                      run `make check`, then again under ASan+UBSan; reports
#                      the skipped cases, then ends with one line
#                      "N passed, N failed" (a skip is neither)
#   ./setup.sh deps    only install the Debian packages
#   ./setup.sh build   only configure and build into build/
set -eu
cd "$(dirname "$0")"
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
        libopenblas-dev libncurses-dev libiniparser-dev zlib1g-dev libcmocka-dev \
        dataset-fashion-mnist tmux python3 python3-numpy time clang libclang-rt-dev >/dev/null
}

# configure_into DIR [configure arguments...]
configure_into() {
    dir=$1; shift
    [ -x configure ] || autoreconf -fi
    mkdir -p "$dir"
    (cd "$dir" && ../configure --enable-werror "$@" >configure.out) || {
        cat "$dir/configure.out" "$dir/config.log" >&2 2>/dev/null; exit 1; }
}

build() {
    configure_into build
    make -C build -j"$jobs" >/dev/null
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
    configure_into build-asan \
        CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
        LDFLAGS="-fsanitize=address,undefined"
    forget_results build-asan
    ASAN_OPTIONS=detect_leaks=1 make -C build-asan -j"$jobs" check || status=1
    passed=0 failed=0 skipped=0
    for d in build build-asan; do
        passed=$((passed + $(count $d PASS) + $(count $d XFAIL)))
        failed=$((failed + $(count $d FAIL) + $(count $d XPASS) + $(count $d ERROR)))
        skipped=$((skipped + $(count $d SKIP)))
    done
    if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi   # a build that broke
    echo "$skipped skipped (counted neither passed nor failed)"
    echo "$passed passed, $failed failed"
    return "$status"
}

case "${1:-}" in
    deps) deps ;;
    build) build ;;
    run)
        deps
        build
        make -C build install >/dev/null
        exec nnlab
        ;;
    check)
        deps
        check
        ;;
    *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
