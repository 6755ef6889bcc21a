#!/usr/bin/python3
"""bench.py: attnviz's forward pass against the lesson's PyTorch module, side by side.

Run by `make bench` (which builds first) with Debian's /usr/bin/python3, the one that has
python3-torch. For each size (T, C, H) it alternates runs of `attnviz bench` and of the
lesson's SelfAttention in a torch worker process, so that a busy machine slows both alike,
and prints a table of medians:

  forward ms     median time of one forward pass (attnviz: with every intermediate kept)
  update ms      attnviz only: update_row after the strength slider moves at position T/2
                 again (a drag: the fast kernel reuses what the first move at T/2 built)
  1st upd ms     attnviz only: the first update_row at T/2 after a forward (it builds that)
  upd/fwd        what the slider costs compared with a full forward
  GFLOP/s        useful causal FLOPs (2TC*3C + 2C*T(T+1)/2 * 2 + 2TC*C) per forward time,
                 the same count for both, although torch computes the full T x T
  peak RSS MB    the process's maximum resident set (torch's includes the library itself)
  vs torch       forward time / torch's best forward time (below 1: faster than torch)
  cpu/wall       attnviz only: CPU time of all its threads per forward time, i.e. how many
                 cores the forward really ran on (2: both; less on a machine busy with
                 other work, where the threads wait for a core)
  of sgemm       attnviz only: its GFLOP/s over the same run's cblas_sgemm rate at the qkv
                 shape (T, C) x (C, 3C) on the work team (the sgemm column): the machine's
                 own ceiling, so the figure reads the same on any machine

torch runs in inference mode (no autograd graph), once with its thread count and OpenBLAS's
set to attnviz's and once with one thread (on a busy machine torch's OpenMP regions can
cost milliseconds each); the faster of the two is the one compared against. After each
torch run the script waits SETTLE_S for OpenBLAS's spinning threads to go to sleep. Which BLAS torch really loaded is read from the worker's /proc/self/maps. OpenBLAS 0.3.21 gives Intel
CPUs newer than itself its SSE3 kernels; attnviz picks the kernel set from the CPU's features
(src/core/model/blas.cpp), and torch's workers get the same one through OPENBLAS_CORETYPE, so that
torch is compared at its best.

Options: --bin PATH (default build/attnviz), --quick (the two small sizes only), --rounds N
(multiply the rounds), --json FILE (save all results), --gui-frames N (with attnviz_harness
beside the binary, time N GUI frames too, and N served with 60 following pages against none,
scripts/bench_serve.py; 0 skips).
"""
import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

# (T, C, H, rounds, runs per round, also the reference kernel)
SIZES = [
    (4, 8, 2, 5, 200, True),
    (128, 256, 4, 5, 10, True),
    (512, 512, 8, 3, 3, False),
    (1024, 768, 12, 3, 2, False),
    (2048, 2048, 16, 2, 1, False),
]
TIMEOUT_S = 600
# Seconds to wait after each torch run before the next measurement. OpenBLAS's idle threads
# busy-wait for 2^28 cycles (about 0.1 s) after a product before they sleep, so a run that
# starts at once shares the cores with them: attnviz's forward at (2048, 2048, 16) measured
# 658 ms right after torch and 394 ms on its own.
SETTLE_S = 0.3


# ---------------------------------------------------------------------------------------
# The torch side: a worker process per size, driven over stdin/stdout.

def torch_worker(T, C, H, threads):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    import_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    torch.set_num_threads(threads)

    # The lesson's module, as printed in the lesson (gen_reference.py keeps it verbatim).
    from gen_reference import lesson_module_class
    SelfAttention = lesson_module_class(torch, nn, F)

    torch.manual_seed(0)
    attn = SelfAttention(C, H)
    x = torch.randn(1, T, C)
    with torch.inference_mode():
        attn(x)  # warm-up: first-call allocations, BLAS thread start
        for line in sys.stdin:
            cmd = line.split()
            if not cmd:
                continue
            if cmd[0] == "run":
                times = []
                for _ in range(int(cmd[1])):
                    t0 = time.perf_counter()
                    attn(x)
                    times.append((time.perf_counter() - t0) * 1e3)
                reply = {"forward_ms": statistics.median(times)}
            elif cmd[0] == "info":
                with open("/proc/self/maps") as f:
                    libs = sorted({l.split()[-1] for l in f if "blas" in l.lower() and "/" in l})
                core = "?"
                try:
                    import ctypes
                    lib = ctypes.CDLL(libs[0])
                    lib.openblas_get_corename.restype = ctypes.c_char_p
                    core = lib.openblas_get_corename().decode()
                except Exception:
                    pass
                reply = {
                    "torch": torch.__version__,
                    "blas_core": core,
                    "threads": torch.get_num_threads(),
                    "blas_info": re.findall(r"\bBLAS_INFO=[^,\s]+", torch.__config__.show()),
                    "blas_loaded": [os.path.realpath(p) for p in libs],
                    "import_rss_mb": import_rss_mb,
                    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                }
            else:
                break
            print(json.dumps(reply), flush=True)


