#!/bin/sh
# tests/cli_calibrate_link.sh - `nnlab calibrate --link NAME` as a user runs
# it (docs/ranks.md): the ranks started under mpirun, over shared memory and
# over TCP, their timed sums and the ring's fit printed, the fit consistent
# with the times it prints, the link profile saved measured where the user's
# profiles live and then found by explain --ranks with the same figures;
# ranks started by hand; the one-line refusals; a save that cannot happen.
# Speaks TAP. Skips the whole (TAP's "1..0 # SKIP") where nnlab was built
# without MPI or mpirun is missing, as tests/cli_ranks.sh does.
# Needs NNLAB and top_srcdir, which `make check` exports.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
ranks_env
XDG_CONFIG_HOME="$tmp/cfg"; export XDG_CONFIG_HOME
links="$tmp/cfg/nnlab/profiles/links"

env PATH=/nonexistent "$NNLAB" calibrate --link x >"$tmp/out" 2>"$tmp/err"
skip_without_mpi

# ---- refused in one line, before any rank starts -----------------------------------
check "without mpirun: refused" 2 env PATH=/nonexistent "$NNLAB" calibrate --link x
grep_ok "without mpirun: says so" "$tmp/err" "mpirun is not on PATH"
one_line_err "without mpirun: one line"
check "a name that is not a file's stem: refused" 2 "$NNLAB" calibrate --link ../evil
grep_ok "a bad name: says what a name is" "$tmp/err" "letters, digits"
one_line_err "a bad name: one line"
check "one rank: refused" 2 "$NNLAB" calibrate --link x --ranks 1
grep_ok "one rank: says a link joins 2" "$tmp/err" "a link joins 2 ranks or more"
check "a GPU: refused" 2 "$NNLAB" calibrate --link x --device gpu
one_line_err "a GPU: one line"
check "--ranks without --link: refused" 2 "$NNLAB" calibrate --ranks 2
grep_ok "--ranks without --link: says they go with --link" "$tmp/err" "go with --link"
check "an unknown transport: refused" 2 "$NNLAB" calibrate --link x --transport ib
grep_ok "an unknown transport: names both" "$tmp/err" "expected shm.*or tcp"
[ ! -e "$links" ] && ok "nothing saved by a refusal" || not_ok "nothing saved by a refusal"

# ---- shared memory: measured, fitted, saved, then priced over ---------------------------------
check "calibrate --link mine --transport shm: runs" 0 "$NNLAB" calibrate --link mine --transport shm --json
cp "$tmp/out" "$tmp/shm.json"
# The JSON: 12 sizes 4 B..16 MiB, each time positive, the fit's time the
# ring's form of the fitted figures (2(N-1) hops + 2(N-1)/N x bytes / bw),
# the saved file's figures those of the JSON, marked measured.
check_json() {  # NAME JSON TRANSPORT RANKS
    python3 - "$2" "$3" "$4" "$links" <<'PY' >"$tmp/err" 2>&1
import json, math, os, sys, configparser
d = json.load(open(sys.argv[1])); transport, ranks, links = sys.argv[2], int(sys.argv[3]), sys.argv[4]
assert d["measured"] is True and d["ranks"] == ranks, (d["measured"], d["ranks"])
assert d["transport"] == transport, d["transport"]
sums = d["sums"]
assert [s["bytes"] for s in sums] == [4 * 4 ** i for i in range(12)], [s["bytes"] for s in sums]
assert all(s["us"] > 0 for s in sums)
bw, hop, n = d["bandwidth_gbps"], d["hop_us"], ranks
assert bw > 0 and hop >= 0 and 0 <= d["rms_error"] < 10, (bw, hop, d["rms_error"])
for s in sums:
    ring = 2 * (n - 1) * hop + 2 * (n - 1) / n * s["bytes"] / (bw * 1e3)
    assert math.isclose(ring, s["fit_us"], rel_tol=1e-4), (s, ring)
rel = [(s["fit_us"] - s["us"]) / s["us"] for s in sums]
rms = math.sqrt(sum(r * r for r in rel) / len(rel))
assert math.isclose(rms, d["rms_error"], rel_tol=0.05, abs_tol=1e-3), (rms, d["rms_error"])
path = os.path.join(links, d["link"] + ".ini")
assert d["saved"] == path and os.path.isfile(path), (d["saved"], path)
ini = configparser.ConfigParser(inline_comment_prefixes=(";",)); ini.read(path)
assert ini["link"]["measured"] == "true"
assert math.isclose(float(ini["link"]["bandwidth_gbps"]), bw, rel_tol=1e-5)
assert math.isclose(float(ini["link"]["hop_us"]), hop, rel_tol=1e-5, abs_tol=1e-9)
assert open(path).readline().startswith("; measured by `nnlab calibrate --link " + d["link"] + "`")
PY
    if [ $? -eq 0 ]; then ok "$1"; else not_ok "$1"; fi
}
check_json "shm: its JSON adds up and the profile holds its figures" "$tmp/shm.json" "shared memory" 2
check "explain --ranks 2 --link mine: runs" 0 "$NNLAB" explain --preset mnist-mlp-128 --batch 4 --ranks 2 \
    --link mine --steps 2 --warmup 0 --json
