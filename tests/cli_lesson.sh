#!/bin/sh
# tests/cli_lesson.sh - `nnlab lesson` headless (src/cli/cli_lesson.c,
# nnlab/lesson.h, nnlab/lesson_report.h), without a GPU: every shipped
# lesson runs to its end with answers given and writes its handout, which a
# parser checks (every step present, every figure labelled measured or
# predicted with a source that says the same, every chart an SVG that
# parses); on the recorded 2-core CPU calibration (tests/cal_install, as
# tests/cli_ways.sh) the lessons give the write-ups' verdicts, for the T4
# and the GeForce 940M; each bad lesson file is refused with one line
# naming the file, the step and the key; the user's folder comes first.
# Jobs run 2 steps each. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}" "${top_builddir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
ranks_env                        # why-two step 8 runs MPI ranks (cli-lib.sh)
fix="$top_srcdir/tests/fixtures"

export XDG_CACHE_HOME="$tmp/cache" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config"
# the framework way predicted, as the verdicts below expect, even where a python3 imports torch
export NNLAB_PYTHON=/nonexistent
if ! "$top_builddir/tests/cal_install" calibration-cpu-dev2.txt 2>"$tmp/err"; then
    not_ok "the recorded calibration installed"
    echo "1..$n"; exit 1
fi
ok "the recorded calibration installed"
quick="--steps 2 --warmup 0"

# ---- the list --------------------------------------------------------------------------
check "--list" 0 "$NNLAB" lesson --list
for l in why-gpu-slower wide-table jacobian why-two; do
    grep_ok "--list: $l" "$tmp/out" "^$l "
done

# ---- the handout's parser ---------------------------------------------------------------
# (tests/lesson_handout.py: shared with tests/tui_lesson.sh)

# ---- every shipped lesson to its end, answers given, its handout parsed -------------------
step() { sed -n "/^== step $1\//,/^== step $(($1 + 1))\//p" "$2"; }   # step K's lines of FILE
run_lesson() {   # NAME ANSWERS STEPS [options]  (check sets $name: not used here)
    lname=$1 answers=$2 steps=$3; shift 3
    check "$lname: runs to its end" 0 "$NNLAB" lesson "$lname" --answers "$answers" $quick --handout "$tmp/h-$lname" "$@"
    last=$(grep -c '^== step ' "$tmp/out")
    [ "$last" -eq "$steps" ] && ok "$lname: all $steps steps printed" || not_ok "$lname: all $steps steps printed ($last)"
    cp "$tmp/out" "$tmp/$lname.out"
    if rows=$(python3 "$top_srcdir/tests/lesson_handout.py" "$tmp/h-$lname/$lname.md" "$steps" 2>"$tmp/err"); then
        ok "$lname: the handout parses, every figure labelled ($rows figures)"
    else
        not_ok "$lname: the handout parses, every figure labelled"
    fi
}
run_lesson why-gpu-slower clgygn 10
run_lesson wide-table gglgc 6
run_lesson jacobian ccg 6
run_lesson why-two nyynyynn 8   # step 8 measured: MPI's ranks here (CI installs them)
check "an unanswered question: said" 0 "$NNLAB" lesson jacobian
grep_ok "an unanswered question: none given" "$tmp/out" "answer -: none given"
out="$tmp/jacobian.out"
step 1 "$out" >"$tmp/s"
grep_ok "jacobian 1: rows at val 100, the GPU slower as PyTorch runs it" "$tmp/s" \
    '>> GPU [0-9.]*x slower <<  (framework eager, rows at val 100: CPU predicted from this CPU.s calibration, GPU predicted for T4)'
