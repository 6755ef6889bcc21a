#!/usr/bin/python3
"""bench_gpt.py: a whole GPT-2 small, attnviz bench --model against nanoGPT's forward in torch.

bench.py imports this and calls run(binary); it can also run alone:
    /usr/bin/python3 scripts/bench_gpt.py --bin build/attnviz [--T 1024] [--repeat 3] [--quick]

The script writes random weights of GPT-2 small's real shapes (L 12, H 12, C 768, vocabulary
50257, block size 1024; 124M parameters, 0.5 GB as float32) in Hugging Face's layout
(Conv1D, with config.json) into a temporary directory, removed at the end. Then, on the same
machine in the same run:
  - attnviz: `attnviz bench --model DIR --seq-len T`: load_ms (mapping the file and copying
    each tensor into the model, Conv1D transposed), forward_ms (median; every layer's
    attention weights kept), update_ms (token T/2 changed, only rows from T/2 recomputed)
    and peak_rss_mb (getrusage of the whole process);
  - torch: nanoGPT's GPT (gen_gpt_reference.py's copy of model.py's classes), the same
    config, forward on T tokens under no_grad, median of the same number of runs, with one
    and with two threads (the better one counts), OPENBLAS_CORETYPE as attnviz chose it.
  - attnviz with `--ablate 0.0` (its own run): a head's ablation as the window does it, the
    lean trace rerun from the ablated layer (layer 0, the worst case) with the next-token
    loss, the top 5 and the DLA, over a plain forward timed beside each; and the same with the head
    detector's repeated-sequence probe rerun with the ablation.
With --window T,... it measures the window instead (issue 29): for each T, `xvfb-run -a attnviz
--model DIR --tokens <T ids> --view VIEW --screenshot` under /usr/bin/time -v for the walk,
the Model view and the causality view (--perturb T/2: the changed trace too), printing each
run's exit status, peak RSS of the whole process, wall time and the sentence of a refusal, then
the frame of a layer switch at each T (attnviz_harness --bench-frames, beside the binary):
    /usr/bin/python3 scripts/bench_gpt.py --bin build/attnviz --window 315,1024
Goals (issue): forward at most 0.8 of torch's, update at most 0.5 of a forward, peak RSS at
most 1.5 GB, load at most 1 s, an ablation at most 1.2 forwards.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ABLATED_HEAD = "0.0"  # a layer-0 head: the rerun is the whole model, the worst case
GPT2_SMALL = dict(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, block_size=1024)
TIMEOUT_S = 900


def write_gpt2(path):
    """Random GPT-2 small in Hugging Face's layout: Conv1D [in][out] weights, F32, config.json."""
    import torch
    from make_weight_fixtures import save_file
    torch.manual_seed(0)
    c = GPT2_SMALL
    C, L = c["n_embd"], c["n_layer"]
    sd = {"wte.weight": torch.randn(c["vocab_size"], C) * 0.02, "wpe.weight": torch.randn(c["block_size"], C) * 0.01}
    for n in range(L):
        h = "h.%d." % n
        for ln in ("ln_1", "ln_2"):
            sd[h + ln + ".weight"], sd[h + ln + ".bias"] = torch.ones(C), torch.zeros(C)
        for name, (i, o) in (("attn.c_attn", (C, 3 * C)), ("attn.c_proj", (C, C)), ("mlp.c_fc", (C, 4 * C)),
                             ("mlp.c_proj", (4 * C, C))):
            sd[h + name + ".weight"] = torch.randn(i, o) * 0.02
            sd[h + name + ".bias"] = torch.zeros(o)
    sd["ln_f.weight"], sd["ln_f.bias"] = torch.ones(C), torch.zeros(C)
    os.makedirs(path, exist_ok=True)
    save_file(sd, os.path.join(path, "model.safetensors"), {"format": "pt"})
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump({"model_type": "gpt2", "activation_function": "gelu_new", "n_layer": L, "n_head": c["n_head"],
                   "n_embd": C, "vocab_size": c["vocab_size"], "n_positions": c["block_size"]}, f)


