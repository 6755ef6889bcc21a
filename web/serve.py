#!/usr/bin/env python3
"""Serves a built attnviz site (build-web/site/) on 127.0.0.1 and prints its address.

    python3 web/serve.py build-web/site [--port 8080]     (make web-serve)

Any static web server works for the site; this one also sends the cross-origin isolation
headers (COOP/COEP), which a build with threads would need, and .wasm's MIME type.
--port 0 takes a free port; the first line printed is the address, for scripts.
"""
import argparse
import functools
import http.server
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".js": "text/javascript"}

    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, fmt, *args):  # quiet: one line per request is noise in a terminal
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", help="the folder to serve, e.g. build-web/site")
    ap.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (0: a free one)")
    a = ap.parse_args()
    handler = functools.partial(Handler, directory=a.site)
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), handler)
    except OSError as e:
        sys.exit(f"web-serve: cannot listen on 127.0.0.1:{a.port} ({e.strerror}); try make web-serve WEB_PORT=8081")
    print(f"http://127.0.0.1:{server.server_address[1]}/", flush=True)
    print("Serving attnviz; Ctrl+C stops.", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