grep_ok "jacobian 1: agrees with the write-up" "$tmp/s" "the write-up at val 100: CPU 11.1 s, GPU 19.5 s (the GPU 1.76x slower): this machine agrees"
grep_ok "jacobian 1: what multiplies zeros" "$tmp/s" "99% of these FLOPs multiply zeros"
grep_ok "jacobian 1: a whole Jacobian in seconds" "$tmp/s" "cpu framework eager rows  *[0-9.]* s  predicted"
step 5 "$out" >"$tmp/s"
grep_ok "jacobian 5: rows at val 1000, the GPU faster" "$tmp/s" '>> GPU [0-9.]*x faster <<  (framework eager, rows at val 1000'
grep_ok "jacobian 5: the answer g checked right" "$tmp/s" "answer g (GPU): right"

# ---- the write-ups' verdicts on the recorded calibration ------------------------------------
out="$tmp/why-gpu-slower.out"
step 1 "$out" >"$tmp/s"
grep_ok "why-gpu-slower 1: the small net's GPU slower, as a framework runs it" "$tmp/s" \
    '>> GPU [0-9.]*x slower <<  (as a framework runs it at batch 4: CPU predicted from this CPU.s calibration, GPU predicted for T4)'
grep_ok "why-gpu-slower 1: agrees with the write-up" "$tmp/s" "the write-up at batch 4: CPU 50 s, GPU 94 s (the GPU 1.88x slower): this machine agrees"
grep_ok "why-gpu-slower 1: the answer c checked right" "$tmp/s" "answer c (CPU): right, this machine says c (CPU)"
grep_ok "why-gpu-slower 1: nnlab's CPU lane measured" "$tmp/s" "cpu nnlab .* measured$"
step 2 "$out" >"$tmp/s"
grep_ok "why-gpu-slower 2: launches the largest part of the GPU's step" "$tmp/s" '>> launches [0-9]*% of the parts <<'
grep_ok "why-gpu-slower 2: every part predicted for T4" "$tmp/s" "read-back .*predicted for T4"
step 7 "$out" >"$tmp/s"
grep_ok "why-gpu-slower 7: the big net's GPU faster" "$tmp/s" '>> GPU [0-9.]*x faster <<  (as a framework runs it at batch 32'
grep_ok "why-gpu-slower 7: agrees with the write-up" "$tmp/s" "the write-up at batch 32: CPU 390 s, GPU 224 s .*: this machine agrees"
grep_ok "why-gpu-slower 7: the answer g checked right" "$tmp/s" "answer g (GPU): right"
step 8 "$out" >"$tmp/s"
grep_ok "why-gpu-slower 8: PyTorch not here, said" "$tmp/s" "PyTorch: not measured on this machine (.*): the framework way stays predicted"
out="$tmp/wide-table.out"
for k in 1 4; do
    step $k "$out" >"$tmp/s"
    grep_ok "wide-table $k: the GPU faster at batch 1024" "$tmp/s" '>> GPU [0-9.]*x faster <<  (as a framework runs it at batch 1024'
    grep_ok "wide-table $k: agrees with the write-up" "$tmp/s" ": this machine agrees"
done
no_gpu_measured() { if grep -q "gpu .*[0-9] us/step  measured" "$1"; then not_ok "$2"; else ok "$2"; fi; }
no_gpu_measured "$tmp/why-gpu-slower.out" "no GPU figure says measured without a GPU"

# the same verdicts predicted for the GeForce 940M (the races alone: tests/fixtures/lesson-verdicts.ini)
check "the write-ups' races for the GeForce 940M" 0 "$NNLAB" lesson "$fix/lesson-verdicts.ini" $quick \
    --gpu-profile geforce-940m --answers g
grep_ok "a question without expect: a show of hands, not checked" "$tmp/out" \
    "answer g (GPU): nothing to check it against (a show of hands)"
