#!/usr/bin/python3
"""bench_serve.py: the teacher's real window serving a class of 60 pages while the strength
slider moves every frame (the Load goal of the classroom server: the drag frame within 1.5x
of its time without pages, every page on the latest state within 0.5 s).

It runs attnviz_harness (built beside attnviz) with --serve on 127.0.0.1 and a free port,
and --bench-frames N (N idle frames, then N drag frames at the view's p and N at T/2, the
publish to the pages timed with each frame), alternately with no page and with PAGES
WebSocket pages connected and reading as fast as they can (all in this process, one thread:
on a 2-core machine the pages take CPU from the teacher, which a class's laptops do not, so
the ratio is pessimistic). The pages send the class code the harness prints, the
attnviz-follow subprotocol, and the Host and Origin a browser would. With --bench-pages the
harness waits for the class before timing, then prints when each state went out; each page's
lag is the time from a state's publish until the page holds that state or a newer one.

Prints each run's drag-frame median and p95, the medians' ratio with/without pages (goal: at
most 1.5), and the pages' lag (worst, p99; goal: within 500 ms). Under xvfb-run when there is
no DISPLAY. No network beyond 127.0.0.1; every wait is bounded.

Options: --bin PATH (default build/attnviz), --frames N (default 300), --pages K (default 60),
--runs R (each configuration R times, alternating; default 2), --json FILE.
Also run by scripts/bench.py (`make bench`) with its --gui-frames, once each.
"""
import argparse
import base64
import json
import os
import queue
import re
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpt import cpu_model  # noqa: E402 (lscpu's model name, as the other benchmarks print)

TIMEOUT_S = 600
# The pages here only follow (WebSocket): the server needs a site folder, not the built page.
SITE = tempfile.TemporaryDirectory(prefix="attnviz-bench-serve-")
with open(os.path.join(SITE.name, "index.html"), "w") as f:
    f.write("<html>the page</html>")
STRENGTH = re.compile(rb'"strength":\s*([-+0-9.eE]+)')
PERTURB = re.compile(rb'"perturb":\s*(-?[0-9]+)')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def key_of(p, strength):
    """A state as the pages and the harness both name it: the position and the strength."""
    return (p, round(strength * 1e4))


