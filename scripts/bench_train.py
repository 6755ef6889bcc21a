#!/usr/bin/python3
"""bench_train.py: the training step, attnviz train against the same training in PyTorch.

bench.py imports this and calls run(binary); it can also run alone:
    /usr/bin/python3 scripts/bench_train.py --bin build/attnviz [--steps N] [--quick]

For each task at its default sizes, both sides do the same work: make the model, then N
steps of batch, forward, loss, backward and Adam. attnviz's time is the `seconds` of
`attnviz train --steps N` (the model's making and N steps, not the process start or the
file); torch's is the same span of the training below, in a fresh process. Each side runs
once with one thread and once with two (OMP_NUM_THREADS for attnviz's work team,
torch.set_num_threads for torch), and the faster of each pair is compared: on a machine
that other work keeps busy, a second thread can cost either side more than it gains.
The rows give milliseconds per step (seconds / N) and attnviz / torch (goal: at most 0.2).
A last row times a default `both` run of 1000 steps in attnviz alone, default threads
(goal: under 2 s): its `seconds` and the whole process's wall time (probes and file too).

The torch model, data and loss below follow the training recipe (its ToyModel, make_batch
and loss_of, written out here so the benchmark needs nothing outside the repository).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

TASKS = {  # the recipe's defaults
    "prev":      dict(V=16, T=16, C=64, H=2, L=1, lr=5e-3, B=64, steps=300),
    "dup":       dict(V=16, T=16, C=64, H=2, L=1, lr=5e-3, B=64, steps=600),
    "both":      dict(V=16, T=16, C=64, H=4, L=1, lr=5e-3, B=64, steps=1000),
    "induction": dict(V=16, T=24, C=64, H=2, L=2, lr=3e-3, B=64, steps=1500),
}
TIMEOUT_S = 600


# ---------------------------------------------------------------------------------------
# The torch side, as the training recipe defines it (run in a worker process).
def torch_train_seconds(task, steps, threads, seed=0):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(threads)

    from gen_reference import lesson_module_class  # the lesson's module, verbatim
    SelfAttention = lesson_module_class(torch, nn, F)

    class ToyModel(nn.Module):  # wte + wpe -> L x (h = h + attn(h)) -> task heads
        def __init__(self, task, V, T, C, H, L):
            super().__init__()
            self.wte = nn.Embedding(V + 1, C)
            self.wpe = nn.Embedding(T + 1, C)
            self.h = nn.ModuleList([SelfAttention(C, H) for _ in range(L)])
            if task in ("prev", "both"):
                self.head_prev = nn.Linear(C, V + 1, bias=False)
            if task in ("dup", "both"):
                self.head_dup = nn.Linear(C, 2, bias=False)
            if task == "induction":
                self.lm_head = nn.Linear(C, V, bias=False)

        def forward(self, tok):
            x = self.wte(tok) + self.wpe(torch.arange(tok.shape[1]))
            for block in self.h:
                x = x + block(x)
            return x

    def make_batch(g, V, T, B):
        body = torch.randint(0, V, (B, T), generator=g)
        where = None
        if task == "induction":
            Ls = torch.randint(3, T // 2, (B,), generator=g)
            starts = torch.randint(0, 2, (B,), generator=g)
            where = torch.zeros(B, T + 1, dtype=torch.bool)
            for b in range(B):
                L, s = int(Ls[b]), int(starts[b])
                body[b, s + L:s + 2 * L] = body[b, s:s + L]
                where[b, 1 + s + L:1 + s + 2 * L - 1] = True
        tok = torch.cat([torch.full((B, 1), V), body], 1)
        out = {"tok": tok, "where": where}
        if task in ("prev", "both"):
            out["prev"] = torch.cat([torch.full((B, 1), V), tok[:, :-1]], 1)
        if task in ("dup", "both"):
            earlier = torch.tril(torch.ones(T + 1, T + 1, dtype=torch.bool), -1)
            out["dup"] = ((tok[:, :, None] == tok[:, None, :]) & earlier).any(-1).long()
        return out

    def loss_of(model, batch):
        h = model(batch["tok"])
        loss = 0.0
        if hasattr(model, "head_prev"):
            lp = model.head_prev(h)[:, 1:]
            loss = loss + F.cross_entropy(lp.reshape(-1, lp.shape[-1]), batch["prev"][:, 1:].reshape(-1))
        if hasattr(model, "head_dup"):
            ld = model.head_dup(h)[:, 1:]
            loss = loss + F.cross_entropy(ld.reshape(-1, 2), batch["dup"][:, 1:].reshape(-1))
        if hasattr(model, "lm_head"):
            w = batch["where"][:, :-1]
            loss = loss + F.cross_entropy(model.lm_head(h)[:, :-1][w], batch["tok"][:, 1:][w])
        return loss

    c = TASKS[task]
    t0 = time.perf_counter()
    torch.manual_seed(seed)
    model = ToyModel(task, c["V"], c["T"], c["C"], c["H"], c["L"])
    opt = torch.optim.Adam(model.parameters(), lr=c["lr"])
    g = torch.Generator().manual_seed(seed + 1)
    loss = None
    for _ in range(steps):
        loss = loss_of(model, make_batch(g, c["V"], c["T"], c["B"]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
    return {"seconds": time.perf_counter() - t0, "threads": torch.get_num_threads(), "final_loss": loss.item()}


def torch_run(task, steps, threads, blas_core=None):
    # As bench.py's workers: OpenBLAS on as many threads as torch, and on the kernels attnviz
    # picked for this CPU (OpenBLAS 0.3.21 gives newer Intel CPUs its SSE3 ones otherwise).
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    if blas_core and "OPENBLAS_CORETYPE" not in os.environ:
        env["OPENBLAS_CORETYPE"] = blas_core
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", task, str(steps), str(threads)],
                         capture_output=True, text=True, timeout=TIMEOUT_S, check=True, env=env)
    return json.loads(out.stdout)


def attnviz_blas_core(binary):
    """The OpenBLAS kernel set attnviz runs on this CPU (None when it has none to give)."""
    import bench  # scripts/bench.py, next to this file
    core = bench.attnviz_bench(binary, 4, 8, 2, "reference", 1).get("blas_core")
    return None if core in (None, "none", "unknown") else core


# ---------------------------------------------------------------------------------------
# The attnviz side.
def attnviz_run(binary, task, steps, threads=None):
    """attnviz train's JSON, with "wall" (the whole process, seconds) added; threads None:
    attnviz's default."""
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        out = subprocess.run([binary, "train", "--task", task, "--steps", str(steps), "--out",
                              os.path.join(d, "m.safetensors")],
                             capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
        wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"attnviz train --task {task} failed: {out.stderr.strip()}")
    result = json.loads(out.stdout)
    result["wall"] = wall
    return result


