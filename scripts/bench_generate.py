#!/usr/bin/python3
"""bench_generate.py: attnviz generate on GPT-2 small's shapes, with and without the KV cache,
beside nanoGPT's generate in torch.

bench.py imports this and calls run(binary); it can also run alone:
    /usr/bin/python3 scripts/bench_generate.py --bin build/attnviz [--repeat 3] [--new 64] [--quick]

The model is bench_gpt.py's: random weights of GPT-2 small's real shapes (L 12, H 12, C 768,
vocabulary 50257, block size 1024) in Hugging Face's layout, in a temporary directory removed
at the end. The prompt is the ids (t * 7919 + 13) mod 50257. Every attnviz time is a step's own
`ms` from `attnviz generate --json` (its forward and its draw, greedy, the kernel trace would
choose: fast at these shapes); a step at position p writes the token at p:
  - per position p in 128, 512 and 1023: a prompt of p - 1 tokens and --max-new 2, so step 0
    is the prompt's forward and step 1, at p, is one cached step (one row against p keys), or
    with --no-cache the full forward over the p tokens before it. Median of --repeat runs.
    The goal: the cached step at 1023 at most 1/20 of a full forward at T = 1024, compared
    with --no-cache's step at 1023 (the full forward over 1023 tokens, the longest a step
    runs: the block's 1024th token is the last one written) and with `attnviz bench --model
    --seq-len 1024`'s forward_ms (median of --repeat, its buffers reused from run to run).
  - tokens per second: --new tokens after a 128-token prompt, cached and --no-cache (the sum
    of the steps' ms, the prompt's forward included), and nanoGPT's generate in torch on the
    same weights and prompt, read from the same file: model.py's GPT (gen_gpt_reference.py's
    classes), its forward at inference (the head on the last position only) and generate's
    loop with argmax for the draw (no cache: the whole sequence at every step), under
    no_grad, with one and two threads (the better counts) and OPENBLAS_CORETYPE as attnviz
    chose it. The tokens of the three are compared.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_gpt import GPT2_SMALL, TIMEOUT_S, cpu_model, write_gpt2  # noqa: E402

POSITIONS = (128, 512, 1023)
PROMPT_FOR_RATE = 128


def prompt_ids(n):
    return [(t * 7919 + 13) % GPT2_SMALL["vocab_size"] for t in range(n)]


def attnviz_generate(binary, model_dir, prompt_len, max_new, extra=()):
    cmd = [binary, "generate", "--model", model_dir, "--tokens", ",".join(map(str, prompt_ids(prompt_len))),
           "--max-new", str(max_new), "--json"] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        raise SystemExit("bench_generate.py: attnviz generate failed: " + r.stderr.strip())
    return json.loads(r.stdout)


def attnviz_bench(binary, model_dir, T, repeat):
    """attnviz bench --model at T tokens: forward_ms (median, buffers reused) and blas_core, the
    OpenBLAS kernel set attnviz chose, for torch's workers."""
    r = subprocess.run([binary, "bench", "--model", model_dir, "--seq-len", str(T), "--repeat", str(repeat)],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        raise SystemExit("bench_generate.py: attnviz bench failed: " + r.stderr.strip())
    return json.loads(r.stdout)


def read_safetensors(path):
    """A safetensors file of F32 tensors as numpy arrays (the file bench_gpt.write_gpt2 wrote)."""
    import numpy as np
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", name
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype=np.float32).reshape(t["shape"])
    return out


