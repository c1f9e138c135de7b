#!/bin/sh
# tests/tui.sh - the ncurses lab as a user drives it, in a detached tmux
# session on its own server socket: the setup screen, calibrating the CPU on
# first use (progress, then the dashboard, then the cache file), a run with
# its progress bar and loss chart moving, the Explain panel (toggled in the
# chart's place, then beside it on a wide terminal), pause, resizing (and
# "too small"), the help, saving a preset, a small batch sweep with each
# point's regime and its explanation, quitting while a job runs, and the
# terminal given back. Speaks TAP. Needs NNLAB and NNLAB_PRESETS_DIR, which
# `make check` exports. Every wait polls with a timeout; no fixed sleeps.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
# the whole script gives up after 240 s (tui-lib.sh's waits stop there)
tui_begin test 240
# json_ok NAME FILE: python3's parser takes it (skipped without python3)
json_ok() {
    if ! command -v python3 >/dev/null 2>&1; then ok "$1 # SKIP no python3"
    elif python3 -m json.tool "$2" >/dev/null 2>&1; then ok "$1"; else not_ok "$1"; fi
}
# In a sanitizer build a report must end the lab (and fail the exit-status
# check): its text goes to the pane, where no log would show it.
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1"
export UBSAN_OPTIONS

# wait_change FILE ROWS [SECONDS]: until rows ROWS (sed range) differ from FILE
wait_change() {
    end=$(($(date +%s) + ${3:-10}))
    [ "$end" -gt "$deadline" ] && end=$deadline
    while :; do
        cap
        sed -n "$2p" "$tmp/screen" >"$tmp/now"
        cmp -s "$1" "$tmp/now" || return 0
        [ "$(date +%s)" -ge "$end" ] && return 1
        sleep 0.1
    done
}
rows() { cap; sed -n "$1p" "$tmp/screen" >"$2"; }
# child_of PID: the first process whose parent is PID (the pane's shell runs the lab)
child_of() {
    for d in /proc/[0-9]*; do
        [ "$(awk '{ print $4 }' "$d/stat" 2>/dev/null)" = "$1" ] && { echo "${d#/proc/}"; return; }
    done
}

mkdir -p "$XDG_CONFIG_HOME/nnlab/presets"
printf '[preset]\nname = "broken"\n[train]\nbatch = many\n' >"$XDG_CONFIG_HOME/nnlab/presets/broken.ini"
T -f "$tmp/tmux.conf" new-session -d -s lab -x 100 -y 30 \
    "'$NNLAB'; echo \"nnlab exited with status \$?\"; exec sleep 300" || { echo "1..0 # SKIP tmux cannot start"; exit 0; }

# --- setup ------------------------------------------------------------------
expect "the lab opens on the setup screen" "Presets \([0-9]+\)"
expect "a broken preset is listed as broken" "  broken +broken"
keys Home
expect "selected, it shows its error" "This preset does not load"
select_preset mnist-mlp-128
expect "mnist-mlp-128 is selected" "> mnist-mlp-128 "
expect "its network summary: layers, parameters, FLOPs" "linear 784->128.*100.5k"
expect "the data it would use" "data +(Fashion-MNIST \(real|synthetic 1x28x28)"
expect "an unavailable device is shown with its reason" "gpu +(unavailable: .|available)"
if grep -q -E "gpu +unavailable: ." "$tmp/screen"; then have_gpu=0; else have_gpu=1; fi
# the first run of the session calibrates the CPU first, with a progress bar
first_use_calibrates() {
    expect "no calibration yet: Enter calibrates the CPU first" "Calibrating cpu \(first use\)" 10
    expect "with a progress bar and what it measures" "now: [a-z]" 10
    expect "and its time, elapsed<remaining" "% [0-9][0-9]:[0-9][0-9]<([0-9:]+|\?)" 10
}
expect "the GPU switches are marked GPU only" "CUDA graph +\[.\] GPU only"
keys Tab
expect "Tab moves to the settings; the device is the CPU" ">Device +cpu \(OpenBLAS\)"
if grep -q -E "gpu +unavailable: ." "$tmp/screen"; then
    keys Right Right Right
    expect "CPU and GPU side by side is marked unavailable, a predicted race offered" \
        ">Device +cpu \+ gpu \(predicted\)"
    keys Enter
    first_use_calibrates             # the predicted race calibrates the CPU it races
    expect "without a GPU the lab races a GPU predicted for T4" "gpu graph\* .*predicted for T4" 60
    expect "and the framework way on both devices, predicted" "gpu fw\* .*predicted for T4" 3
    keys Escape
    wait_for "Cancel it and go back" 3 && keys y
    expect "back to setup after the predicted race" "Presets \([0-9]+\)" 10
    keys Left Left Left
