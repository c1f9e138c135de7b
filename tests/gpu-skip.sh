#!/bin/sh
# tests/gpu-skip.sh - tests/test_gpu's verdict where the GPU cannot be tested:
# a skip (exit 0) when there is no GPU, a failure (exit 1, "not ok") when
# NNLAB_REQUIRE_GPU=1 asks for one or when the module this build made cannot
# be loaded; never a vacuous pass. The verdicts of the probe itself (a GPU
# there but unusable) are checked in tests/test_gpu_rules. Speaks TAP.
# Needs NNLAB (the program, beside tests/), which `make check` exports.
: "${NNLAB:=./nnlab}"
builddir=$(dirname "$NNLAB")
test_gpu=$builddir/tests/test_gpu
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/out" | head -n 5; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
# expect NAME STATUS PATTERN [VAR=VALUE...]: runs test_gpu in that environment
expect() {
    name=$1 want=$2 pattern=$3; shift 3
    env "$@" "$test_gpu" >"$tmp/out" 2>&1; got=$?
    if [ "$got" -eq "$want" ] && grep -q -e "$pattern" "$tmp/out"; then ok "$name"
    else echo "# exit $got (wanted $want), output:"; not_ok "$name"; fi
}

if [ ! -x "$test_gpu" ]; then
    echo "1..0 # SKIP $test_gpu is not built"; exit 0
fi
if "$NNLAB" devices 2>/dev/null | grep -q "^gpu  *available"; then
    echo "1..0 # SKIP this machine has a GPU: tests/test_gpu runs for real"; exit 0
fi
module_dir=$builddir/backends/cuda/.libs
echo "1..4"
expect "no GPU: a skip" 0 "^1\.\.0 # SKIP no GPU: " NNLAB_MODULE_DIR="$module_dir"
expect "no GPU with NNLAB_REQUIRE_GPU=1: a failure" 1 "^not ok 1 - no GPU, and NNLAB_REQUIRE_GPU=1 requires one" \
    NNLAB_MODULE_DIR="$module_dir" NNLAB_REQUIRE_GPU=1
expect "NNLAB_REQUIRE_GPU=0: still a skip" 0 "^1\.\.0 # SKIP" NNLAB_MODULE_DIR="$module_dir" NNLAB_REQUIRE_GPU=0
# a module folder without the module: a skip when this build has none, a
# failure when it made one (the build is broken, not the machine GPU-less)
if grep -q "^#define NN_GPU_MODULE_BUILT 1" "$builddir/config.h" 2>/dev/null; then
    expect "the module built but not loadable: a failure" 1 "^not ok 1 - this build's GPU module cannot be loaded" \
        NNLAB_MODULE_DIR="$tmp/none"
else
    expect "no module built: a skip" 0 "^1\.\.0 # SKIP no GPU: this build of nnlab has no GPU backend" \
        NNLAB_MODULE_DIR="$tmp/none"
fi
[ "$failed" -eq 0 ]
