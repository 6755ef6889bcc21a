#!/usr/bin/python3
"""bench_patch.py: activation patching and the logit lens on GPT-2 small's shapes (issue 33).

    /usr/bin/python3 scripts/bench_patch.py --bin build/attnviz [--T 15] [--lens-T 1024] [--repeat 3]

Writes random weights of GPT-2 small's real shapes (bench_gpt.py's write_gpt2: L 12, H 12,
C 768, vocabulary 50257) into a temporary directory, removed at the end, then on the same
machine in the same run:
  - `attnviz patch --model DIR --clean-tokens ... --corrupt-tokens ... --what heads --json`
    and `--what resid` on T tokens (the corrupted prompt one token different at T/3): its
    patch_ms, the patches alone after loading and the two plain runs (fast kernel);
  - `attnviz bench --model DIR --seq-len LENS_T --logit-lens`: the lean forward's median and
    the logit lens's on each forward's trace (logit_lens_over_forward).
Prints one JSON object with the machine (lscpu's model name, nproc, /proc/loadavg before and
after). Goals (issue 33): heads <= 5 s and resid <= 3 s on 2 cores; the lens at most 0.2 of a
forward at T = 1024.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_gpt import cpu_model, write_gpt2  # noqa: E402

TIMEOUT_S = 900


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def attnviz(args):
    r = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        raise SystemExit("bench_patch.py: " + " ".join(args[:2]) + " failed: " + r.stderr.strip())
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/attnviz")
    ap.add_argument("--T", type=int, default=15)
    ap.add_argument("--lens-T", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    out = {"cpu": cpu_model(), "nproc": os.cpu_count(), "loadavg_before": loadavg()}
    d = tempfile.mkdtemp(prefix="attnviz-bench-patch-")
    try:
        write_gpt2(d)
        clean = [(t * 7919 + 13) % 50257 for t in range(args.T)]
        corrupt = list(clean)
        corrupt[args.T // 3] = (corrupt[args.T // 3] + 1) % 50257
        base = [args.bin, "patch", "--model", d, "--clean-tokens", ",".join(map(str, clean)), "--corrupt-tokens",
                ",".join(map(str, corrupt)), "--answer-token", "100", "--wrong-token", "200", "--json"]
        for what in ("heads", "resid"):
            j = attnviz(base + ["--what", what])
            out[what + "_patch_ms"] = j["patch_ms"]
            print(what, "%.0f ms" % j["patch_ms"], file=sys.stderr)
        j = attnviz([args.bin, "bench", "--model", d, "--seq-len", str(args.lens_T), "--repeat", str(args.repeat),
                     "--logit-lens"])
        for k in ("T", "forward_ms", "logit_lens_ms", "logit_lens_over_forward",
                  "logit_lens_window_positions", "logit_lens_window_ms", "logit_lens_window_over_forward", "threads", "blas_core"):
            out["lens_" + k if k == "T" else k] = j[k]
    finally:
        shutil.rmtree(d, ignore_errors=True)
    out["loadavg_after"] = loadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
