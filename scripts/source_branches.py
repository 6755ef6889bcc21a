#!/usr/bin/env python3
"""Counts the places in src/state and src/ui that branch on the kind of source shown (the
lesson's block, a weights file's layer, a trained model, a whole GPT model): a line that both
names the kind (the variant's alternatives, std::visit over it, the shown model's pointer, a
GPT test) and branches (if, ?:, &&, ||, !, switch, a visit). The house's target is at most
30; a new question about the source belongs in src/state/source.cpp, answered in each kind's
group there. source.cpp's two visits are counted; its per-kind answers are not, since each is
the one place its kind answers, called by the same generic visit for every kind. Comparing the
shown model with another (`shown_model(s) == in`: is it the same input?) or passing it on
(`f(shown_model(s), ...)`) is not counted.

    scripts/source_branches.py [--list] [ROOT]
"""
import pathlib
import re
import sys

KIND = re.compile(r"\bmode\(|\bMode::|shown\.input\b|->gpt\(\)|\.gpt\(\)|holds_alternative<|get_if<|std::visit\(|"
                  r"(?<!== )(?<!!= )\bshown_model\(\w+\)(?!->|\.get\(\)| [!=]=|,)|\bshown_weights_file\(\w+\)(?!->|\.get\(\))|\bis_gpt\(|->received\b|"
                  r"\breceived_gpt\(|Arch::gpt\b")
BRANCH = re.compile(r"\bif \(|\?|&&|\|\||!\w|!\(|\bswitch \(|std::visit\(|holds_alternative<|get_if<")


def sites(root):
    out = []
    for sub in ("src/state", "src/ui"):
        for p in sorted((root / sub).rglob("*")):
            if p.suffix not in (".h", ".cpp"):
                continue
            for n, line in enumerate(p.read_text().splitlines(), 1):
                code = line.split("//", 1)[0]
                if KIND.search(code) and BRANCH.search(code):
                    out.append(f"{p.relative_to(root)}:{n}: {line.strip()}")
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--list"]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parent.parent)
    found = sites(root)
    if "--list" in sys.argv:
        print("\n".join(found))
    print(f"{len(found)} places in src/state and src/ui branch on the kind of source (target: at most 30)")


if __name__ == "__main__":
    main()