class TorchWorker:
    core = None  # OPENBLAS_CORETYPE for the workers: attnviz's choice

    def __init__(self, T, C, H, threads):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
        if TorchWorker.core and "OPENBLAS_CORETYPE" not in os.environ:
            env["OPENBLAS_CORETYPE"] = TorchWorker.core
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--torch-worker", str(T), str(C), str(H), str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError("the torch worker stopped (is python3-torch installed for /usr/bin/python3?)")
        return json.loads(reply)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


# ---------------------------------------------------------------------------------------
# The attnviz side.

def attnviz_bench(binary, T, C, H, kernel, repeat):
    args = [binary, "bench", "--seq-len", str(T), "--n-embd", str(C), "--n-head", str(H),
            "--kernel", kernel, "--repeat", str(repeat)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def useful_flops(T, C):
    return 2 * T * C * 3 * C + 2 * 2 * C * T * (T + 1) / 2 + 2 * T * C * C


def gui_frames(binary, frames, extra=()):
    """Times GUI frames with attnviz_harness, built beside attnviz; None when there is none.
    `extra` adds window options (["--view", "train"]: the Train view while its run trains)."""
    if frames <= 0:
        return None
    harness = os.path.join(os.path.dirname(binary), "attnviz_harness")
    if not os.access(harness, os.X_OK):
        return None
    cmd = [harness, "--bench-frames", str(frames)] + list(extra)
    if not os.environ.get("DISPLAY") and shutil.which("xvfb-run"):
        cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    out = r.stdout.strip()
    try:
        return json.loads(out)
    except ValueError:
        return {"status": r.returncode, "output": out or r.stderr.strip()}


# ---------------------------------------------------------------------------------------
# Driver

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def fmt(v, digits=3):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.{digits}g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="build/attnviz", help="the attnviz executable (default build/attnviz)")
    ap.add_argument("--quick", action="store_true", help="only the two small sizes")
    ap.add_argument("--rounds", type=float, default=1.0, help="multiply every size's rounds by this")
    ap.add_argument("--json", help="also write every result to this file")
    ap.add_argument("--gui-frames", type=int, default=300, help="GUI frames to time if supported (0: skip)")
    ap.add_argument("--torch-worker", nargs=4, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_worker:
        torch_worker(*args.torch_worker)
        return 0

    if not os.access(args.bin, os.X_OK):
        print(f"bench.py: {args.bin} is not an executable; run make build first or give --bin PATH", file=sys.stderr)
        return 2
    sizes = SIZES[:2] if args.quick else SIZES
    started = time.time()

    # Header: the machine, attnviz's threads and the BLAS torch really uses.
    probe = attnviz_bench(args.bin, 4, 8, 2, "reference", 1)
    threads = int(probe["threads"])
    w = TorchWorker(4, 8, 2, threads)
    info = w.ask("info")
    w.close()
    TorchWorker.core = probe.get("blas_core") if probe.get("blas_core") not in (None, "none", "unknown") else None
    w = TorchWorker(4, 8, 2, threads)
    core_info = w.ask("info")
    w.close()
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; attnviz threads: {threads}; "
          f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"torch {info['torch']}, threads {info['threads']}, {', '.join(info['blas_info']) or 'BLAS_INFO ?'}; "
          f"BLAS loaded: {', '.join(info['blas_loaded']) or 'none found in /proc/self/maps'}")
    print(f"OpenBLAS kernels: attnviz {probe.get('blas_core', '?')}; torch alone {info['blas_core']}, "
          f"torch here {core_info['blas_core']}")
    alt = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    print(f"libblas.so.3 -> {alt}" + ("" if "openblas" in alt else "  (NOT OpenBLAS: torch is about 10x slower)"))
    print()

    results = []
    header = (f"{'T':>5} {'C':>5} {'H':>3}  {'impl':<17} {'forward ms':>10} {'update ms':>10} {'1st upd ms':>10} "
              f"{'upd/fwd':>8} {'GFLOP/s':>8} {'peak RSS MB':>11} {'vs torch':>8} {'cpu/wall':>8} {'sgemm':>6} {'of sgemm':>8}")
    print(header)
    print("-" * len(header))
    for T, C, H, rounds, runs, with_reference in sizes:
        rounds = max(1, int(round(rounds * args.rounds)))
        kernels = ["fast", "reference"] if with_reference else ["fast"]
        ours = {k: [] for k in kernels}
        # torch with attnviz's thread count, and with one thread: on a busy machine torch's
        # OpenMP regions can cost milliseconds each, so its best of the two is the fair one.
        torch_threads = sorted({threads, 1}, reverse=True)
        theirs = {n: [] for n in torch_threads}
        torch_info = {}
        workers = {n: TorchWorker(T, C, H, n) for n in torch_threads}
        try:
            # A worker answers only after its import and warm-up forward (seconds at the
            # largest size), which would otherwise run alongside the first measurements.
            for w in workers.values():
                w.ask("info")
            time.sleep(SETTLE_S)
            # Interleaved: each round runs every kernel and then torch, the same number of times.
            for _ in range(rounds):
                for k in kernels:
                    ours[k].append(attnviz_bench(args.bin, T, C, H, k, runs))
                for n, w in workers.items():
                    theirs[n].append(w.ask(f"run {runs}")["forward_ms"])
                    time.sleep(SETTLE_S)
            for n, w in workers.items():
                torch_info[n] = w.ask("info")
        finally:
            for w in workers.values():
                w.close()

        flops = useful_flops(T, C)
        torch_ms_by_threads = {n: statistics.median(v) for n, v in theirs.items()}
        torch_ms = min(torch_ms_by_threads.values())
        row = {"T": T, "C": C, "H": H, "rounds": rounds, "runs_per_round": runs,
               "torch": {str(n): {"threads": n, "forward_ms": ms, "gflops": flops / (ms * 1e6),
                                  "peak_rss_mb": torch_info[n]["peak_rss_mb"],
                                  "import_rss_mb": torch_info[n]["import_rss_mb"]}
                         for n, ms in torch_ms_by_threads.items()}}
        for k in kernels:
            fwd = statistics.median(r["forward_ms"] for r in ours[k])
            upd = statistics.median(r["update_ms"] for r in ours[k])
            upd_first = statistics.median(r["update_first_ms"] for r in ours[k])
            rss = max(r["peak_rss_mb"] for r in ours[k])
            cpu = statistics.median(r.get("forward_cpu_ms", 0.0) for r in ours[k])
            upd_cpu = statistics.median(r.get("update_cpu_ms", 0.0) for r in ours[k])
            sgemm = statistics.median(r.get("sgemm_gflops", 0.0) for r in ours[k])
            sgemm_blas = statistics.median(r.get("sgemm_blas_threads_gflops", 0.0) for r in ours[k])
            of_sgemm = flops / (fwd * 1e6) / sgemm if sgemm else None
            row[k] = {"sgemm_gflops": sgemm, "sgemm_blas_threads_gflops": sgemm_blas, "of_sgemm": of_sgemm,
                      "forward_ms": fwd, "update_ms": upd, "update_first_ms": upd_first,
                      "gflops": flops / (fwd * 1e6), "peak_rss_mb": rss, "vs_torch": fwd / torch_ms, "forward_cpu_ms": cpu, "update_cpu_ms": upd_cpu,
                      "cpu_per_wall": cpu / fwd}
            print(f"{T:>5} {C:>5} {H:>3}  {'attnviz ' + k:<17} {fmt(fwd):>10} {fmt(upd):>10} {fmt(upd_first):>10} "
                  f"{fmt(upd / fwd, 2):>8} {fmt(flops / (fwd * 1e6)):>8} {fmt(rss):>11} {fmt(fwd / torch_ms, 2):>8} {fmt(cpu / fwd, 2):>8} "
                  f"{fmt(sgemm):>6} {fmt(of_sgemm, 2):>8}")
        for n, ms in torch_ms_by_threads.items():
            label = f"torch {n} thr" + (" (best)" if ms == torch_ms and len(torch_threads) > 1 else "")
            print(f"{'':>17}{label:<17} {fmt(ms):>10} {'-':>10} {'-':>10} {'-':>8} {fmt(flops / (ms * 1e6)):>8} "
                  f"{fmt(torch_info[n]['peak_rss_mb']):>11} {fmt(ms / torch_ms, 2):>8}")
        sys.stdout.flush()
        results.append(row)

    frames = gui_frames(args.bin, args.gui_frames)
    if frames is not None:
        print(f"\nGUI frames ({args.gui_frames}): {json.dumps(frames)}")
        if frames.get("median_idle_ms"):
            idle = frames["median_idle_ms"]
            # The drag at the view's p (the lesson's 2: nearly every row redone) and, when the
            # app reports it, at T/2 (the position of the update goal).
            drags = [("p", "median_drag_ms")]
            if frames.get("median_drag_mid_ms"):
                drags.append(("p_mid", "median_drag_mid_ms"))
            for pos_key, ms_key in drags:
                where = f" at p = {frames[pos_key]}" if pos_key in frames else ""
                print(f"GUI drag frame{where} / idle frame: {fmt(frames[ms_key], 3)} / {fmt(idle, 3)} ms = "
                      f"{fmt(frames[ms_key] / idle, 3)} (goal: at most 1.5)")

    # The Train view: frames while its run trains at full speed against paused ones, and the
    # steps per second the run makes with the window drawing against the same run alone.
    train_frames = gui_frames(args.bin, args.gui_frames, ["--view", "train", "--size", "1280x720"])
    if train_frames is not None:
        print(f"\nTrain view frames ({args.gui_frames}, 1280x720): {json.dumps(train_frames)}")
        if train_frames.get("median_idle_ms"):
            print(f"Train view frame while training / paused: {fmt(train_frames['median_training_ms'], 3)} / "
                  f"{fmt(train_frames['median_idle_ms'], 3)} ms = {fmt(train_frames['training_ratio'], 3)} (goal: at most 1.5)")
            print(f"Training steps/s with the window drawing / alone: {fmt(train_frames['steps_per_s_with_window'], 3)} / "
                  f"{fmt(train_frames['steps_per_s_alone'], 3)} = {fmt(train_frames['steps_ratio'], 3)} (goal: at least 0.8)")
            # Where the frame's time goes: the run's copy, building the panels, llvmpipe's drawing.
            for phase in ("idle", "training"):
                parts = train_frames.get(f"{phase}_parts_ms")
                if parts:
                    print(f"Train view {'paused' if phase == 'idle' else 'training'} frame parts, ms: refresh "
                          f"{fmt(parts['refresh'], 3)}, panels {fmt(parts['panels'], 3)}, render {fmt(parts['render'], 3)}")

    # The window serving 60 following pages against none (scripts/bench_serve.py), one pair.
    serve_row = None
    if args.gui_frames > 0:
        import bench_serve
        print(f"\nServing 60 pages ({args.gui_frames} frames each, with and without pages):")
        serve_row = bench_serve.run(args.bin, frames=args.gui_frames, pages=60, runs=1)

    import bench_train  # the training rows (scripts/bench_train.py)
    train_rows = bench_train.run(args.bin, quick=args.quick, blas_core=TorchWorker.core)
    import bench_gpt  # a whole GPT-2 small against nanoGPT in torch (scripts/bench_gpt.py)
    gpt_row = bench_gpt.run(args.bin, quick=args.quick, blas_core=TorchWorker.core)
    import bench_generate  # generate with and without the KV cache, beside nanoGPT's generate (scripts/bench_generate.py)
    generate_row = bench_generate.run(args.bin, quick=args.quick, blas_core=TorchWorker.core)

    print(f"\ntorch's peak RSS includes about {fmt(info['import_rss_mb'])} MB for importing torch. "
          f"Total time {time.time() - started:.0f} s. "
          f"Load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": cpu_model(), "threads": threads, "torch": info, "libblas": alt,
                       "blas_core": {"attnviz": probe.get("blas_core"), "torch": core_info["blas_core"]},
                       "load_average_end": os.getloadavg(),
                       "sizes": results, "gui_frames": frames, "train_view_frames": train_frames, "serve": serve_row,
                       "train": train_rows, "gpt": gpt_row, "generate": generate_row}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
