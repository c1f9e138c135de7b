#!/bin/sh
# tests/cli_explain_ranks.sh - `nnlab explain --ranks N` (src/cli/cli_explain_ranks.c,
# nnlab/link.h): with the recorded 2-core CPU calibration installed as this
# machine's cache (tests/cal_install), the ranks' step predicted over the
# shipped link profiles: the JSON's figures add up (the step is one rank's
# plus what the all-reduce leaves waiting, the ring's time its hops plus its
# bytes), the sequel's lesson holds (MNIST's small MLP at batch 4 gains
# nothing from two ranks over a slow link; LeNet at 512 over InfiniBand
# does), a GPU not here is priced through its profile, and a missing or
# broken link profile is one line naming it. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}" "${top_builddir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"

export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config"
export NNLAB_PYTHON=/nonexistent
if ! "$top_builddir/tests/cal_install" calibration-cpu-dev2.txt 2>"$tmp/err"; then
    not_ok "the recorded calibration installed"
    echo "1..$n"; exit 1
fi
ok "the recorded calibration installed"

# ranks_json FILE EXPR: a python3 check of the "ranks" object of FILE's JSON
ranks_json() {
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["ranks"]
ok = eval(sys.argv[2], {"r": r, "abs": abs})
if not ok:
    print("# ranks:", json.dumps(r))
sys.exit(0 if ok else 1)
PY
}
json_ok() { if ranks_json "$tmp/out" "$2"; then ok "$1"; else not_ok "$1"; fi; }

check "explain --ranks 2 over InfiniBand HDR, JSON" 0 \
    "$NNLAB" explain --preset lenet-cifar10 --batch 512 --ranks 4 --link infiniband-hdr --steps 1 --warmup 0 --json
json_ok "labelled predicted, 4 ranks at 512 each, 2048 in all" \
    'r["source"] == "predicted" and r["ranks"] == 4 and r["rank_batch"] == 512 and r["global_batch"] == 2048'
json_ok "the ring's time is its hops plus its bytes" 'abs(r["allreduce_us"] - r["hops_us"] - r["bytes_us"]) < 1e-6 * r["allreduce_us"]'
json_ok "6 hops of the link's 0.6 us" 'abs(r["hops_us"] - 3.6) < 1e-9 and r["link"] == "infiniband-hdr" and not r["link_measured"]'
json_ok "the step is one rank's plus the all-reduce waited for" 'abs(r["step_us"] - r["rank_step_us"] - r["exposed_us"]) < 1e-6 * r["step_us"]'
json_ok "overlapped: waits for less than the whole sum, at least its hops" 'r["overlap"] and r["hops_us"] <= r["exposed_us"] <= r["allreduce_us"]'
json_ok "LeNet at 512 a rank: 4 ranks pay (speedup > 2)" 'r["speedup"] > 2 and abs(r["speedup"] / 4 - r["efficiency"]) < 1e-5'

check "explain --ranks 2 --no-overlap over PCIe" 0 \
    "$NNLAB" explain --preset mnist-mlp-128 --batch 4 --ranks 2 --link pcie4 --no-overlap --steps 1 --warmup 0 --json
json_ok "no overlap: the whole sum waited for" 'not r["overlap"] and r["exposed_us"] == r["allreduce_us"]'

# a slow link of the user's: Ethernet-like figures
mkdir -p "$tmp/config/nnlab/profiles/links"
printf '[link]\nname = "slow"\nbandwidth_gbps = 1.17\nhop_us = 20\n' >"$tmp/config/nnlab/profiles/links/slow.ini"
check "explain --ranks 2 over a user's link profile, text" 0 \
    "$NNLAB" explain --preset mnist-mlp-128 --batch 4 --ranks 2 --link slow --no-overlap --steps 1 --warmup 0
grep_ok "the ranks' section says predicted" "$tmp/out" "ranks: .*2 ranks at batch 4 each (global batch 8) over slow.*: predicted"
grep_ok "MNIST's MLP at batch 4: two ranks are slower than one" "$tmp/out" "2 ranks are 0\.[0-9]*x one rank's speed on the same 8 samples"

check "a GPU not here: the ranks priced through the profile" 0 \
    "$NNLAB" explain --preset lenet-cifar10 --device gpu --gpu-profile h100 --batch 256 --ranks 8 --link nvlink4 --json
json_ok "8 GPUs over NVLink 4, predicted" 'r["ranks"] == 8 and r["link_name"] == "NVLink 4" and r["step_us"] > 0'

check "an unknown link: exit 2" 2 "$NNLAB" explain --preset mnist-mlp-128 --ranks 2 --link token-ring --steps 1 --warmup 0
one_line_err "an unknown link: one line"
grep_ok "an unknown link: the names there are" "$tmp/err" "no link profile 'token-ring'.*there are: .*infiniband-hdr"
printf '[link]\nbandwidth_gbps = 25\nlatency_us = 1\n' >"$tmp/config/nnlab/profiles/links/typo.ini"
check "a broken link profile: exit 2" 2 "$NNLAB" explain --preset mnist-mlp-128 --ranks 2 --link typo --steps 1 --warmup 0
grep_ok "a broken link profile: its file and key named" "$tmp/err" "typo.ini: \[link\] latency_us: unknown key"
check "--ranks 0: refused" 2 "$NNLAB" explain --preset mnist-mlp-128 --ranks 0
grep_ok "--ranks 0: the range said" "$tmp/err" "ranks 0.*1\.\.4096"

echo "1..$n"
[ "$failed" -eq 0 ]