else
    ok "CPU and GPU side by side # SKIP a GPU is available"
    ok "without a GPU the lab races a predicted one # SKIP a GPU is available"
    ok "back to setup # SKIP a GPU is available"
fi
expect "the memory a run needs, and what is available" "memory +needs ~[0-9]+ [KMG]B of [0-9.]+ [MGT]B available"
field "Steps" && keys 2 0 0 0 0 Enter   # (field: the list of settings grows)
expect "a step count is typed into its field" ">Steps +20000"
expect "the Enter that confirms it starts nothing" "Steps set: Enter or r runs"
grep_screen "still on the setup screen" "Presets \("
keys Up 1 . 5 Enter
expect "a typed value that is not a whole number is refused, with the range" "Epochs: '1\.5' is not a whole number: type 1\.\.100000"
keys Enter
if grep -q "Presets (" "$tmp/screen" && ! grep -q "Calibrating" "$tmp/screen"; then ok "Enter on a refused value starts nothing"
else not_ok "Enter on a refused value starts nothing"; fi
keys Escape
# the details say the rate the run will use, not the preset's
focus_field "Learning rate" && keys 0 . 0 1 Enter
expect "a learning rate set: the details say it, and the preset's" "train +cross-entropy, Adam lr 0\.01 \(preset: 0\.001\)"
keys 0 . 0 0 1 Enter
expect "set back: the preset's rate alone" "train +cross-entropy, Adam lr 0\.001 *│"

# --- first use: calibrating, then the run --------------------------------------
regime="(overhead|memory|compute)-bound"
keys Enter
[ "$have_gpu" -eq 1 ] && first_use_calibrates   # without a GPU: at the predicted race above
expect "Enter starts the run: the dashboard" "Job ─|Job -" 60
cal_file="$XDG_CACHE_HOME/nnlab/calibration-cpu.txt"
if [ -s "$cal_file" ]; then ok "the calibration is cached"; else not_ok "the calibration is cached"; fi
cal_sum=$(cksum <"$cal_file" 2>/dev/null)
if grep -q "Calibrating" "$tmp/screen"; then not_ok "the calibration box is gone"; else ok "the calibration box is gone"; fi
expect "the job is running with a progress bar" "cpu .*% (epoch|ep) [0-9]+/[0-9]+ +(step )?[0-9]+/20000 .*running" 20
rows 22 "$tmp/job1"
if wait_change "$tmp/job1" 22 10; then ok "the progress bar advances"; else not_ok "the progress bar advances"; fi
rows 2,19 "$tmp/chart1"
if wait_change "$tmp/chart1" 2,19 10; then ok "the loss chart advances"; else not_ok "the loss chart advances"; fi
expect "the phases of a step are shown" "phases .*copy [0-9]+ +fwd [0-9]+ +bwd [0-9]+"
expect "the machine panel shows CPU use per core" "CPU +0 \["