def torch_worker(model_dir, prompt_len, new, threads):
    """In a fresh process: nanoGPT's generate (argmax) on the weights in model_dir."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from gen_gpt_reference import make_gpt
    torch.set_num_threads(threads)
    GPT = make_gpt(torch, nn, F)
    c = GPT2_SMALL
    model = GPT(dict(c, gelu="tanh", bias=True)).eval()
    sd = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    conv1d = ("c_attn.weight", "c_proj.weight", "c_fc.weight")
    with torch.no_grad():
        params = dict(model.named_parameters())
        for key, value in sd.items():
            t = torch.from_numpy(value.copy())
            params["transformer." + key].copy_(t.t() if key.endswith(conv1d) else t)  # Conv1D [in][out]

    def last_logits(idx):
        # model.py's forward with targets=None: the blocks, ln_f, and the head on the last position.
        t = idx.size(1)
        x = model.transformer.wte(idx) + model.transformer.wpe(torch.arange(0, t, dtype=torch.long))
        for block in model.transformer.h:
            x = block(x, {})
        x = model.transformer.ln_f(x)
        return model.lm_head(x[:, [-1], :])

    def generate(idx, max_new_tokens):
        # model.py's generate, argmax instead of torch.multinomial.
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= c["block_size"] else idx[:, -c["block_size"]:]
            logits = last_logits(idx_cond)[:, -1, :]
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx

    idx = torch.tensor([prompt_ids(prompt_len)])
    with torch.no_grad():
        generate(idx, 1)  # warm-up
        t0 = time.perf_counter()
        out = generate(idx, new)
        s = time.perf_counter() - t0
    print(json.dumps({"threads": threads, "seconds": s, "tokens_per_s": new / s,
                      "tokens": out[0, prompt_len:].tolist()}))


def run_torch(model_dir, prompt_len, new, threads, blas_core):
    env = dict(os.environ)
    if blas_core and "OPENBLAS_CORETYPE" not in env:
        env["OPENBLAS_CORETYPE"] = blas_core
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", model_dir, str(prompt_len), str(new),
                        str(threads)], capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    if r.returncode != 0:
        raise SystemExit("bench_generate.py: the torch worker failed: " + r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def same_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def run(binary, repeat=3, new=64, quick=False, blas_core=None):
    """Prints the generate rows and returns them as a dict."""
    if quick:
        repeat, new = 1, 16
    tmp = tempfile.mkdtemp(prefix="attnviz_gpt2_generate_")
    model_dir = os.path.join(tmp, "gpt2")
    try:
        load0 = os.getloadavg()[0]
        write_gpt2(model_dir)
        forward = attnviz_bench(binary, model_dir, GPT2_SMALL["block_size"], repeat)
        blas_core = blas_core or forward.get("blas_core")
        positions = []
        for p in POSITIONS:
            cached, full, kernel = [], [], None
            for _ in range(repeat):  # alternated, so a change of load slows both
                j = attnviz_generate(binary, model_dir, p - 1, 2)
                assert j["steps"][1]["pos"] == p
                cached.append(j["steps"][1]["ms"])
                kernel = j["kernel"]
                full.append(attnviz_generate(binary, model_dir, p - 1, 2, ("--no-cache",))["steps"][1]["ms"])
            positions.append({"pos": p, "kernel": kernel, "cached_ms": statistics.median(cached),
                              "full_ms": statistics.median(full), "cached_all": cached, "full_all": full})
        rate = {}
        for name, extra in (("cached", ()), ("no_cache", ("--no-cache",))):
            j = attnviz_generate(binary, model_dir, PROMPT_FOR_RATE, new, extra)
            s = sum(step["ms"] for step in j["steps"]) / 1e3
            rate[name] = {"seconds": s, "tokens_per_s": new / s, "tokens": j["tokens"],
                          "first_step_ms": j["steps"][0]["ms"],
                          "later_steps_ms": statistics.median(step["ms"] for step in j["steps"][1:]) if new > 1 else None}
        theirs = [run_torch(model_dir, PROMPT_FOR_RATE, new, n, blas_core) for n in (1, 2)]
        best = max(theirs, key=lambda r: r["tokens_per_s"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    last = positions[-1]
    row = {"machine": cpu_model(), "nproc": os.cpu_count(), "load_average": [load0, os.getloadavg()[0]],
           "repeat": repeat, "positions": positions, "cached_over_full_at_1023": last["cached_ms"] / last["full_ms"],
           "forward_1024_ms": forward["forward_ms"], "cached_over_forward_1024": last["cached_ms"] / forward["forward_ms"],
           "rate": rate, "torch": theirs, "new": new, "prompt": PROMPT_FOR_RATE, "blas_core": blas_core,
           "same_tokens": {"no_cache": same_prefix(rate["cached"]["tokens"], rate["no_cache"]["tokens"]),
                           "torch": same_prefix(rate["cached"]["tokens"], best["tokens"])}}
    print(f"\nattnviz generate, GPT-2 small shapes (random weights), {cpu_model()}, {os.cpu_count()} CPUs, "
          f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f}, kernel {last['kernel']}, medians of {repeat}:")
    print("| position | cached step | full forward (--no-cache) | cached / full |")
    print("| --- | --- | --- | --- |")
    for p in positions:
        print(f"| {p['pos']} | {p['cached_ms']:.1f} ms | {p['full_ms']:.0f} ms | {p['cached_ms'] / p['full_ms']:.3f} |")
    print(f"attnviz bench's forward at T = 1024 (every intermediate kept, buffers reused): {forward['forward_ms']:.0f} ms; "
          f"the cached step at 1023 over it: {row['cached_over_forward_1024']:.3f}.")
    print(f"Goal: a cached step at 1023 at most 1/20 = 0.05 of a full forward; measured {row['cached_over_full_at_1023']:.3f} "
          f"of --no-cache's and {row['cached_over_forward_1024']:.3f} of bench's.")
    print(f"\n{new} tokens after a {PROMPT_FOR_RATE}-token prompt (greedy), in the same run:")
    print("| what | tokens/s | seconds | same tokens as attnviz cached |")
    print("| --- | --- | --- | --- |")
    for name, label in (("cached", "attnviz, KV cache"), ("no_cache", "attnviz --no-cache")):
        r = rate[name]
        same = new if name == "cached" else row["same_tokens"]["no_cache"]
        print(f"| {label} | {r['tokens_per_s']:.1f} | {r['seconds']:.2f} | {same} of {new} |")
    for t in theirs:
        print(f"| torch 1.13, nanoGPT generate, {t['threads']} thread{'s' if t['threads'] > 1 else ''} | "
              f"{t['tokens_per_s']:.1f} | {t['seconds']:.2f} | {same_prefix(rate['cached']['tokens'], t['tokens'])} of {new} |")
    return row


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--torch-worker":
        torch_worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/attnviz")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    row = run(a.bin, a.repeat, a.new, a.quick)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(row, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