python3 - "$tmp/out" "$tmp/shm.json" <<'PY' >"$tmp/err" 2>&1
import json, math, sys
r = json.load(open(sys.argv[1]))["ranks"]; m = json.load(open(sys.argv[2]))
assert r["link"] == "mine" and r["link_measured"] is True and r["source"] == "predicted", r
assert math.isclose(r["bandwidth_gbps"], m["bandwidth_gbps"], rel_tol=1e-5), r
assert math.isclose(r["hop_us"], m["hop_us"], rel_tol=1e-5, abs_tol=1e-9), r
PY
[ $? -eq 0 ] && ok "explain prices over the saved link, marked measured" || not_ok "explain prices over the saved link, marked measured"

check "the text: runs" 0 "$NNLAB" calibrate --link mine2 --transport shm
grep_ok "the text: names the transport and says measured" "$tmp/out" "2 ranks on .* over shared memory .*measured"
grep_ok "the text: the fit" "$tmp/out" "the ring's fit (measured): bandwidth .* GB/s each way, .* us a hop; rms error"
grep_ok "the text: where it was saved" "$tmp/out" "saved as the link profile mine2 (measured): $links/mine2.ini"

# ---- over TCP, and ranks started by hand -------------------------------------------------
check "--transport tcp: runs" 0 "$NNLAB" calibrate --link mytcp --transport tcp --json
cp "$tmp/out" "$tmp/tcp.json"
check_json "tcp: its JSON adds up, transport tcp" "$tmp/tcp.json" "tcp" 2
check "3 ranks under mpirun by hand: runs" 0 mpirun -np 3 --oversubscribe "$NNLAB" calibrate --link three --json
cp "$tmp/out" "$tmp/three.json"
check_json "3 ranks: one JSON, from rank 0, for 3 ranks" "$tmp/three.json" "shared memory" 3
check "ranks that sum over tcp asked for shm: refused" 2 mpirun -np 2 --mca btl self,tcp "$NNLAB" \
    calibrate --link wrong --transport shm
grep_ok "a transport mismatch: says how they sum" "$tmp/err" "transport shm, but these ranks sum over tcp"
[ ! -e "$links/wrong.ini" ] && ok "a mismatch saves nothing" || not_ok "a mismatch saves nothing"

# ---- a save that cannot happen: said, exit 1, the old profile kept ------------------------
cp "$links/mine.ini" "$tmp/mine.before"
printf 'a file where the folder should be\n' >"$tmp/notadir"
check "an unwritable config folder: fails" 1 env XDG_CONFIG_HOME="$tmp/notadir" "$NNLAB" calibrate --link mine
grep_ok "an unwritable config folder: names the file" "$tmp/err" "notadir/nnlab/profiles/links/mine.ini"
cmp -s "$links/mine.ini" "$tmp/mine.before" && ok "the saved profile untouched" || not_ok "the saved profile untouched"

echo "1..$n"
[ "$failed" -eq 0 ]