# --- the Explain panel -------------------------------------------------------------
expect "the status row offers e at 100 columns" "e explain" 5
keys e
expect "e shows the Explain panel in the chart's place" "Explain \(e: back to the chart\)" 5
expect "it names the regime of the job" "cpu, batch 32: $regime" 10
expect "it gives the predicted step" "predicted [0-9.]+ us/step" 5
expect "beside the measured one" "measured +[0-9.]+ us/step \([0-9.]+x the model\)" 10
expect "with why" "^│why: " 5
expect "and advice" "^│advice: " 5
keys e
expect "e again brings the chart back" "─ loss ─|- loss -" 5
expect "its times: tqdm's elapsed<remaining, Keras's per step" "[0-9][0-9]:[0-9][0-9]<[0-9:]+ +[0-9]+(s|ms|us)/step" 5
expect "the validation accuracy has a chart beside the loss" "─ loss ─.*┐┌─ val accuracy % |- loss -.*- val accuracy % " 5
keys s
expect "s smooths the training loss, and the chart says so" "step, smoothed \(EMA 0\.6\)" 5
keys s
# the loss box's title is there smoothed or raw: wait for the word to go (a busy machine
# draws the second s a frame or two later)
expect "s again shows it raw" "─ loss ─|- loss -" 5
i=0
while grep -q "smoothed" "$tmp/screen" && [ $i -lt 20 ]; do sleep 0.25; cap; i=$((i + 1)); done
if grep -q "smoothed" "$tmp/screen"; then not_ok "no word of smoothing once raw"; else ok "no word of smoothing once raw"; fi
keys x
expect "x exports the run, saying where" "exported .*/data/nnlab/exports/mnist-mlp-128-run-[0-9-]+\.\{csv,json,svg\}" 5
run_csv=$(ls "$XDG_DATA_HOME"/nnlab/exports/mnist-mlp-128-run-*.csv 2>/dev/null | head -n 1)
if [ -n "$run_csv" ] && head -n 1 "$run_csv" | grep -q '^device,kind,epoch,step,time_s,seconds,train_loss,val_loss,val_accuracy,way,source,us_per_step$' &&
   grep -q '^cpu,loss,1,.*,nnlab,measured,$' "$run_csv"; then ok "the run's CSV has its loss points, each with its way"; else not_ok "the run's CSV has its loss points, each with its way"; fi
json_ok "the run's JSON parses" "${run_csv%.csv}.json"
if grep -q '"device": "cpu", "way": "nnlab"' "${run_csv%.csv}.json" && grep -q '"ratios": \[\]' "${run_csv%.csv}.json"; then
    ok "the run's JSON says the job's way (and a single job has no pairs)"
else not_ok "the run's JSON says the job's way (and a single job has no pairs)"; fi
keys p
expect "p pauses" "paused│|paused\|" 10
rows 22 "$tmp/job1"
wait_change "$tmp/job1" 22 1 && not_ok "a paused job stands still" || ok "a paused job stands still"

# --- resizing -------------------------------------------------------------------
T resize-window -t lab -x 120 -y 40
expect "a bigger terminal is redrawn" "Machine" 5
T resize-window -t lab -x 150 -y 40
expect "at 150 columns the Explain panel is beside the chart" "Explain: model vs measured" 5
expect "with the chart still there" "─ loss ─|- loss -" 5
expect "and the regime" "│cpu, batch 32: $regime" 5
T resize-window -t lab -x 60 -y 20
expect "below 80x24: terminal too small" "terminal too small: 60x20" 5
T resize-window -t lab -x 100 -y 30
expect "back at 100x30 the dashboard returns, still paused" "paused│|paused\|" 5
keys p
expect "p resumes" "running│|running\|" 10
keys q
expect "q asks while a job runs" "Quit and cancel it\?" 5
keys n
expect "n keeps it running" "running│|running\|" 5
keys c
expect "c cancels the run" "cancelled│|cancelled\|" 15
# the status row (the last line) ends the cancel it began
i=0
while [ $i -lt 30 ] && ! tail -n 1 "$tmp/screen" | grep -q "cancelled after"; do sleep 0.1; cap; i=$((i + 1)); done
if tail -n 1 "$tmp/screen" | grep -q "cancelled after [0-9:]* (" && ! tail -n 1 "$tmp/screen" | grep -q "cancelling"
then ok "the status row says the cancel ended"; else not_ok "the status row says the cancel ended"; fi
keys Escape
expect "Esc goes back to setup" "Presets \([0-9]+\)" 10

