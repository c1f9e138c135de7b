#!/bin/sh
# tests/fuzz/run.sh - a short run of each libFuzzer harness (tests/fuzz/) on
# its seed corpus, as part of `make check`; speaks TAP. A harness that
# crashes, leaks, takes more memory than -malloc_limit_mb allows in one
# allocation (a header trusted) or hangs fails its line, and the input that
# did it is kept as build/tests/fuzz/crash-NAME-* (see docs/fuzzing.md to
# reproduce it). Where configure found no compiler with -fsanitize=fuzzer the
# harnesses are not built and every line is a skip.
#   NNLAB_FUZZ_SECONDS   seconds per harness (default 5)
: "${top_srcdir:=.}" "${NNLAB_FUZZ_DIR:=tests/fuzz}" "${NNLAB_FUZZ_SECONDS:=5}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
for name in preset preset_big idx cifar; do
    n=$((n + 1))
    harness="$NNLAB_FUZZ_DIR/fuzz_$name"
    if [ ! -x "$harness" ]; then
        echo "ok $n # SKIP fuzz_$name: not built (configure found no compiler with -fsanitize=fuzzer, e.g. clang and libclang-rt-dev)"
        continue
    fi
    mkdir "$tmp/$name"
    # new inputs go to the first folder (a scratch one), never into the seeds
    if "$harness" -max_total_time="$NNLAB_FUZZ_SECONDS" -seed=1 -timeout=10 -rss_limit_mb=1024 \
        -malloc_limit_mb=256 -print_final_stats=1 -artifact_prefix="$NNLAB_FUZZ_DIR/crash-$name-" \
        "$tmp/$name" "$top_srcdir/tests/fuzz/corpus/$name" >"$tmp/log" 2>&1
    then
        echo "ok $n - fuzz_$name: $(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/log") inputs in ${NNLAB_FUZZ_SECONDS} s, no fault"
    else
        failed=$((failed + 1))
        echo "not ok $n - fuzz_$name found a fault (input kept as $NNLAB_FUZZ_DIR/crash-$name-*)"
        grep -v '^#' "$tmp/log" | tail -n 25 | sed 's/^/# /'
    fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
