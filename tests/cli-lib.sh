# tests/cli-lib.sh - the TAP helpers of the CLI tests (tests/cli.sh,
# tests/cli_jacobian.sh), sourced by them. The caller sets n=0 failed=0 and
# $tmp; a case's output goes to $tmp/out and $tmp/err.
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/err" "$tmp/out" 2>/dev/null | head -n 20; }
# check NAME EXPECTED_STATUS COMMAND...: runs the command, output to $tmp/out and $tmp/err
check() {
    name=$1 want=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
    if [ "$got" -eq "$want" ]; then ok "$name"; else echo "# exit $got, wanted $want"; not_ok "$name"; fi
}
# grep_ok NAME FILE PATTERN
grep_ok() { if grep -q -e "$3" "$2"; then ok "$1"; else echo "# no '$3' in $2"; not_ok "$1"; fi; }
one_line_err() { if [ "$(wc -l <"$tmp/err")" -eq 1 ]; then ok "$1"; else not_ok "$1"; fi; }
# skip_without_mpi: after a probe run whose stderr is $tmp/err, ends the
# whole script as TAP's "1..0 # SKIP" (exit 0: the TAP driver counts 77 as
# an error) where nnlab was built without MPI or mpirun is not on PATH.
skip_without_mpi() {
    if grep -q "built without MPI" "$tmp/err"; then
        echo "1..0 # SKIP nnlab was built without MPI (libopenmpi-dev)"
        exit 0
    fi
    if ! command -v mpirun >/dev/null 2>&1; then
        echo "1..0 # SKIP mpirun is not on PATH (openmpi-bin)"
        exit 0
    fi
}
# ranks_env: what a test of MPI ranks needs. CI runs as root, which mpirun
# refuses unless told. Under AddressSanitizer (setup.sh check's second
# build) the ranks run with its address and UB checks but without its leak
# check: Open MPI's own allocations (libmpi, its plugins, unloaded by the
# exit) stay unfreed at exit in every rank, which LeakSanitizer reports as
# leaks of modules it can no longer name; nnlab's own leaks are checked by
# the plain jobs' tests.
ranks_env() {
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
    if ldd "$NNLAB" 2>/dev/null | grep -q libasan; then
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; export ASAN_OPTIONS
    fi
}
