#!/usr/bin/env python3
"""scripts/long_functions.py on a made-up source tree: a 101-line function and a 501-line
file are listed, a 100-line function and a 500-line file are not, braces in comments,
strings and character literals do not count, a member function inside a namespace and a
class is found, and --check's exit status follows what is listed.

    tests/layers/test_long_functions.py SCRIPT
"""
import os
import subprocess
import sys
import tempfile


def function(name, lines, noise=""):
    """A function of exactly `lines` lines (signature to closing brace)."""
    body = [f"    x += {i}; {noise}" for i in range(lines - 2)]
    return [f"int {name}(int x) {{"] + body + ["}"]


def run(script, top, *args):
    r = subprocess.run([sys.executable, script, top, *args], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout


def main():
    script = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as top:
        src = os.path.join(top, "src")
        os.mkdir(src)
        lines = ["namespace a {", "// a stray } and { in a comment", "struct S {"]
        lines += ["    " + l for l in function("S::member_long", 101)]
        lines += ["};"]
        lines += function("just_100", 100, noise="/* } */ // {")
        lines += function("over_100", 101, noise='s = "}"; c = \'}\'; t = R"(})";')
        lines += ["} // namespace a"]
        with open(os.path.join(src, "a.cpp"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(src, "big.h"), "w") as f:
            f.write("// x\n" * 501)
        with open(os.path.join(src, "fine.h"), "w") as f:
            f.write("// x\n" * 500)
        status, out = run(script, src)
        if status != 0:
            failures.append(f"without --check the status is {status}, not 0")
        for want in ("a.cpp:4  101", "over_100", "big.h  501"):
            if want not in out:
                failures.append(f"{want!r} is not listed")
        if "member_long" not in out:
            failures.append("the member function in the struct is not listed")
        for unwanted in ("just_100", "fine.h"):
            if unwanted in out:
                failures.append(f"{unwanted!r} is listed but is within the limit")
        if "functions over 100 lines: 2" not in out:
            failures.append("the count of long functions is not 2")
        status, _ = run(script, src, "--check")
        if status != 1:
            failures.append(f"--check with long functions gives status {status}, not 1")
        status, _ = run(script, src, "--check", "--function-lines", "200", "--file-lines", "600")
        if status != 0:
            failures.append(f"--check within raised limits gives status {status}, not 0")
        status, _ = run(script, os.path.join(top, "missing"))
        if status != 2:
            failures.append(f"a missing folder gives status {status}, not 2")
    for f in failures:
        print("FAIL:", f)
    print("long_functions.py:", "ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
