#!/usr/bin/env python3
"""Lists the functions over 100 lines and the files over 500 lines in src (house-style.md).

    scripts/long_functions.py [DIR ...] [--function-lines N] [--file-lines N] [--check]

Prints one line per long function ("path:line  lines  name") and per long file
("path  lines"), longest first. A function's lines run from the first line of its
signature to its closing brace, as an editor shows them. With --check the exit status is
1 when anything is listed (0 otherwise), so CI can keep the tree short once it is.

C++ is read with a small brace matcher, not a compiler: comments, strings and
preprocessor lines are blanked out, namespaces and classes are looked into, and a brace
whose header has a parameter list is a function body (lambdas count as part of the
function they are written in). Python's standard library only.
"""
import argparse
import os
import re
import sys

SOURCE_EXT = (".cpp", ".h", ".hpp", ".cc", ".inc")
SCOPE_RE = re.compile(r'\b(namespace|extern\s+"C")\b')
TYPE_RE = re.compile(r"\b(struct|class|union|enum)\b")
NAME_RE = re.compile(r"([~\w:]+(?:\s*operator\s*\S+?)?)\s*\($")


def blank_out(text):
    """The text with comments, string and character literals and preprocessor lines replaced
    by spaces (newlines kept), so that braces and lines can be counted."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":  # a preprocessor line, with its continuations
            while i < n and not (text[i] == "\n" and text[i - 1] != "\\"):
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i)
            end = n if end < 0 or not m else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, line count) of each function body in a C++ file's text."""
    code = blank_out(text)
    found = []
    stack = []  # one kind per open brace: "scope", "type", "function", "block"
    header_start = 0  # where the text before the next brace at this level begins
    i = 0
    for i, c in enumerate(code):
        if c in ";}":
            if c == "}" and stack:
                kind, start, name = stack.pop()
                if kind == "function" and not any(k == "function" for k, _, _ in stack):
                    first = code.count("\n", 0, start) + 1
                    found.append((name, first, code.count("\n", 0, i) + 2 - first))
            header_start = i + 1
        elif c == "{":
            inside_function = any(k == "function" for k, _, _ in stack)
            header = code[header_start:i]
            kind, name = "block", ""
            if not inside_function:
                flat = " ".join(header.split())
                paren = flat.find("(")
                if SCOPE_RE.search(flat) and paren < 0:
                    kind = "scope"
                elif TYPE_RE.search(flat.split("(")[0]) and paren < 0:
                    kind = "type"
                elif paren >= 0 and not flat[:paren].rstrip().endswith("="):
                    kind = "function"
                    m = NAME_RE.search(flat[:paren + 1])
                    name = m.group(1) if m else flat[:paren].split()[-1] if flat[:paren].split() else "?"
            stripped = len(header) - len(header.lstrip())
            stack.append((kind, header_start + stripped, name))
            header_start = i + 1
    return found


def scan(dirs, function_lines, file_lines):
    long_functions, long_files = [], []
    for top in dirs:
        for root, _, names in os.walk(top):
            for name in sorted(names):
                if not name.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
                if lines > file_lines and not name.endswith(".inc"):  # .inc: generated tables
                    long_files.append((lines, path))
                for fn, first, count in functions(text):
                    if count > function_lines:
                        long_functions.append((count, path, first, fn))
    return sorted(long_functions, reverse=True), sorted(long_files, reverse=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", default=["src"], help="folders to read (default src)")
    ap.add_argument("--function-lines", type=int, default=100, help="list functions longer than this (default 100)")
    ap.add_argument("--file-lines", type=int, default=500, help="list files longer than this (default 500)")
    ap.add_argument("--check", action="store_true", help="exit status 1 when anything is listed")
    args = ap.parse_args()
    for d in args.dirs:
        if not os.path.isdir(d):
            print(f"long_functions: {d} is not a folder; give the source folder, e.g. src", file=sys.stderr)
            return 2
    fns, files = scan(args.dirs, args.function_lines, args.file_lines)
    print(f"functions over {args.function_lines} lines: {len(fns)}")
    for count, path, first, name in fns:
        print(f"  {path}:{first}  {count}  {name}")
    print(f"files over {args.file_lines} lines: {len(files)}")
    for count, path in files:
        print(f"  {path}  {count}")
    return 1 if args.check and (fns or files) else 0


if __name__ == "__main__":
    sys.exit(main())