def torch_worker(T, repeat, threads):
    """In a fresh process: nanoGPT's GPT at GPT-2 small's config, forward on T tokens."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from gen_gpt_reference import make_gpt
    torch.set_num_threads(threads)
    GPT = make_gpt(torch, nn, F)
    model = GPT(dict(GPT2_SMALL, gelu="tanh", bias=True)).eval()
    idx = torch.tensor([[(t * 7919 + 13) % GPT2_SMALL["vocab_size"] for t in range(T)]])
    times = []
    with torch.no_grad():
        model(idx)  # warm-up
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(idx)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"threads": threads, "forward_ms": times[len(times) // 2], "forward_ms_min": times[0],
                      "peak_rss_mb": rss}))


def run_torch(T, repeat, threads, blas_core):
    env = dict(os.environ)
    if blas_core and "OPENBLAS_CORETYPE" not in env:
        env["OPENBLAS_CORETYPE"] = blas_core
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", str(T), str(repeat), str(threads)],
                       capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    if r.returncode != 0:
        raise SystemExit("bench_gpt.py: the torch worker failed: " + r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def run_attnviz(binary, model_dir, T, repeat, extra=()):
    r = subprocess.run([binary, "bench", "--model", model_dir, "--seq-len", str(T), "--repeat", str(repeat)] + list(extra),
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        raise SystemExit("bench_gpt.py: attnviz bench failed: " + r.stderr.strip())
    return json.loads(r.stdout)


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        return "unknown"


def run(binary, T=1024, repeat=3, quick=False, blas_core=None):
    """Prints the GPT rows and returns them as a dict."""
    if quick:
        T, repeat = 256, 2
    tmp = tempfile.mkdtemp(prefix="attnviz_gpt2_")
    try:
        load0 = os.getloadavg()[0]
        t0 = time.time()
        write_gpt2(os.path.join(tmp, "gpt2"))
        write_s = time.time() - t0
        ours = run_attnviz(binary, os.path.join(tmp, "gpt2"), T, repeat)
        # A head's ablation in the window: a run of its own, its ratio to the forwards it times
        # side by side with the reruns.
        ablated = run_attnviz(binary, os.path.join(tmp, "gpt2"), T, repeat, ("--ablate", ABLATED_HEAD))
        theirs = [run_torch(T, repeat, n, blas_core or ours.get("blas_core")) for n in (1, 2)]
        best = min(theirs, key=lambda r: r["forward_ms"])
        # The file again, now that its pages are in the cache for certain: load time without the disk.
        again = run_attnviz(binary, os.path.join(tmp, "gpt2"), 8, 1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    row = {"machine": cpu_model(), "load_average": [load0, os.getloadavg()[0]], "T": T, "repeat": repeat,
           "write_s": write_s, "attnviz": ours, "attnviz_load_ms_cached": again["load_ms"], "torch": theirs,
           "forward_ratio": ours["forward_ms"] / best["forward_ms"], "ablation": ablated}
    print(f"\nGPT-2 small shapes (random weights), T = {T}, {cpu_model()}, load average {load0:.1f} -> "
          f"{os.getloadavg()[0]:.1f}:")
    print("| what | attnviz | torch (nanoGPT, best of 1 and 2 threads) | ratio | goal |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| forward | {ours['forward_ms']:.0f} ms | {best['forward_ms']:.0f} ms ({best['threads']} thr) | "
          f"{row['forward_ratio']:.2f} | <= 0.8 |")
    print(f"| update at p = {ours['perturbed_position']} | {ours['update_ms']:.0f} ms | | "
          f"{ours['update_over_forward']:.2f} of a forward | <= 0.5 |")
    a = ablated["ablation"]
    print(f"| GPT-2 small: ablation / forward (head {ABLATED_HEAD}: rerun from layer {a['first_layer']}, loss, top 5, "
          f"DLA) | {a['rerun_ms']:.0f} ms (forward beside it {a['forward_ms']:.0f} ms) | | {a['rerun_over_forward']:.2f} | "
          f"<= 1.2 |")
    print(f"| the same with the detector's probe ({a['detector_sequences']} x {a['detector_length']} tokens) | "
          f"{a['with_detector_ms']:.0f} ms | | {a['with_detector_over_forward']:.2f} | |")
    print(f"| load | {ours['load_ms']:.0f} ms (again: {again['load_ms']:.0f} ms) | | | <= 1000 ms |")
    print(f"| peak RSS | {ours['peak_rss_mb']:.0f} MB | {best['peak_rss_mb']:.0f} MB | | <= 1500 MB |")
    return row


def window_run(binary, model_dir, T, view, out_png):
    """One screenshot run of the window on T token ids under /usr/bin/time -v: its exit status,
    peak RSS of the whole process (MB), wall time and the first line it printed on stderr."""
    ids = ",".join(str((t * 7919 + 13) % GPT2_SMALL["vocab_size"]) for t in range(T))
    cmd = ["/usr/bin/time", "-v", "xvfb-run", "-a", binary, "--model", model_dir, "--tokens", ids, "--view", view,
           "--screenshot", out_png]
    if view == "causality":  # the token change: the second (changed) trace, from the middle position on
        cmd[-2:-2] = ["--perturb", str(T // 2)]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    wall = time.time() - t0
    rss = next((int(line.split(":")[1]) / 1024 for line in r.stderr.splitlines()
                if "Maximum resident set size" in line), float("nan"))
    said = next((line.strip() for line in r.stderr.splitlines() if line.strip() and not line.startswith("\t")), "")
    return {"T": T, "view": view, "status": r.returncode, "peak_rss_mb": rss, "wall_s": wall, "said": said}


def layer_switch_run(binary, model_dir, T, view, frames=12):
    """attnviz_harness --bench-frames on a GPT model: the frame of each of `frames` layer
    switches at T tokens in `view` (with the token change at T/2 applied, as a class would
    have it); None without the harness beside the binary."""
    harness = os.path.join(os.path.dirname(binary), "attnviz_harness")
    if not os.access(harness, os.X_OK):
        return None
    ids = ",".join(str((t * 7919 + 13) % GPT2_SMALL["vocab_size"]) for t in range(T))
    cmd = ["xvfb-run", "-a", harness, "--model", model_dir, "--tokens", ids, "--view", view, "--perturb", str(T // 2),
           "--bench-frames", str(frames)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    line = next((x for x in r.stdout.splitlines() if x.startswith("{")), None)
    return json.loads(line) if line else {"error": (r.stderr.strip().splitlines() or [""])[0]}


def run_window(binary, sizes, views=("walk", "model", "causality")):
    """The window on GPT-2 small's shapes: peak RSS of screenshot runs (xvfb-run) per T and view,
    and the time of a layer switch (attnviz_harness) per T."""
    tmp = tempfile.mkdtemp(prefix="attnviz_gpt2_window_")
    rows, switches = [], []
    try:
        load0 = os.getloadavg()[0]
        write_gpt2(os.path.join(tmp, "gpt2"))
        for T in sizes:
            for view in views:
                rows.append(window_run(binary, os.path.join(tmp, "gpt2"), T, view, os.path.join(tmp, f"{view}_{T}.png")))
            for view in ("scores", "model"):
                sw = layer_switch_run(binary, os.path.join(tmp, "gpt2"), T, view)
                if sw is not None:
                    switches.append((T, view, sw))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nGPT-2 small shapes in the window (xvfb-run --screenshot under /usr/bin/time -v), {cpu_model()}, "
          f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f}:")
    print("| T | view | exit | peak RSS | wall | first line on stderr |")
    print("| --- | --- | --- | --- | --- | --- |")
    for w in rows:
        print(f"| {w['T']} | {w['view']} | {w['status']} | {w['peak_rss_mb']:.0f} MB | {w['wall_s']:.1f} s | {w['said'][:160]} |")
    if switches:
        print("\nA layer switch (attnviz_harness --bench-frames 12, the token change at T/2 applied; goal at T = 1024: "
              "at most 150 ms):")
        print("| T | view | compact | median | slowest | of which recompute |")
        print("| --- | --- | --- | --- | --- | --- |")
        for T, view, sw in switches:
            if "error" in sw:
                print(f"| {T} | {view} | | | | {sw['error'][:120]} |")
                continue
            print(f"| {T} | {view} | {sw['compact']} | {sw['median_layer_switch_ms']:.0f} ms | "
                  f"{sw['max_layer_switch_ms']:.0f} ms | {sw['layer_switch_parts_ms']['recompute']:.0f} ms |")
    return rows


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--torch-worker":
        torch_worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/attnviz")
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--window", metavar="T,...", help="instead: the window's peak RSS on these sequence lengths")
    a = ap.parse_args()
    if a.window:
        rows = run_window(a.bin, [int(t) for t in a.window.split(",")])
        if a.json:
            with open(a.json, "w") as f:
                json.dump(rows, f, indent=1)
        return 0
    row = run(a.bin, a.T, a.repeat, a.quick)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(row, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