for pair in 1:slower:4 2:faster:32 3:faster:1024 4:faster:1024; do
    k=${pair%%:*} rest=${pair#*:}; dir=${rest%%:*} batch=${rest#*:}
    step "$k" "$tmp/out" >"$tmp/s"
    grep_ok "940M race $k: the GPU $dir at batch $batch" "$tmp/s" \
        ">> GPU [0-9.]*x $dir <<  (as a framework runs it at batch $batch: .*GPU predicted for GeForce 940M)"
done
grep_ok "940M: a step without a question has no answer line" "$tmp/out" "^== step 4/4"
no_gpu_measured "$tmp/out" "940M: no GPU figure says measured"

# ---- why-two: N ranks against one, every figure predicted -----------------------------------
out="$tmp/why-two.out"
# each step's headline and label, and the answer the report expects (every answer given is its)
for row in "1:2:4:PCIe 4.0 x16:after:n" "2:2:1024:PCIe 4.0 x16:after:y" "3:4:256:InfiniBand HDR:during:y" \
           "4:4:32:InfiniBand HDR:after:n" "5:4:32:InfiniBand HDR:during:y" "6:8:32:NVLink 4:after:y" \
           "7:8:32:PCIe 4.0 x16:after:n"; do
    ifs=$IFS; IFS=:; set -- $row; IFS=$ifs
    k=$1 ranks=$2 batch=$3 link=$4 when=$5 key=$6
    step "$k" "$out" >"$tmp/s"
    grep_ok "why-two $k: $ranks ranks at $batch over $link, predicted" "$tmp/s" \
        ">> $ranks ranks: [0-9.]*x one rank <<  ($ranks GPU ranks at batch $batch each over $link, the all-reduce $when backward: predicted for T4)"
    grep_ok "why-two $k: the answer $key checked right" "$tmp/s" "answer $key ([a-z]*): right, this machine says $key"
    grep_ok "why-two $k: one rank at the global batch" "$tmp/s" "one rank at batch $((ranks * batch)) .* predicted for T4$"
done
speed() { step "$1" "$out" | sed -n 's/.*>> [0-9]* ranks: \([0-9.]*\)x one rank <<.*/\1/p'; }
faster() { python3 -c "import sys; sys.exit(0 if float('$2') > float('$1') else 1)"; }
faster "$(speed 1)" "$(speed 2)" && ok "why-two: a larger batch pays better ($(speed 1)x -> $(speed 2)x)" ||
    not_ok "why-two: a larger batch pays better ($(speed 1)x -> $(speed 2)x)"
faster "$(speed 4)" "$(speed 5)" && ok "why-two: the overlap pays better ($(speed 4)x -> $(speed 5)x)" ||
    not_ok "why-two: the overlap pays better ($(speed 4)x -> $(speed 5)x)"
faster "$(speed 7)" "$(speed 6)" && ok "why-two: NVLink pays better than PCIe ($(speed 6)x, $(speed 7)x)" ||
    not_ok "why-two: NVLink pays better than PCIe ($(speed 6)x, $(speed 7)x)"
for k in 1 2 3 4 5 6 7; do step "$k" "$out"; done >"$tmp/s"
if grep -q "measured" "$tmp/s"; then not_ok "why-two 1-7: no figure says measured"; else ok "why-two 1-7: no figure says measured"; fi
# step 8: two CPU ranks here against one rank, measured, every figure so labelled
step 8 "$out" >"$tmp/s"
grep_ok "why-two 8: 2 ranks at 64 here, measured" "$tmp/s" \
    ">> 2 ranks: [0-9.]*x one rank <<  (2 CPU ranks at batch 64 each on this machine, against one rank at batch 128: measured ("
grep_ok "why-two 8: the ranks' step measured" "$tmp/s" "^  2 ranks' step .* measured$"
grep_ok "why-two 8: one rank at 128 measured" "$tmp/s" "^  one rank at batch 128 .* measured$"
grep_ok "why-two 8: the all-reduce measured" "$tmp/s" "^  the all-reduce waited for .* measured$"
if grep -q "predicted" "$tmp/s"; then not_ok "why-two 8: nothing predicted"; else ok "why-two 8: nothing predicted"; fi
# the answer checked against the measurement, or too close to call
grep_ok "why-two 8: the answer checked" "$tmp/s" "answer n (no): \(right\|this machine says y\|.*too close to call\)"
# without mpirun the step says so and the lesson fails, its other steps run
PATH=/nonexistent "$NNLAB" lesson why-two --answers nyynyynn $quick >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ "$rc" -ne 0 ] && grep -q "mpirun is not on PATH" "$tmp/err" && [ "$(grep -c '^== step ' "$tmp/out")" -eq 8 ]; then
    ok "why-two without mpirun: step 8 says why, exit $rc"
