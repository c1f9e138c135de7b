#!/bin/sh
# tests/setup-progress.sh - `./setup.sh run` says what it is doing while it
# builds: each step with the time so far, and make's lines condensed into
# "building N/M"; the GPU module's architectures before nvcc starts and a
# count of its passes while it runs, or why there is no module; autoreconf
# quiet unless it fails; where it installed. setup.sh's functions are read
# alone and run against a make that only pretends (a shell function: nothing
# is built or installed) in a folder with a fake build/. Speaks TAP.
: "${top_srcdir:=.}"
top_srcdir=$(cd "$top_srcdir" && pwd) || exit 99
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/out"; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
grep_ok() { if grep -q -e "$3" "$2"; then ok "$1"; else echo "# no '$3'"; not_ok "$1"; fi; }

NNLAB_SETUP_FUNCTIONS_ONLY=1
. "$top_srcdir/setup.sh"
set +e
cd "$tmp" || exit 99
mkdir build
# the fake: -n lists what it would run (30 compiles and a link, as automake's
# silent rules print them; with FAKE_GPU, 2 nvcc files too), else it prints
# those lines, a warning, and exits $FAKE_MAKE_STATUS; its arguments go to
# make.args. nvcc, given --verbose through NVCC_PROGRESS, prints its "#$"
# lines: a cicc and a ptxas for each of build/Makefile's 3 architectures.
make() {
    i=0
    echo "$*" >>"$tmp/make.args"
    case " $* " in
    *" -n "*)
        while [ $i -lt 30 ]; do echo "echo \"  CC      \" src/f$i.lo;gcc -c src/f$i.c"; i=$((i + 1)); done
        [ -z "${FAKE_GPU:-}" ] || for f in cuda_a cuda_b; do
            echo "echo \"  NVCC    \" backends/cuda/$f.lo;mkdir -p backends/cuda/.libs && nvcc -c"; done
        echo 'echo "  CCLD    " nnlab;gcc -o nnlab'
        return 0 ;;
    *" install "*) return 0 ;;
    *" nnlab-print-dirs "*) command make "$@"; return ;;
    esac
    while [ $i -lt 30 ]; do echo "  CC       src/f$i.lo"; i=$((i + 1)); done
    [ -z "${FAKE_GPU:-}" ] || for f in cuda_a cuda_b; do
        echo "  NVCC     backends/cuda/$f.lo"
        case " $* " in *" NVCC_PROGRESS=--verbose "*)
            echo '#$ _NVVM_BRANCH_=nvvm'
            for a in 75 86 90; do
                echo "#\$ \"\$CICC_PATH/cicc\" --c++17 --orig_src_file_name \"$f.cu\" -arch compute_$a -o /tmp/x.ptx"
                echo "#\$ ptxas -arch=sm_$a -m64 /tmp/x.ptx -o /tmp/x.cubin"
            done ;;
        esac
    done
    echo "src/f3.c:1:1: warning: a warning the user must see"
    echo "  CCLD     nnlab"
    return "${FAKE_MAKE_STATUS:-0}"
}
configure_into() { :; }

(build_with_progress) >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then ok "a build that works: status 0"; else not_ok "a build that works: status 0 (got $rc)"; fi
grep_ok "the step configuring is said, with the time" "$tmp/out" "^setup.sh \[0:[0-9][0-9]\] configuring"
grep_ok "the files to build are counted before" "$tmp/out" "^setup.sh \[0:[0-9][0-9]\] building 31 files on [0-9]* cores"
grep_ok "make's lines condensed: N/M and the file" "$tmp/out" "^setup.sh \[0:[0-9][0-9]\] building [0-9]*/31  CC src/f[0-9]*\.lo$"
grep_ok "the last one reached" "$tmp/out" "building 31/31  CCLD nnlab"
progress=$(grep -c "building [0-9]*/31" "$tmp/out")
if [ "$progress" -ge 5 ] && [ "$progress" -le 11 ]; then ok "condensed: a line a tenth of the way ($progress)"
else not_ok "condensed: a line a tenth of the way ($progress)"; fi
if grep -q "^  CC " "$tmp/out"; then not_ok "no raw make line left"; else ok "no raw make line left"; fi
grep_ok "a warning still shows" "$tmp/out" "^src/f3.c:1:1: warning: a warning the user must see$"
grep_ok "the end is said" "$tmp/out" "^setup.sh \[0:[0-9][0-9]\] built$"

FAKE_MAKE_STATUS=2
(build_with_progress) >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then ok "a build that fails: setup.sh fails"; else not_ok "a build that fails: setup.sh fails"; fi
grep_ok "it says make's status" "$tmp/out" "the build failed (make exited 2)"
FAKE_MAKE_STATUS=0

