#!/usr/bin/env python3
"""The web page's figures for docs/web.md ("Figures"), measured in one run:

  - the lesson's forward (C 8, H 2, T 4, reference kernel) and a (T, C, H) = (512, 512, 8)
    forward (the fast kernel, as the app picks at that size), in the page (headless Chromium,
    tests/web/browser_test.mjs --bench) and natively (attnviz bench), each a median; natively
    both as built (OpenBLAS, every core) and on one thread with Eigen's products, which is
    what the page has (no threads, no OpenBLAS);
  - the site's size, raw and gzipped (gzip -9, as a web server would send it);
    the timings come from the same page built with the tests' probes (build-web/probes/site,
    which has attnviz_web_bench), the sizes from the page users get (build-web/site);
  - the time from opening the page to the first frame drawn.

    python3 scripts/web_bench.py [--bin build/attnviz] [--web build-web] [--json FILE]

The native runs go before and after the page's, and the table gives the median of the two.
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def native_forward(binary, args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    out = subprocess.run([binary, "bench", *args], check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)["forward_ms"]


def native_round(binary):
    big = ["--n-embd", "512", "--n-head", "8", "--seq-len", "512"]
    one = {"OMP_NUM_THREADS": "1", "ATTNVIZ_PRODUCTS": "eigen"}
    return {
        "lesson_forward_ms": native_forward(binary, ["--kernel", "reference"]),
        "forward_512_512_8_ms": native_forward(binary, big),
        "forward_512_512_8_one_thread_eigen_ms": native_forward(binary, big, one),
    }


def site_sizes(site):
    raw = gz = 0
    files = {}
    for name in sorted(os.listdir(site)):
        with open(os.path.join(site, name), "rb") as f:
            data = f.read()
        z = len(gzip.compress(data, 9))
        files[name] = {"raw": len(data), "gzip": z}
        raw += len(data)
        gz += z
    return {"raw": raw, "gzip": gz, "files": files}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "attnviz"))
    ap.add_argument("--web", default=os.path.join(ROOT, "build-web"))
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    site = os.path.join(a.web, "site")
    probes_site = os.path.join(a.web, "probes", "site")
    for s in (site, probes_site):
        if not os.path.isfile(os.path.join(s, "index.html")):
            sys.exit(f"web_bench: no {s}/index.html; run make web first")

    before = native_round(a.bin)
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        subprocess.run(["node", os.path.join(ROOT, "tests", "web", "browser_test.mjs"), "--site", probes_site,
                        "--node-modules", os.path.join(a.web, "node", "node_modules"), "--attnviz", a.bin,
                        "--serve", os.path.join(ROOT, "web", "serve.py"), "--bench", tmp.name],
                       check=True, stdout=subprocess.DEVNULL)
        page = json.load(open(tmp.name))
    after = native_round(a.bin)
    native = {k: statistics.median([before[k], after[k]]) for k in before}

    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    result = {"machine": f"{model}, {os.cpu_count()} cores", "loadavg": " ".join(load), "page": page,
              "native": native, "site": site_sizes(site)}
    rows = [("lesson forward (reference kernel)", page["lesson_forward_ms"], native["lesson_forward_ms"]),
            ("(512, 512, 8) forward, fast kernel", page["forward_512_512_8_ms"], native["forward_512_512_8_ms"]),
            ("  the same, native on 1 thread with Eigen", page["forward_512_512_8_ms"],
             native["forward_512_512_8_one_thread_eigen_ms"])]
    print(f"machine: {result['machine']}; load average {result['loadavg']}")
    print(f"{'':44} {'page ms':>10} {'native ms':>10} {'page/native':>12}")
    for name, p, n in rows:
        print(f"{name:44} {p:10.4f} {n:10.4f} {p / n:12.2f}")
    s = result["site"]
    print(f"site: {s['raw'] / 1e6:.2f} MB raw, {s['gzip'] / 1e6:.2f} MB gzipped "
          + ", ".join(f"{k} {v['raw'] / 1e3:.0f}/{v['gzip'] / 1e3:.0f} kB" for k, v in s["files"].items()))
    print(f"first frame: {page['first_frame_ms_page']} ms after the page was opened (performance.now())")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
