#!/usr/bin/env python3
"""bench/derive_profile.py - the unmeasured GPUs' profiles derived from the
measured GH100 ones (profiles/h100.ini and h200.ini, each fitted to a lent
machine's run of today's code), so that no profile can contradict a measured
GPU (docs/decisions/0123-unmeasured-profiles-derived-from-gh100.md).

Each figure of [link], [launch] and [kernels] is one GH100 figure times one
stated scaling, from the datasheet figures in GPUS below:
  - a fixed kernel time, a reduction, a per-element cost, a graph node: the
    device's latency, times the SM boost clock ratio (GH100 1980 MHz / the
    GPU's), never below 1 (such a time is also memory latency and the front
    end's, which a faster SM clock does not shorten: the RTX 4090's 2520 MHz
    is held at the GH100's times); the bandwidth enters through the model's
    own floor (an op is never faster than its bytes at mem_gbps);
  - a library's rate: the fraction of the FP32 peak it reached on the GH100,
    times the GPU's peak (SMs x FP32 lanes an SM x 2 x the boost clock);
  - a pinned copy's rate: the link's raw rate (PCIe generation and lanes)
    times the fraction the GH100's link reached; a pageable copy: the slower
    of the GH100 host's staging rate and that;
  - host-side costs (a launch, a graph's launch, a synchronise, the copies'
    and the read-back's fixed cost, a cuDNN or cuBLAS call's host cost): the
    GH100 host's, as measured or fitted (the driver's, the same order on
    every GPU).
Of the two GH100 fits, a time takes the larger and a rate the smaller
fraction of its peak: a derived GPU is never priced faster than the slower
of the two measured machines, scaled.

  bench/derive_profile.py           rewrites [link], [launch] and [kernels]
                                    of every derived profile ([profile],
                                    [gpu], [host] and [framework] untouched)
  bench/derive_profile.py --check   re-derives and compares with the shipped
                                    figures and key sets; TAP (make check)
"""
import os
import re
import sys