else echo "# exit $rc"; not_ok "why-two without mpirun: step 8 says why"; fi
grep_ok "why-two: the link's figures and their source" "$out" "NVLink 4: 450 GB/s each way, 0.4 us a hop (from its datasheet or standard)"
step 10 "$tmp/why-gpu-slower.out" >"$tmp/s"
grep_ok "why-gpu-slower 10: leads to why-two, two GPUs predicted" "$tmp/s" ">> 2 ranks: [0-9.]*x one rank <<  (2 GPU ranks at batch 32 each over PCIe 4.0 x16"
grep_ok "why-gpu-slower 10: the answer n checked right" "$tmp/s" "answer n (no): right"
# no link named: a GPU's default; way = graph priced as `nnlab explain --ranks` prices it
check "a ranks step without a link runs" 0 "$NNLAB" lesson "$fix/lesson-ranks-default.ini"
cp "$tmp/out" "$tmp/ranks-default.out"
step 1 "$tmp/ranks-default.out" >"$tmp/s"
grep_ok "no link named: a GPU's ranks over PCIe 4.0" "$tmp/s" ">> 2 ranks: [0-9.]*x one rank <<  (2 GPU ranks at batch 32 each over PCIe 4.0 x16, the all-reduce during backward"
lesson_us=$(step 2 "$tmp/ranks-default.out" | sed -n 's/^  4 ranks. step  *\([0-9.]*\) us.step.*/\1/p')
check "explain --ranks: the same four GPUs" 0 "$NNLAB" explain --preset mnist-mlp-1000 --device gpu --batch 32 \
    --ranks 4 --link nvlink3 --no-overlap --graph
explain_us=$(sed -n 's/^ *step: 4 ranks \([0-9.]*\) us .*/\1/p' "$tmp/out")
if [ -n "$lesson_us" ] && [ -n "$explain_us" ] &&
   python3 -c "import sys; sys.exit(0 if abs($lesson_us - $explain_us) <= 1 else 1)"; then
    ok "a ranks step's graph way priced as explain --ranks ($lesson_us us, $explain_us us)"
else not_ok "a ranks step's graph way priced as explain --ranks ('$lesson_us' us, '$explain_us' us)"; fi
# the CPU's default link (shm) found when the step runs: said where it is not there
cp -r "$top_srcdir/profiles" "$tmp/profiles" && rm -f "$tmp/profiles/links/shm.ini"
check "the CPU's default link missing: the step fails (1)" 1 \
    env NNLAB_PROFILES_DIR="$tmp/profiles" "$NNLAB" lesson "$fix/lesson-ranks-cpu.ini"
grep_ok "the CPU's default link missing: the step says which" "$tmp/out" \
    "not run: \[step1\] link shm (the default): no link profile 'shm'"
grep_ok "the CPU's default link missing: said on stderr, the file named" "$tmp/err" \
    "lesson-ranks-cpu.ini: \[step1\] link shm (the default)"

# ---- a GPU here: the emulated one measures nnlab's GPU lane ---------------------------------
if NNLAB_GPU_EMULATION=1 "$NNLAB" devices 2>/dev/null | grep -q '^gpu  *available'; then
    NNLAB_GPU_EMULATION=1 check "a GPU here (emulated): the race runs" 0 "$NNLAB" lesson "$fix/lesson-emu.ini" $quick
    grep_ok "a GPU here: nnlab's GPU lane measured" "$tmp/out" "^  gpu graph  *[0-9.]* [mu]*s/step  measured$"
    grep_ok "a GPU here: the headline says both measured" "$tmp/out" "(nnlab's own code at batch 4: CPU measured, GPU measured)"
    grep_ok "a GPU here: the framework's GPU predicted from its calibration" "$tmp/out" \
        "gpu framework .* predicted from this GPU's calibration"
