#!/usr/bin/env python3
"""Strict JSON check for the CLI's JSON outputs (issue 17 D9): the bytes must be well-formed UTF-8 (Python's
strict codec rejects encoded surrogates, overlong forms and stray bytes), parse as JSON (one document, or
JSON Lines with --lines), and hold no lone surrogate code point (a "\\ud800" escape parses in Python but is
rejected by strict consumers). Prints a one-line reason and exits 1 on the first problem."""
import json
import sys


def walk(v, where):
    if isinstance(v, str):
        for ch in v:
            if 0xD800 <= ord(ch) <= 0xDFFF:
                raise ValueError("lone surrogate U+%04X in a string (%s)" % (ord(ch), where))
    elif isinstance(v, dict):
        for k, x in v.items():
            walk(k, where)
            walk(x, where)
    elif isinstance(v, list):
        for x in v:
            walk(x, where)


def main():
    lines = sys.argv[1] == "--lines"
    files = sys.argv[2:] if lines else sys.argv[1:]
    for f in files:
        try:
            text = open(f, "rb").read().decode("utf-8", errors="strict")
            docs = [l for l in text.splitlines() if l] if lines else [text]
            for i, d in enumerate(docs):
                walk(json.loads(d), "%s doc %d" % (f, i + 1))
        except (UnicodeDecodeError, ValueError) as e:
            print("%s: %s" % (f, e))
            return 1
    return 0


sys.exit(main())