def run(binary, steps=50, quick=False, blas_core=None):
    """Prints the training rows and returns them as a list of dicts. blas_core: the
    OPENBLAS_CORETYPE for torch's processes (bench.py passes attnviz's choice)."""
    if quick:
        steps = min(steps, 30)
    print(f"\nTraining step, each task at its default size, {steps} steps (ms per step; torch in a fresh process, "
          f"OpenBLAS kernels {blas_core or 'its own choice'}); load average {os.getloadavg()[0]:.1f}:")
    header = (f"{'task':<10} {'attnviz 1 thr':>13} {'attnviz 2 thr':>13} {'torch 1 thr':>11} {'torch 2 thr':>11} "
              f"{'vs torch':>8}  goal")
    print(header)
    print("-" * len(header))
    rows = []
    for task in TASKS:
        # Interleaved, so that a busy machine slows both alike.
        ours = {n: attnviz_run(binary, task, steps, n) for n in (1, 2)}
        theirs = {n: torch_run(task, steps, n, blas_core) for n in (1, 2)}
        ms = {n: 1e3 * r["seconds"] / steps for n, r in ours.items()}
        torch_ms = {n: 1e3 * t["seconds"] / steps for n, t in theirs.items()}
        ratio = min(ms.values()) / min(torch_ms.values())
        rows.append({"task": task, "steps": steps, "attnviz_ms_per_step": {str(n): v for n, v in ms.items()},
                     "torch_ms_per_step": {str(n): v for n, v in torch_ms.items()}, "vs_torch": ratio})
        print(f"{task:<10} {ms[1]:>13.3f} {ms[2]:>13.3f} {torch_ms[1]:>11.3f} {torch_ms[2]:>11.3f} {ratio:>8.3f}  <= 0.2"
              f"{'' if ratio <= 0.2 else '  (not met)'}")
        sys.stdout.flush()
    if not quick:
        full = attnviz_run(binary, "both", TASKS["both"]["steps"])
        acc = ", ".join(f"{k} {v:.3f}" for k, v in full["accuracy"].items())
        print(f"attnviz train --task both (1000 steps): {full['seconds']:.2f} s, process {full['wall']:.2f} s wall "
              f"(goal: under 2 s); accuracy {acc}")
        rows.append({"task": "both", "steps": 1000, "attnviz_seconds": full["seconds"], "wall_seconds": full["wall"],
                     "accuracy": full["accuracy"]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="build/attnviz")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--torch-worker", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        task, steps, threads = a.torch_worker
        print(json.dumps(torch_train_seconds(task, int(steps), int(threads))))
        return 0
    run(a.bin, a.steps, a.quick, attnviz_blas_core(a.bin))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