else
    n=$((n + 1)); echo "ok $n # SKIP a GPU here: the emulated GPU is not built"
fi

# ---- refusals, one line each --------------------------------------------------------------
refused() {   # FIXTURE PATTERN
    check "lesson-bad-$1: refused (2)" 2 "$NNLAB" lesson "$fix/lesson-bad-$1.ini"
    one_line_err "lesson-bad-$1: one line"
    grep_ok "lesson-bad-$1: names the file, the step and the key" "$tmp/err" "lesson-bad-$1.ini: $2"
}
refused missing-text '\[step1\] text: missing'
refused missing-kind '\[step1\] kind: missing'
refused kind "\[step1\] kind: unknown kind 'relay'"
refused preset "\[step1\] preset: unknown preset 'lenet'"
refused batch '\[step1\] batch: 60000: out of range'
refused question '\[step1\] answers: missing: a question needs answers'
refused gpu-switch '\[step1\] graph: a GPU switch on the cpu device'
refused expect '\[step1\] answers: no answer labelled GPU (expect = faster'
refused gap '\[step2\]: missing, but \[step3\] exists'
refused key '\[step1\] colour: unknown key'
refused header '\[lesson\] title: missing'
refused profile "\[step1\] gpu_profile: no GPU profile 'tpu-v9'"
refused jacobian-preset '\[step1\] preset: lenet-cifar10 is not a Jacobian preset'
refused jacobian-val '\[step1\] val: 0: out of range'
refused ranks-count '\[step1\] ranks: 1: out of range (2..4096)'
refused ranks-link "\[step1\] link: no link profile 'token-ring'"
refused ranks-overlap "\[step1\] overlap: unknown overlap 'sometimes'"
refused ranks-on-race '\[step1\] ranks: only a ranks step has ranks (this one is a race)'
refused ranks-pays '\[step1\] expect: pays: not for this kind of step'
refused ranks-answers '\[step1\] answers: no answer labelled yes (expect = pays'
refused ranks-way '\[step1\] way: a GPU way on the cpu device'
refused ranks-measure-gpu '\[step1\] measure: ranks measured here run on the CPU'
refused ranks-measure-link "\[step1\] link: ranks measured here sum over this machine's shared memory"
refused ranks-measure-race '\[step1\] measure: only a ranks step has measure (this one is a race)'
check "--answers with a key no question offers: refused" 2 "$NNLAB" lesson why-gpu-slower --answers cx
one_line_err "--answers refused in one line"
grep_ok "--answers: names the question and its keys" "$tmp/err" "'x' for question 2 (\[step2\]): not one of its keys (l, c, r, w, or - for none)"
check "more answers than questions: refused" 2 "$NNLAB" lesson jacobian --answers cccc
check "an unknown lesson: refused" 2 "$NNLAB" lesson no-such-lesson
grep_ok "an unknown lesson: where it looked" "$tmp/err" "lesson 'no-such-lesson' not found"
check "no lesson named: refused" 2 "$NNLAB" lesson

# ---- the user's folder first ----------------------------------------------------------------
mkdir -p "$XDG_DATA_HOME/nnlab/lessons"
sed 's/^title = .*/title = "My own jacobian lesson"/' "$top_srcdir/lessons/jacobian.ini" \
    >"$XDG_DATA_HOME/nnlab/lessons/jacobian.ini"
check "--list with the user's lesson" 0 "$NNLAB" lesson --list
grep_ok "--list: the user's lesson, marked" "$tmp/out" "/nnlab/lessons/jacobian.ini (yours)"
grep_ok "--list: the shipped one hidden" "$tmp/out" "jacobian.ini (hidden by your lesson of the same name)"
check "the user's lesson runs by its name" 0 "$NNLAB" lesson jacobian
grep_ok "the user's lesson is the one run" "$tmp/out" "My own jacobian lesson"

echo "1..$n"
[ "$failed" -eq 0 ]
