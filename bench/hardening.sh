#!/bin/sh
# bench/hardening.sh - the reproducers of hostile inputs and hung jobs,
# timed: every one must end with a one-line error (or a listing) in under
# 2 s and 200 MB (the preset loads under 0.5 s; `devices`, which maps the
# GPU module's libraries, within 20 MB of its own peak with no profiles). Not a unit test: timings
# depend on the machine, so this prints them and says PASS or FAIL against
# those bounds.
#
#   bench/hardening.sh [NNLAB]
#
#   1. a 1 MB preset of 115,000 one-line sections (`nnlab train --preset FILE`)
#   2. a 1 MB preset of 115,000 keys in one section
#   3. the first of them in the user presets folder (`nnlab presets`)
#   4. a gzip bomb: a 1 MB train-images-idx3-ubyte.gz whose header claims
#      0xFFFFFFFF images, then zeros (a gigabyte of them)
#   5. under ulimit -v, jobs whose threads' OpenBLAS buffers do not fit
#      (tabnet-regression at 700 MB, mnist-mlp-1000 at batch 1024 at 700 MB,
#      conv1d-regression at 800 MB, mnist-mlp-128 at 600 MB): these hung,
#      deaf to signals, until kill -9
#   6. SIGINT a tenth of a second into a gzip load (60,000 images; the
#      300,000 this once took are refused at the header now): the load,
#      or the training after it, stops at the cancel
# Round three (the issue of ~5,000 hostile inputs at main 29a588d):
#   7. under ulimit -v 120000 (OpenBLAS_NUM_THREADS unset, as a user's):
#      --version, a short train and presets hung (OpenBLAS's pool spinning
#      on a buffer that never fit; exit() waited for it)
#   8. 100,000 keys before any section (`train --preset`), and two such
#      files in the presets folder (`presets`): 4.4 s and 13 s
#   9. a 1 MB GPU profile of 115,000 sections (`explain --gpu-profile FILE`)
#      and in the profiles folder (`devices`): 8.3 s and 7.8 s
#  10. a real gzip bomb: a 1 MB train-images .gz whose header truthfully
#      claims 1.3 M blank images: trained to exit 0 after 20 s at 4.2 GB
#  11. junk after a gzip stream, `virtual_batch = +3`, `lr = 0x10`: each
#      accepted at load
# Peak memory is /usr/bin/time's maximum resident set size.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
nnlab=${1:-}
if [ -z "$nnlab" ]; then
    if [ -x "$here/../build/nnlab" ]; then nnlab=$here/../build/nnlab; else nnlab=nnlab; fi
fi
export NNLAB_PRESETS_DIR=${NNLAB_PRESETS_DIR:-$here/../presets}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