# --- help ----------------------------------------------------------------------------
keys '?'
expect "? opens the help" "Keys \(PgDn scrolls, any other key closes\)" 5
keys x
# the setup screen shows around the help: wait for the help itself to go
i=0
while wait_for "any other key closes" 0 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if grep -q "any other key closes" "$tmp/screen"; then not_ok "any other key closes the help"; else ok "any other key closes the help"; fi

# --- save a preset -----------------------------------------------------------------------
keys s
expect "s asks for a name, not the shipped preset's own" "Name: mnist-mlp-128-mine_" 5
keys BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace \
    BSpace BSpace BSpace BSpace
keys -l 'my test/preset'
expect "the name is sanitised to a file name" "file: .*/nnlab/presets/my-test-preset\.ini" 5
keys Enter
expect "the preset is saved" "saved my-test-preset as" 5
expect "it is in the list at once" "> my-test-preset +yours" 5
f="$XDG_CONFIG_HOME/nnlab/presets/my-test-preset.ini"
if [ -f "$f" ] && grep -q '^name = "my-test-preset"' "$f"; then ok "the file is on disk"; else not_ok "the file is on disk"; fi
keys s
wait_for "Name: my-test-preset_" 5
keys Enter
expect "saving again asks before overwriting" "exists\. Overwrite it\?" 5
keys y
expect "y overwrites" "saved my-test-preset as" 5

# --- a small batch sweep ---------------------------------------------------------------------
focus_field "Sweep from" && keys 1 6 Enter
focus_field "Sweep to" && keys 3 2 Enter
focus_field "Sweep steps" && keys 3 Enter
expect "the sweep range is set" "Sweep to +32" 5
keys w
expect "w runs the sweep, without calibrating again" "Sweep: one bench job at a time" 10
# measured again, the file would be written again with other figures
if [ "$(cksum <"$cal_file" 2>/dev/null)" = "$cal_sum" ] && ! grep -q "Calibrating" "$tmp/screen"; then
    ok "the cached calibration is used"
else
    not_ok "the cached calibration is used"
fi
expect "the sweep finishes" "done: 2 of 2 points" 30
keys x
expect "x exports the sweep" "exported .*/nnlab/exports/my-test-preset-sweep-[0-9-]+\.\{csv,json,svg" 5
sweep_csv=$(ls "$XDG_DATA_HOME"/nnlab/exports/my-test-preset-sweep-*.csv 2>/dev/null | head -n 1)
if [ -n "$sweep_csv" ] && grep -q '^cpu,16,[0-9.]*,' "$sweep_csv" && grep -q '^cpu,32,' "$sweep_csv"
then ok "the sweep's CSV has its points"; else not_ok "the sweep's CSV has its points"; fi
json_ok "the sweep's JSON parses" "${sweep_csv%.csv}.json"
expect "the table has the measured points" "│ +16 +[0-9.]+k? " 5
expect "each point with its regime" "│ +16 +[0-9.]+k? +(ovh|mem|cmp|o|m|c) " 5
if [ "$have_gpu" -eq 0 ]; then
    expect "without a GPU, the sweep predicts it three ways" "[━╍]+ gpu gr\* ─" 5   # predicted: dashed
    expect "the framework way on both devices, beside nnlab's cpu" "batch +cpu +cpu fw\* +gpu fw\*" 5
    expect "the predicted columns have figures" "│ +16 +[0-9.]+[kM]? +[a-z]+ +[0-9.]+[kM]? +[0-9.]+[kM]? +│" 5
    expect "the framework pair's crossover, in the CLI's words" "│framework: gpu fw\* (overtakes|is faster|does not)" 5
    expect "the write-up's figure beside it" "│the write-up at batch 32: CPU 52 s" 5
    expect "the table says what * means" "\* predicted for T4" 5