class Page:
    """A follower: a WebSocket on 127.0.0.1 as a browser opens it, reading every message."""

    def __init__(self, port, code):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        host = f"127.0.0.1:{port}"
        path = "/follow" + (f"?code={code}" if code else "")
        req = (f"GET {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
               "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: attnviz-follow\r\n\r\n")
        self.sock.sendall(req.encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            got = self.sock.recv(4096)
            if not got:
                raise RuntimeError("the server closed the page's connection during the handshake")
            buf += got
        head, self.buf = buf.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise RuntimeError("the server refused a page: " + head.split(b"\r\n")[0].decode(errors="replace"))
        self.sock.setblocking(False)
        self.partial = b""
        self.received = []  # (wall ms, key)
        self.closed = False

    def pong(self, payload):
        mask = os.urandom(4)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        try:
            self.sock.send(bytes([0x8A, 0x80 | len(payload)]) + mask + body)
        except OSError:
            pass

    def on_readable(self):
        try:
            got = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            got = b""
        if not got:
            self.closed = True
            return
        now = time.time() * 1000
        self.buf += got
        while True:
            frame = self.next_frame()
            if frame is None:
                return
            fin, opcode, payload = frame
            if opcode == 9:
                self.pong(payload)
            elif opcode == 8:
                self.closed = True
            elif opcode in (0, 1, 2):
                self.partial += payload
                if fin:
                    self.on_message(now, self.partial)
                    self.partial = b""

    def next_frame(self):
        b = self.buf
        if len(b) < 2:
            return None
        n, at = b[1] & 0x7F, 2
        if n == 126:
            if len(b) < 4:
                return None
            n, at = int.from_bytes(b[2:4], "big"), 4
        elif n == 127:
            if len(b) < 10:
                return None
            n, at = int.from_bytes(b[2:10], "big"), 10
        if len(b) < at + n:
            return None
        self.buf = b[at + n:]
        return bool(b[0] & 0x80), b[0] & 0x0F, b[at:at + n]

    def on_message(self, now, text):
        s, p = STRENGTH.search(text), PERTURB.search(text)
        if s and p:
            self.received.append((now, key_of(int(p.group(1)), float(s.group(1)))))


def harness_cmd(binary, port, frames, pages):
    harness = os.path.join(os.path.dirname(binary), "attnviz_harness")
    if not os.access(harness, os.X_OK):
        return None
    cmd = [harness, "--serve", "--site", SITE.name, "--bind", "127.0.0.1", "--port", str(port), "--per-address", "0",
           "--max-clients", str(max(pages, 1)), "--bench-frames", str(frames)]
    if pages:
        cmd += ["--bench-pages", str(pages)]
    if not os.environ.get("DISPLAY") and shutil.which("xvfb-run"):
        cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24"] + cmd
    return cmd


def lag_of(page, published):
    """Per state the page should have had: ms from its publish until the page held it or a
    newer one. A message is the latest publish of its key before it arrived."""
    latest = {}  # key -> index of its latest publish so far
    got = []  # (ms, index)
    j = 0
    for ms, key in page.received:
        while j < len(published) and published[j][0] <= ms:
            latest[published[j][1]] = j
            j += 1
        if key in latest:
            got.append((ms, latest[key]))
    lags, k, held = [], 0, -1
    for i, (ms_i, _) in enumerate(published):
        while held < i and k < len(got):
            held = max(held, got[k][1])
            at = got[k][0]
            k += 1
        if held < i:
            return lags, False  # never got state i or a newer one
        lags.append(max(0.0, at - ms_i))
    return lags, True


def run_once(binary, frames, pages):
    port = free_port()
    cmd = harness_cmd(binary, port, frames, pages)
    if cmd is None:
        return None
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout] + [lines.put(None)], daemon=True).start()
    deadline = time.time() + TIMEOUT_S
    code, result, published, done = None, None, [], False
    class_pages, sel = [], selectors.DefaultSelector()
    try:
        while time.time() < deadline:
            if class_pages:
                for k, _ in sel.select(timeout=0.005):
                    k.data.on_readable()
            try:
                line = lines.get(timeout=0 if class_pages else 1)
            except queue.Empty:
                continue
            if line is None:
                break
            text = line.decode(errors="replace").strip()
            m = re.search(r"serving the class at \S+?(?:\?code=(\S+))?\s", text)
            if m and pages and not class_pages:
                code = m.group(1)
                for _ in range(pages):
                    page = Page(port, code)
                    class_pages.append(page)
                    sel.register(page.sock, selectors.EVENT_READ, page)
            elif text.startswith("{"):
                result = json.loads(text)
            elif text.startswith("published "):
                _, ms, p, strength = text.split()
                published.append((float(ms), key_of(int(p), float(strength))))
            elif text == "bench-done":
                done = True
                break
        if done:  # the pages take the last state, then the harness stops serving
            last = published[-1][1]
            end = time.time() + 20
            while time.time() < end and not all(p.received and p.received[-1][1] == last for p in class_pages):
                for k, _ in sel.select(timeout=0.05):
                    k.data.on_readable()
        proc.stdin.close()
        proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in class_pages:
            p.sock.close()
    if result is None:
        return {"status": proc.returncode, "output": proc.stderr.read().decode(errors="replace")[-2000:]}
    if pages:
        # The drag frames only (the idle ones publish one state): from the first drag's publish.
        first = next((i for i, (_, k) in enumerate(published) if k != published[0][1]), 0)
        all_lags, ended = [], 0
        for p in class_pages:
            lags, complete = lag_of(p, published[first:])
            all_lags += lags
            ended += complete and p.received[-1][1] == published[-1][1]
        all_lags.sort()
        result["pages"] = {"pages": pages, "states_published": len(published) - first,
                           "ended_on_latest": ended, "messages_min": min(len(p.received) for p in class_pages),
                           "lag_worst_ms": all_lags[-1] if all_lags else None,
                           "lag_p99_ms": all_lags[len(all_lags) * 99 // 100] if all_lags else None,
                           "lag_median_ms": statistics.median(all_lags) if all_lags else None,
                           "closed": sum(p.closed for p in class_pages)}
    return result


def run(binary, frames=300, pages=60, runs=2, out=print):
    """Alternating runs without and with pages; the summary (None when no harness)."""
    alone, served = [], []
    for _ in range(runs):
        for n, into in ((0, alone), (pages, served)):
            r = run_once(binary, frames, n)
            if r is None:
                return None
            if "median_drag_ms" not in r:
                out(f"bench_serve: the harness failed ({pages} pages): {r}")
                return {"error": r}
            into.append(r)
            extra = ""
            if "pages" in r:
                g = r["pages"]
                extra = (f"; pages: {g['ended_on_latest']}/{g['pages']} ended on the latest state, lag worst "
                         f"{g['lag_worst_ms']:.0f} ms, p99 {g['lag_p99_ms']:.0f} ms, median {g['lag_median_ms']:.0f} ms "
                         f"over {g['states_published']} states (fewest messages a page took: {g['messages_min']})")
            out(f"{n:>3} pages: drag frame median {r['median_drag_ms']:.2f} ms, p95 {r['p95_drag_ms']:.2f} ms "
                f"(at T/2: {r['median_drag_mid_ms']:.2f} ms); idle {r['median_idle_ms']:.2f} ms; publish "
                f"{r['drag_parts_ms']['after']:.2f} ms{extra}")
    a = statistics.median(r["median_drag_ms"] for r in alone)
    w = statistics.median(r["median_drag_ms"] for r in served)
    a95 = statistics.median(r["p95_drag_ms"] for r in alone)
    w95 = statistics.median(r["p95_drag_ms"] for r in served)
    worst = max(r["pages"]["lag_worst_ms"] for r in served)
    out(f"drag frame with {pages} pages / without: median {w:.2f} / {a:.2f} ms = {w / a:.2f}, p95 {w95:.2f} / {a95:.2f} ms "
        f"= {w95 / a95:.2f} (goal: at most 1.5); the pages' worst lag {worst:.0f} ms (goal: within 500 ms)")
    return {"frames": frames, "pages": pages, "alone": alone, "with_pages": served, "ratio_median": w / a,
            "ratio_p95": w95 / a95, "lag_worst_ms": worst}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="build/attnviz", help="attnviz, with attnviz_harness beside it (default build/attnviz)")
    ap.add_argument("--frames", type=int, default=300, help="frames per part of the benchmark (default 300)")
    ap.add_argument("--pages", type=int, default=60, help="pages following (default 60)")
    ap.add_argument("--runs", type=int, default=2, help="runs of each configuration, alternating (default 2)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    for name, v, lo, hi in (("--frames", args.frames, 1, 100000), ("--pages", args.pages, 1, 1000), ("--runs", args.runs, 1, 100)):
        if not lo <= v <= hi:
            print(f"bench_serve.py: {name} {v} is out of range; give {lo} to {hi}", file=sys.stderr)
            return 2
    harness = os.path.join(os.path.dirname(args.bin), "attnviz_harness")
    if not os.access(harness, os.X_OK):
        print(f"bench_serve.py: {harness} is not an executable; run make build first or give --bin PATH", file=sys.stderr)
        return 2
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; load average at start: "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    res = run(args.bin, args.frames, args.pages, args.runs)
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0 if res and "error" not in res else 1


if __name__ == "__main__":
    sys.exit(main())