# timed NAME MAX_S MAX_MB COMMAND...: runs it, prints seconds, MB, its first
# line of stderr (or the listing's BROKEN line), and PASS or FAIL.
timed() {
    name=$1 max_s=$2 max_mb=$3; shift 3
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || true
    last=$(tail -n 1 "$tmp/time")       # after "Command exited with non-zero status N"
    secs=${last% *} kb=${last#* }
    mb=$((kb / 1024))
    verdict=PASS
    if awk "BEGIN { exit !($secs > $max_s) }" || [ "$mb" -gt "$max_mb" ]; then
        verdict=FAIL; failed=$((failed + 1))
    fi
    # its first line of stderr, else the listing's BROKEN line, else its
    # first line of output (--version, a listing with nothing broken)
    said=$( (cat "$tmp/err"; grep -m 1 BROKEN "$tmp/out" || true; head -n 1 "$tmp/out") | head -n 1 | cut -c1-200)
    [ -n "$said" ] || { verdict=FAIL; failed=$((failed + 1)); said="(no line)"; }
    printf '%-34s %6s s %5s MB  %s\n    %s\n' "$name" "$secs" "$mb" "$verdict" "$said"
}

awk 'BEGIN { for (i = 1; i <= 115000; i++) printf "[s%d]\n", i }' >"$tmp/sections.ini"
awk 'BEGIN { print "[train]"; for (i = 1; i <= 115000; i++) printf "k%d=1\n", i }' >"$tmp/keys.ini"
mkdir -p "$tmp/home/nnlab/presets"
cp "$tmp/sections.ini" "$tmp/home/nnlab/presets/many.ini"

mkdir "$tmp/bomb"
# IDX images header: magic 0x803, count 0xFFFFFFFF, 28 x 28; then zeros
{ printf '\000\000\010\003\377\377\377\377\000\000\000\034\000\000\000\034'
  head -c 1000000000 /dev/zero; } | gzip -9 >"$tmp/bomb/train-images-idx3-ubyte.gz"
printf '\000\000\010\001\377\377\377\377' | gzip >"$tmp/bomb/train-labels-idx1-ubyte.gz"
cp "$tmp/bomb/train-images-idx3-ubyte.gz" "$tmp/bomb/t10k-images-idx3-ubyte.gz"
cp "$tmp/bomb/train-labels-idx1-ubyte.gz" "$tmp/bomb/t10k-labels-idx1-ubyte.gz"

echo "nnlab: $nnlab; files: $(wc -c <"$tmp/sections.ini") and $(wc -c <"$tmp/keys.ini") bytes of preset, $(wc -c <"$tmp/bomb/train-images-idx3-ubyte.gz") bytes of gzip"
timed "115k sections (train --preset)" 0.5 200 "$nnlab" train --preset "$tmp/sections.ini" --steps 1
timed "115k keys (train --preset)" 0.5 200 "$nnlab" train --preset "$tmp/keys.ini" --steps 1
timed "115k sections in the folder (presets)" 0.5 200 env XDG_CONFIG_HOME="$tmp/home" "$nnlab" presets
timed "gzip bomb (train --data)" 2 200 "$nnlab" train --preset mnist-mlp-128 --steps 1 --data "$tmp/bomb"
# (sh -c: /usr/bin/time runs programs, not the shell's functions)
under_ulimit='ulimit -v "$0" && exec "$@"'
timed "ulimit -v 700000: tabnet-regression" 2 200 sh -c "$under_ulimit" 700000 "$nnlab" train --preset tabnet-regression --steps 2 --json
timed "ulimit -v 700000: mnist-mlp-1000 b1024" 2 200 sh -c "$under_ulimit" 700000 "$nnlab" train --preset mnist-mlp-1000 --batch 1024 --steps 2 --json
timed "ulimit -v 800000: conv1d-regression" 2 200 sh -c "$under_ulimit" 800000 "$nnlab" train --preset conv1d-regression --steps 2 --json
timed "ulimit -v 600000: mnist-mlp-128" 2 200 sh -c "$under_ulimit" 600000 "$nnlab" train --preset mnist-mlp-128 --steps 2 --json

mkdir "$tmp/slow"
# a consistent set of 60,000 blank images (the most a training split may
# claim: 300,000 are refused at the header now), a tenth of a second in
{ printf '\000\000\010\003\000\000\352\140\000\000\000\034\000\000\000\034'
  head -c 47040000 /dev/zero; } | gzip -1 >"$tmp/slow/train-images-idx3-ubyte.gz"
{ printf '\000\000\010\001\000\000\352\140'; head -c 60000 /dev/zero; } | gzip >"$tmp/slow/train-labels-idx1-ubyte.gz"
cp "$tmp/slow/train-images-idx3-ubyte.gz" "$tmp/slow/t10k-images-idx3-ubyte.gz"
cp "$tmp/slow/train-labels-idx1-ubyte.gz" "$tmp/slow/t10k-labels-idx1-ubyte.gz"
interrupt_after='"$@" & pid=$!; sleep 0.1; kill -INT "$pid"; wait "$pid"'
timed "SIGINT 0.1 s into a gzip load" 2 2000 sh -c "$interrupt_after" sh "$nnlab" train --preset mnist-mlp-128 --steps 1 --data "$tmp/slow"

# --- round three ---
timed "ulimit -v 120000: --version" 2 200 env -u OPENBLAS_NUM_THREADS sh -c "$under_ulimit" 120000 "$nnlab" --version
timed "ulimit -v 120000: train (synthetic)" 2 200 env -u OPENBLAS_NUM_THREADS sh -c "$under_ulimit" 120000 "$nnlab" train --preset mnist-mlp-128 --data synthetic --steps 3
timed "ulimit -v 120000: presets" 2 200 env -u OPENBLAS_NUM_THREADS sh -c "$under_ulimit" 120000 "$nnlab" presets

awk 'BEGIN { for (i = 0; i < 100000; i++) printf "k%d=1\n", i; print "[train]" }' >"$tmp/outside.ini"
mkdir -p "$tmp/home2/nnlab/presets"
cp "$tmp/outside.ini" "$tmp/home2/nnlab/presets/a.ini"
cp "$tmp/outside.ini" "$tmp/home2/nnlab/presets/b.ini"
timed "100k keys before any section (train)" 0.5 200 "$nnlab" train --preset "$tmp/outside.ini" --steps 1
timed "two such in the folder (presets)" 0.5 200 env XDG_CONFIG_HOME="$tmp/home2" "$nnlab" presets

awk 'BEGIN { for (i = 1; i <= 115000; i++) printf "[s%d]\n", i }' >"$tmp/profile.ini"
mkdir -p "$tmp/home3/nnlab/profiles"
cp "$tmp/profile.ini" "$tmp/home3/nnlab/profiles/big.ini"
timed "115k-section GPU profile (explain)" 0.5 200 "$nnlab" explain --preset mnist-mlp-128 --gpu-profile "$tmp/profile.ini"
# devices maps the GPU module's libraries (about 225 MB resident here with
# no profiles folder at all): its bound is that run's peak, plus 20 MB
timed "devices, no profiles folder" 2 400 env XDG_CONFIG_HOME="$tmp/none" "$nnlab" devices
devices_mb=$(( $(tail -n 1 "$tmp/time" | cut -d' ' -f2) / 1024 + 20 ))
timed "it in the profiles folder (devices)" 0.5 "$devices_mb" env XDG_CONFIG_HOME="$tmp/home3" "$nnlab" devices

mkdir "$tmp/bomb2"
# 1,300,000 blank images, the header telling the truth: 1 GB of zeros in ~1 MB
{ printf '\000\000\010\003\000\023\326\040\000\000\000\034\000\000\000\034'
  head -c 1019200000 /dev/zero; } | gzip -9 >"$tmp/bomb2/train-images-idx3-ubyte.gz"
{ printf '\000\000\010\001\000\023\326\040'; head -c 1300000 /dev/zero; } | gzip -9 >"$tmp/bomb2/train-labels-idx1-ubyte.gz"
cp "$tmp/bomb2/train-images-idx3-ubyte.gz" "$tmp/bomb2/t10k-images-idx3-ubyte.gz"
cp "$tmp/bomb2/train-labels-idx1-ubyte.gz" "$tmp/bomb2/t10k-labels-idx1-ubyte.gz"
timed "a truthful 1 MB gzip bomb (train --data)" 2 300 "$nnlab" train --preset mnist-mlp-128 --steps 1 --data "$tmp/bomb2"

mkdir "$tmp/junk"
{ printf '\000\000\010\003\000\000\000\002\000\000\000\034\000\000\000\034'; head -c 1568 /dev/zero; } | gzip >"$tmp/junk/train-images-idx3-ubyte.gz"
printf 'junk after the stream' >>"$tmp/junk/train-images-idx3-ubyte.gz"
{ printf '\000\000\010\001\000\000\000\002'; head -c 2 /dev/zero; } | gzip >"$tmp/junk/train-labels-idx1-ubyte.gz"
cp "$tmp/junk/train-images-idx3-ubyte.gz" "$tmp/junk/t10k-images-idx3-ubyte.gz"
cp "$tmp/junk/train-labels-idx1-ubyte.gz" "$tmp/junk/t10k-labels-idx1-ubyte.gz"
timed "junk after a gzip stream (train --data)" 2 200 "$nnlab" train --preset mnist-mlp-128 --steps 1 --batch 1 --data "$tmp/junk"
here_fixtures=$here/../tests/fixtures
timed "virtual_batch = +3 (train)" 0.5 200 "$nnlab" train --preset "$here_fixtures/bad-plus-int.ini" --steps 1
timed "lr = 0x10 (train)" 0.5 200 "$nnlab" train --preset "$here_fixtures/bad-float-hex.ini" --steps 1

[ "$failed" -eq 0 ] && echo "all within bounds" || echo "$failed over their bounds"
[ "$failed" -eq 0 ]