else
    for t in "without a GPU, the sweep predicts it three ways" "the framework way on both devices, beside nnlab's cpu" \
             "the predicted columns have figures" "the framework pair's crossover, in the CLI's words" \
             "the write-up's figure beside it" "the table says what * means"; do
        ok "$t # SKIP a GPU is available"
    done
fi
keys e
expect "e explains the latest point" "cpu, batch 32: $regime" 5
expect "why and advice for it" "^│why: " 5
expect "with the calibration's age and quality" "calibration: measured [0-9]+ (s|min) ago, (good|noisy|contradictory)" 5
expect "at the preset's batch, the write-up beside the prediction" "write-up: 10 epochs at batch 32 = [0-9]+ steps: measured" 5
expect "with the write-up's figures" "CPU 52 s, GPU 123 s" 2
keys Up
expect "Up explains the point above" "cpu, batch 16: $regime" 5
if [ "$have_gpu" -eq 0 ]; then
    keys Right
    expect "Right: the cpu's framework way, a fitted form" "cpu framework \(predicted\), batch 16" 5
    keys Right
    expect "Right explains the predicted GPU's point" "gpu graph, batch 16: $regime \(predicted for T4\)" 5
    expect "its step is predicted for the profile" "predicted [0-9.]+ us/step for T4" 5
    expect "nothing of it was measured" "measured  nothing: no GPU here" 5
    expect "the three ways side by side" "T4: framework [0-9.]+, nnlab eager [0-9.]+, graph [0-9.]+ us/step" 5
    keys Left Left
else
    for t in "Right: the cpu's framework way, a fitted form" "Right explains the predicted GPU's point" \
             "its step is predicted for the profile" \
             "nothing of it was measured" "the three ways side by side"; do
        ok "$t # SKIP a GPU is available"
    done
fi
keys e
expect "e again brings the sweep chart back" "─ batch \(log2\)" 5
if [ "$have_gpu" -eq 0 ]; then
    # each "*" says what it covers: the GPU's for the profile (the CPU's framework way, from its
    # calibration, where the edge has room; the notes under the table say it in full)
    expect "the chart says its starred curves are predicted" "─ batch \(log2\); gpu \* predicted for T4(, cpu fw\* from this CPU)? ─" 5
else
    ok "the chart says its starred curves are predicted # SKIP a GPU is available"
fi
keys Escape
expect "Esc goes back to setup after the sweep" "Presets \([0-9]+\)" 10

# --- a learning rate far too large: the run stops at once, saying so ----------------------------
focus_field "Learning rate" && keys 1 e 3 0 Enter Enter
expect "a diverging run stops with a banner" "cpu: diverged at step 2: loss (nan|inf)" 20
expect "the banner says what to do, on a row of its own" "│lower the learning rate" 5
expect "its row says diverged" "DIVERGED: loss became" 5
keys Escape
expect "Esc goes back to setup after it" "Presets \([0-9]+\)" 10
focus_field "Learning rate" && keys 0 . 0 0 1 Enter

# --- a race of cpu and cpu-ref: both on this CPU, the title says how its cores were shared;
# charted by seconds; the ratio is of the two times shown ------------------------------------
focus_field "Steps" && keys 2 0 Enter
focus_field "Device" && keys Right Right Right Right
expect "cpu and cpu-ref side by side" ">Device +cpu \+ cpu-ref" 5
focus_field "Side by side" && keys Right
expect "racing" ">Side by side +race" 5
keys Enter
# (cpu-ref's first use calibrates it first: seconds, more in a sanitizer build)
expect "the race says they share the cores, and the threads each got" \
    "RACE sharing [0-9]+ cores: cpu on [0-9]+ threads?, cpu-ref on 1" 90
