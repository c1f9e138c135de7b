#!/bin/sh
# tests/cli_lesson_gpu.sh - every shipped lesson with a GPU here: on the
# emulated GPU (NNLAB_GPU_EMULATION=1: the CUDA code run on the CPU) each
# runs to its end, nnlab's GPU lanes are measured, and nothing is predicted
# for a GPU profile: a figure no job measures (the framework's lanes, a
# step's parts, a Jacobian's rows) is predicted from this GPU's own
# calibration and says so. tests/cli_lesson.sh runs them without a GPU, and
# one race on the emulated GPU under the sanitizers too; this whole run (a
# sweep of 18 points among them, half a minute) is the plain build's only.
# Jobs run 2 steps each. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}" "${top_builddir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
ranks_env                        # why-two step 8 runs MPI ranks (cli-lib.sh)

export XDG_CACHE_HOME="$tmp/cache" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config"
export NNLAB_PYTHON=/nonexistent NNLAB_GPU_EMULATION=1
if ! "$NNLAB" devices 2>/dev/null | grep -q '^gpu  *available'; then
    echo "1..0 # SKIP the emulated GPU is not built"
    exit 0
fi
"$top_builddir/tests/cal_install" calibration-cpu-dev2.txt 2>"$tmp/err" || {
    not_ok "the recorded calibration installed"; echo "1..$n"; exit 1; }

no_grep_ok() { if grep -q -E -e "$3" "$2"; then echo "# '$3' found in $2:"; grep -E -e "$3" "$2" | sed 's/^/#   /'; not_ok "$1"; else ok "$1"; fi; }

for lesson in why-gpu-slower wide-table jacobian why-two; do
    check "$lesson on the emulated GPU: to its end" 0 "$NNLAB" lesson "$lesson" --steps 2 --warmup 0
    last=$(grep -c '^== step ' "$tmp/out")
    grep_ok "$lesson: all $last steps shown" "$tmp/out" "^== step $last/$last"
    no_grep_ok "$lesson: nothing predicted for a GPU profile" "$tmp/out" "predicted for "
    no_grep_ok "$lesson: no figure without its source" "$tmp/out" " [mu]*s/step *$"
    no_grep_ok "$lesson: nnlab's GPU lanes measured" "$tmp/out" "^  gpu (graph|eager) +[0-9.]+ [mu]?s/step +predicted"
    if [ "$lesson" = why-gpu-slower ]; then   # its steps 4 and 5: nnlab eager, then graph
        grep_ok "$lesson: nnlab's pair measured on both sides" "$tmp/out" \
            ">> GPU [0-9.]*x [a-z]* <<  (nnlab's own code at batch 4: CPU measured, GPU measured)"
    fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