sys.dont_write_bytecode = True
TOP = os.environ.get("top_srcdir", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PROFILES = os.path.join(TOP, "profiles")

# GH100 (H100 SXM5 and H200 SXM): 132 SMs of 128 FP32 lanes, 1980 MHz boost
# (NVIDIA H100 Tensor Core GPU datasheet and architecture whitepaper, SXM5:
# 132 x 128 x 2 x 1.98 GHz = 66.9 TFLOPS, the datasheet's FP32).
GH100 = {"sms": 132, "lanes": 128, "boost_mhz": 1980}
PCIE_X16_GBPS = {3: 15.75, 4: 31.5, 5: 63.0}   # a direction, raw: GT/s x 16 x 128/130 (PCI-SIG)

# The derived GPUs: datasheet figures (the FP32 peak and bandwidth are the
# profile's [gpu] figures, sourced there; checked here against SMs x lanes x
# 2 x clock).
GPUS = {
    "t4": {"sms": 40, "lanes": 64, "boost_mhz": 1590, "pcie_gen": 3, "pcie_lanes": 16,
           "source": "NVIDIA T4 datasheet: TU104, 40 SMs, 2560 CUDA cores, 1590 MHz boost"},
    "rtx3060": {"sms": 28, "lanes": 128, "boost_mhz": 1777, "pcie_gen": 4, "pcie_lanes": 16,
                "source": "NVIDIA GeForce RTX 3060 specifications: GA106, 28 SMs, 3584 CUDA cores, 1777 MHz boost"},
    "rtx4090": {"sms": 128, "lanes": 128, "boost_mhz": 2520, "pcie_gen": 4, "pcie_lanes": 16,
                "source": "NVIDIA Ada Lovelace whitepaper: AD102 in the RTX 4090, 128 SMs, 16384 CUDA cores, 2520 MHz boost"},
    "a100": {"sms": 108, "lanes": 64, "boost_mhz": 1410, "pcie_gen": 4, "pcie_lanes": 16,
             "source": "NVIDIA A100 datasheet and Ampere whitepaper: A100 PCIe 40 GB, 108 SMs, 6912 CUDA cores, 1410 MHz boost"},
    "geforce-940m": {"sms": 3, "lanes": 128, "boost_mhz": 1176, "pcie_gen": 3, "pcie_lanes": 4,
                     "source": "the GM108 940M's spec pages (sysrqmts.com, gpu.spicedreamphone.com): 3 SMMs, 384 CUDA cores, 1176 MHz boost",
                     "pcie_note": "the spec pages list PCIe 3.0 x8, laptops wire fewer lanes (an NVIDIA System "
                                  "Information report of an ASUS 840M: x4 Gen2): x4, an estimate of a typical laptop"},
}

SECTIONS = ("link", "launch", "kernels")


def read_ini(path):
    """{section: {key: text}} and the file's lines."""
    out, section = {}, None
    lines = open(path, encoding="utf-8").read().split("\n")
    for line in lines:
        s = line.strip()
        if not s or s.startswith(";") or s.startswith("#"):
            continue
        m = re.match(r"^\[(\w+)\]$", s)
        if m:
            section = m.group(1)
            out.setdefault(section, {})
            continue
        key, _, value = s.partition("=")
        out[section][key.strip()] = value.strip()
    return out, lines


def num(text):
    return float(text.strip('"'))


def fmt(v):
    """Four significant digits, as the profiles print them ("1.8e9", "0.1263", "11110")."""
    r = float("%.4g" % v)
    if r != 0 and (abs(r) >= 1e6 or abs(r) < 1e-4):
        mant, exp = ("%.3e" % r).split("e")
        return "%se%d" % (mant.rstrip("0").rstrip("."), int(exp))
    return "%.10g" % r


class Ref:
    """The two measured GH100 profiles."""

    def __init__(self):
        self.h100 = read_ini(os.path.join(PROFILES, "h100.ini"))[0]
        self.h200 = read_ini(os.path.join(PROFILES, "h200.ini"))[0]

    def both(self, section, key):
        return num(self.h100[section][key]), num(self.h200[section][key])

    def larger(self, section, key):
        a, b = self.both(section, key)
        return max(a, b), "the larger of h100 %s, h200 %s" % (fmt(a), fmt(b))

    def smaller_share(self, key):
        """The smaller fraction of its own peak a rate reached on the two."""
        a, b = self.both("kernels", key)
        pa, pb = num(self.h100["gpu"]["fp32_gflops"]), num(self.h200["gpu"]["fp32_gflops"])
        share = min(a / pa, b / pb)
        return share, "the smaller of h100 %s/%s, h200 %s/%s = %.2f%%" % (fmt(a), fmt(pa), fmt(b), fmt(pb),
                                                                         100 * share)


def derive(gpu, ref, peak):
    """[(section, key, value, comment)] of one GPU; the comment names the scaling."""
    clock = max(1.0, GH100["boost_mhz"] / gpu["boost_mhz"])
    by_clock = ("x the clock ratio 1980/%d MHz" % gpu["boost_mhz"] if clock > 1 else
                "(its boost clock, %d MHz, above the GH100's: held)" % gpu["boost_mhz"])
    link_raw = PCIE_X16_GBPS[gpu["pcie_gen"]] * gpu["pcie_lanes"] / 16
    h200_pinned = num(ref.h200["link"]["pinned_copy_gbps"])
    link_share = h200_pinned / PCIE_X16_GBPS[5]
    out = [("link", "pcie_gen", str(gpu["pcie_gen"]),
            "PCI Express %d.0 x%d (%s): %s GB/s a direction raw (GT/s x lanes x 128/130, the PCI-SIG base "
            "specification)" % (gpu["pcie_gen"], gpu["pcie_lanes"], gpu.get("pcie_note", "the datasheet"),
                                fmt(link_raw)))]
    for key in ("copy_us", "pinned_copy_us", "download_us"):
        out.append(("link", key, ref.h200["link"][key], "host: the H200's, measured"))
    pinned = link_share * link_raw
    out.append(("link", "pinned_copy_gbps", fmt(pinned), "link: the raw %s GB/s x the share the H200's PCIe 5.0 "
                "x16 reached (%s of 63 GB/s, measured: %.1f%%)" % (fmt(link_raw), fmt(h200_pinned),
                                                                  100 * link_share)))
    pageable = num(ref.h200["link"]["copy_gbps"])
    out.append(("link", "copy_gbps", fmt(min(pageable, pinned)), "link: the slower of the H200 host's pageable "
                "rate (%s GB/s, measured: its staging copy) and this link's pinned rate" % fmt(pageable)))
    for key in ("launch_us", "graph_launch_us", "sync_us"):
        out.append(("launch", key, ref.h200["launch"][key], "host: the H200's, measured"))
    v, src = ref.larger("launch", "graph_node_us")
    out.append(("launch", "graph_node_us", fmt(v * clock), "clock: %s (measured) %s" % (src, by_clock)))
    for key in ("conv_forward_us", "conv_backward_us", "linear_forward_us", "linear_backward_us", "other_op_us",
                "layer_op_us", "conv_backward_reduce_us", "linear_backward_reduce_us", "layer_reduce_us",
                "layer_ns", "pool_ns"):
        v, src = ref.larger("kernels", key)
        out.append(("kernels", key, fmt(v * clock), "clock: %s %s" % (src, by_clock)))
    for key in ("conv_forward_gflops", "conv_backward_gflops", "linear_gflops", "conv_backward_slow_gflops"):
        share, src = ref.smaller_share(key)
        out.append(("kernels", key, fmt(share * peak), "peak: %s of the peak x %s GFLOP/s" % (src, fmt(peak))))
    a, b = ref.both("kernels", "conv_backward_slow_flops")
    out.append(("kernels", "conv_backward_slow_flops", fmt(max(a, b)),
                "held: FLOPs a call, the algorithm's choice (the larger of h100 %s, h200 %s)" % (fmt(a), fmt(b))))
    for key in ("cudnn_call_us", "cublas_call_us"):
        v, src = ref.larger("kernels", key)
        out.append(("kernels", key, fmt(v), "host: %s (fitted)" % src))
    return out


def wrap(text, width=78):
    words, lines, line = text.split(), [], ";"
    for w in words:
        if len(line) + 1 + len(w) > width:
            lines.append(line)
            line = ";"
        line += " " + w
    lines.append(line)
    return lines


def section_head(section, gpu, peak):
    if section == "link":
        return wrap("Derived from the measured GH100 profiles (h100.ini, h200.ini) by "
                    "bench/derive_profile.py, which `make check` reruns (docs/decisions/"
                    "0123-unmeasured-profiles-derived-from-gh100.md). Each figure says its scaling: host, the "
                    "H200 host's figure as measured (the driver's cost: host-side, the same order on every "
                    "GPU); link, by the PCIe generation and lanes.")
    if section == "launch":
        return wrap("Derived as [link]; clock: a device latency, times the SM boost clock ratio (GH100 "
                    "1980 MHz, the NVIDIA H100 and H200 datasheets; %s), never below 1." % gpu["source"])
    return wrap("Derived as [link] (nnlab(1), GPU PROFILES, for what each figure prices). clock: a fixed "
                "kernel time, a reduction or a per-element cost of the GH100 fits (the larger of the two), "
                "times the SM boost clock ratio (GH100 1980 MHz, the NVIDIA H100 and H200 datasheets; %s), "
                "never below 1 (such a time is also memory latency and the front end's, which a faster SM clock "
                "does not shorten); the bandwidth enters through the model's own floor, an op's bytes at mem_gbps. peak: a "
                "library's rate, the smaller share of its peak it reached on the two GH100s, times this "
                "GPU's FP32 peak (%s GFLOP/s = %d SMs x %d FP32 lanes x 2 x %d MHz, [gpu]). host: eager's "
                "host cost of a library call, the GH100 fit's." % (
                    gpu["source"], fmt(peak), gpu["sms"], gpu["lanes"], gpu["boost_mhz"]))


def section_text(section, figures, gpu, peak):
    lines = ["[%s]" % section] + section_head(section, gpu, peak)
    for sec, key, value, comment in figures:
        if sec == section:
            lines += wrap(comment + ".")
            lines.append("%s = %s" % (key, value))
    return lines


def rewrite(stem, figures, gpu, peak):
    path = os.path.join(PROFILES, stem + ".ini")
    _, lines = read_ini(path)
    # the file's sections as [start, end) line ranges, in order
    starts = [(i, re.match(r"^\[(\w+)\]", l).group(1)) for i, l in enumerate(lines) if re.match(r"^\[(\w+)\]", l)]
    ranges = {}
    for n, (i, name) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        while end > i + 1 and lines[end - 1].strip() == "":
            end -= 1                 # the blank lines before the next section stay
        ranges[name] = (i, end)
    out, i = [], 0
    kernels_done = "kernels" in ranges
    for n, (start, name) in enumerate(starts):
        out += lines[i:start]
        s, e = ranges[name]
        if name in SECTIONS:
            out += section_text(name, figures, gpu, peak)
        else:
            out += lines[s:e]
        i = e
        if name == "launch" and not kernels_done:
            out += [""] + section_text("kernels", figures, gpu, peak)
    out += lines[i:]
    text = "\n".join(out)
    open(path, "w", encoding="utf-8").write(text)


def all_derived():
    ref = Ref()
    result = {}
    for stem, gpu in GPUS.items():
        shipped, _ = read_ini(os.path.join(PROFILES, stem + ".ini"))
        peak = num(shipped["gpu"]["fp32_gflops"])
        result[stem] = (derive(gpu, ref, peak), shipped, gpu, peak)
    return ref, result


def check():
    ref, result = all_derived()
    cases = []
    want_keys = {s: set(ref.h200[s]) for s in ("gpu", "link", "launch", "host", "kernels")}
    for stem, (figures, shipped, gpu, peak) in result.items():
        computed = gpu["sms"] * gpu["lanes"] * 2 * gpu["boost_mhz"] * 1e-3
        cases.append((abs(computed / peak - 1) < 0.01, "%s: the datasheet peak %s GFLOP/s is SMs x lanes x 2 x "
                      "clock (%.1f)" % (stem, fmt(peak), computed)))
        for section, keys in want_keys.items():
            have = set(shipped.get(section, {}))
            cases.append((have == keys, "%s: [%s] has the measured profiles' keys%s" % (
                stem, section, "" if have == keys else " (missing %s, extra %s)" % (
                    sorted(keys - have), sorted(have - keys)))))
        for section, key, value, _ in figures:
            got = shipped.get(section, {}).get(key)
            ok = got is not None and abs(num(got) - num(value)) <= 1e-9 * max(1.0, abs(num(value)))
            cases.append((ok, "%s: [%s] %s = %s, derived %s" % (stem, section, key, got, value)))
    print("1..%d" % len(cases))
    failed = 0
    for n, (ok, what) in enumerate(cases, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
        failed += not ok
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--check"]:
        return check()
    if sys.argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    _, result = all_derived()
    for stem, (figures, _, gpu, peak) in result.items():
        rewrite(stem, figures, gpu, peak)
        print("profiles/%s.ini: %d figures derived" % (stem, len(figures)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