expect "two jobs are charted by seconds" "seconds of training" 10
expect "once both end, the ratio" "(cpu|cpu-ref) [0-9.]+x:" 60
# the ratio's two times are the two shown above it, and it is their quotient
if awk '
    /│cpu +[0-9.]+s / { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+s$/) { t["cpu"] = substr($i, 1, length($i) - 1); break } }
    /│cpu-ref +[0-9.]+s / { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+s$/) { t["cpu-ref"] = substr($i, 1, length($i) - 1); break } }
    match($0, /(cpu|cpu-ref) [0-9.]+x: [0-9.]+\/[0-9.]+/) {
        split(substr($0, RSTART, RLENGTH), w, /[ x:\/]+/); fast = w[1]; r = w[2]; slow_t = w[3]; fast_t = w[4]
        next
    }
    # a narrow summary puts the times on the row below the ratio
    want && match($0, /[0-9.]+\/[0-9.]+/) {
        split(substr($0, RSTART, RLENGTH), w, /\//); slow_t = w[1]; fast_t = w[2]; want = 0
    }
    match($0, /(cpu|cpu-ref) [0-9.]+x:( |│)/) {
        split(substr($0, RSTART, RLENGTH), w, /[ x:]+/); fast = w[1]; r = w[2]; want = 1
    }
    END {
        slow = fast == "cpu" ? "cpu-ref" : "cpu"
        if (t[fast] == "" || t[fast] != fast_t || t[slow] != slow_t) exit 1
        # each time is shown rounded to 0.01 s: the quotient of the true times lies
        # between these bounds (exact, not linearised: a fast time of 0.09 s is
        # 0.085 to 0.095), and the ratio is shown to 0.01
        lo = (slow_t - 0.005) / (fast_t + 0.005)
        hi = fast_t > 0.005 ? (slow_t + 0.005) / (fast_t - 0.005) : 1e30
        exit (r < lo - 0.006 || r > hi + 0.006)
    }' "$tmp/screen"; then ok "the ratio shown is the quotient of the times shown"; else not_ok "the ratio shown is the quotient of the times shown"; fi
keys Escape
expect "Esc goes back to setup after the race" "Presets \([0-9]+\)" 10
focus_field "Device" && keys Left Left Left Left
focus_field "Side by side" && keys Left
focus_field "Steps" && keys 2 0 0 0 0 Enter

# --- quit while running, with Ctrl-C ---------------------------------------------------------
keys Enter
expect "a second run starts" "running│|running\|" 20
keys C-c
expect "Ctrl-C asks while a job runs" "Quit and cancel it\?" 5
keys y
expect "y quits, with exit status 0" "nnlab exited with status 0" 15
if [ "$(T display -p -t lab '#{alternate_on}')" = 0 ]; then ok "the alternate screen is gone"; else not_ok "the alternate screen is gone"; fi
if grep -q "Presets\|Job" "$tmp/screen"; then not_ok "the terminal is back to the shell's text"; else ok "the terminal is back to the shell's text"; fi

# --- signals: a crash signal gives the terminal back too; SIGTERM ends the lab with the
# shell's code for it (128 + 15), the terminal restored
# signal_lab WINDOW SIGNAL STATUS WHAT: a lab in a window of its own gets SIGNAL
signal_lab() {
    T new-window -t lab -n "$1" "'$NNLAB'; echo \"nnlab exited with status \$?\"; exec sleep 300"
    T select-window -t "lab:$1"
    expect "$4: the lab starts" "Presets \([0-9]+\)"
    lab_pid=$(child_of "$(T display -p -t "lab:$1" '#{pane_pid}')")
    if [ -n "$lab_pid" ] && kill -s "$2" "$lab_pid"; then
        expect "$4: the lab ends with status $3" "nnlab exited with status $3" 10
        if [ "$(T display -p -t "lab:$1" '#{alternate_on}')" = 0 ]; then ok "$4: the alternate screen is gone"
        else not_ok "$4: the alternate screen is gone"; fi
    else
        not_ok "$4: the lab's process is found"
    fi
}
signal_lab crash ABRT 134 "SIGABRT, a crash"
signal_lab term TERM 143 "SIGTERM"

# --- a hostile presets folder: a 1 MB preset of 115,000 sections does not
# hold the lab's keys; a description's escapes are shown, never sent; a preset named
# to climb out of the export folder exports inside it -------------------------------------------
h="$tmp/hostile"
mkdir -p "$h/nnlab/presets"
awk 'BEGIN { for (i = 1; i <= 115000; i++) printf "[s%d]\n", i }' >"$h/nnlab/presets/many.ini"
T new-window -t lab -n hostile "env XDG_CONFIG_HOME='$h' '$NNLAB'; echo \"nnlab exited with status \$?\"; exec sleep 300"
T select-window -t lab:hostile
keys q
expect "a 1 MB preset in the folder: q quits at once" "nnlab exited with status 0" 3
# (exports go to $XDG_DATA_HOME/nnlab/exports: three levels up is $tmp)
{ printf '[preset]\nname = "../../../x/owned"\ndescription = "climbs"\n'
  sed -n '/^\[data\]/,$p' "$top_srcdir/presets/mnist-mlp-128.ini"; } >"$h/nnlab/presets/aaa.ini"
# escapes in a file name (drawn in the list) and in a description (refused, the error drawn)
cp "$h/nnlab/presets/aaa.ini" "$h/nnlab/presets/$(printf 'e\033]2;pwned\007')x.ini"
{ printf '[preset]\ndescription = "d\033]2;pwned\007\033[31mred"\n'
  sed -n '/^\[data\]/,$p' "$top_srcdir/presets/mnist-mlp-128.ini"; } >"$h/nnlab/presets/esc.ini"
T kill-window -t lab:hostile
T new-window -t lab -n hostile2 "env XDG_CONFIG_HOME='$h' '$NNLAB'; echo \"nnlab exited with status \$?\"; exec sleep 300"
T select-window -t lab:hostile2
expect "the lab opens with the hostile folder" "Presets \([0-9]+\)" 5
expect "a file name's escapes are shown as text" 'e\\x1B\]2;pwned\\x07x ' 5
keys Home Down Down
expect "a description's escapes are shown as text, in its error" 'd\\x1B\]2;pwned\\x07\\x1B\[31mred' 5
if [ "$(T display -p -t lab:hostile2 '#{pane_title}')" != pwned ]; then ok "the escapes did not set the title"
else not_ok "the escapes did not set the title"; fi
if T capture-pane -e -p -t lab:hostile2 | grep -q "$(printf '\033')]"; then not_ok "no OSC reaches the screen"
else ok "no OSC reaches the screen"; fi
keys Home
expect "the climbing preset is selected" "> aaa " 5
keys Enter
expect "the climbing preset runs" "Job ─|Job -" 30
keys x
expect "x exports it" "exported .*/data/nnlab/exports/" 5
if ls "$XDG_DATA_HOME"/nnlab/exports/*x_owned-run-*.json >/dev/null 2>&1; then ok "inside the export folder"
else not_ok "inside the export folder"; fi
if [ -e "$tmp/x" ]; then not_ok "nothing is written outside the export folder"; else ok "nothing is written outside the export folder"; fi
keys C-c
expect "Ctrl-C asks while it runs" "Quit and cancel it\?" 5
keys y
expect "y quits the hostile lab" "nnlab exited with status 0" 15

echo "1..$n"
[ "$failed" -eq 0 ]