# on a terminal: one line redrawn
printf '  CC       a.lo\n  CC       b.lo\nan error line\n' | condense 2 1 >"$tmp/out"
if grep -q "$(printf '\r')setup.sh \[0:[0-9][0-9]\] building 2/2  CC b.lo" "$tmp/out"; then ok "a terminal gets one line redrawn"
else not_ok "a terminal gets one line redrawn"; fi
grep_ok "and another line on a line of its own" "$tmp/out" "^an error line$"

# ---- the GPU module: its architectures named, its nvcc passes counted ----
printf '#define NN_GPU_MODULE_BUILT 1\n' >build/config.h
printf 'NVCC_GENCODE = -gencode=arch=compute_75,code=sm_75 -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90\n' >build/Makefile
FAKE_GPU=1
: >make.args
(build_with_progress) >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then ok "with a GPU module: status 0"; else not_ok "with a GPU module: status 0 (got $rc)"; fi
grep_ok "the GPU module's architectures said before nvcc runs, and why it is slow" "$tmp/out" \
    "^setup.sh \[0:[0-9][0-9]\] the GPU module: nvcc compiles its 2 files for each of 3 architectures (sm_75 to sm_90, and PTX for newer GPUs), 6 passes: the slow part"
grep_ok "nvcc runs verbose, so that its passes show" make.args "NVCC_PROGRESS=--verbose"
grep_ok "nvcc's passes counted while it runs" "$tmp/out" \
    "^setup.sh \[0:[0-9][0-9]\] building 3[12]/33  GPU module: nvcc pass 3/6, sm_90$"
grep_ok "to the last pass" "$tmp/out" "GPU module: nvcc pass 6/6, sm_90$"
if grep -q '^#\$' "$tmp/out"; then not_ok "no line of nvcc's --verbose left"; else ok "no line of nvcc's --verbose left"; fi
passes=$(grep -c "nvcc pass [0-9]/6" "$tmp/out")
if [ "$passes" -ge 5 ]; then ok "off a terminal, a line per tenth of the passes ($passes)"
else not_ok "off a terminal, a line per tenth of the passes ($passes)"; fi

# ---- no nvcc: no module, and configure's reason said ----
FAKE_GPU=
: >build/config.h
printf '    CUDA:       not found under /usr/local/cuda (missing: nvcc): no GPU module\n' >build/configure.out
: >make.args
(build_with_progress) >"$tmp/out" 2>&1
grep_ok "no nvcc: no GPU module, and why" "$tmp/out" \
    "^setup.sh \[0:[0-9][0-9]\] no GPU module: configure found no usable CUDA toolkit (not found under /usr/local/cuda (missing: nvcc): no GPU module)"
if grep -q "NVCC_PROGRESS=--verbose" make.args; then not_ok "no nvcc: nothing verbose asked"; else ok "no nvcc: nothing verbose asked"; fi

# ---- autoreconf: quiet when it works, all of it when it fails ----
autoreconf() {
    i=0; while [ $i -lt 20 ]; do echo "libtoolize: copying file 'm4/lt$i.m4'"; i=$((i + 1)); done
    [ -z "${FAKE_AUTORECONF_FAILS:-}" ] || { echo "configure.ac:9: error: possibly undefined macro" >&2; return 1; }
}
(autoreconf_quietly) >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ]; then ok "autoreconf that works: not a line"
else not_ok "autoreconf that works: not a line"; fi
FAKE_AUTORECONF_FAILS=1
(autoreconf_quietly) >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then ok "autoreconf that fails: setup.sh fails"; else not_ok "autoreconf that fails: setup.sh fails"; fi
grep_ok "and shows its messages" "$tmp/out" "^configure.ac:9: error: possibly undefined macro$"
grep_ok "all of them" "$tmp/out" "copying file 'm4/lt19.m4'"
FAKE_AUTORECONF_FAILS=

# ---- where it installed: make's own folders ----
printf 'prefix = /opt/nn\nbindir = $(prefix)/bin\npkgdatadir = $(prefix)/share/nnlab\n' >build/Makefile
(install_and_say) >"$tmp/out" 2>&1
grep_ok "where it installed is said" "$tmp/out" \
    "^setup.sh \[0:[0-9][0-9]\] installed into /opt/nn: the program /opt/nn/bin/nnlab, the presets in /opt/nn/share/nnlab/presets; man nnlab$"

# the usage still names every command; `check` (which .ci/run execs) is unchanged in name
sh "$top_srcdir/setup.sh" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then ok "no command: usage, status 2"; else not_ok "no command: usage, status 2 (got $rc)"; fi
grep_ok "the usage names check" "$tmp/out" "^  ./setup.sh check "
grep_ok "and run, with its progress" "$tmp/out" "says each step with the time"
grep_ok ".ci/run still execs setup.sh check" "$top_srcdir/.ci/run" "^exec ./setup.sh check$"
echo "1..$n"
[ "$failed" -eq 0 ]
