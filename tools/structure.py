#!/usr/bin/env python3
"""structure.py: checks the shape of simrun's code (sim/, policies/, reports/).

The rules, from issue 11 ("no god files, no include cycle"):
  cycle     no include cycle between modules;
  reach     no file in policies/ reaches sim/scenario.h, sim/world.h,
            sim/checker.h or sim/evq.h, directly or through other headers;
  function  no function longer than 100 lines (from the line of its name to
            its closing brace);
  file      no source file longer than 1,500 lines.

Modules.  A module is a source file and its header (sim/evq.c + sim/evq.h);
a header or a source file without the other is a module by itself (sim/rng.h,
policies/poll.c).  Two naming rules let a module span several files:
  - a private header X_int.h (or X_priv.h, X_private.h, X_impl.h,
    X_internal.h) belongs to module X when X.h exists;
  - a source file X_part.c without a header of its own belongs to module X
    when X.h exists (sim/scenario_lex.c is part of the scenario module).
Module A depends on module B when a file of A includes a header of B; a
cycle is a cycle in that graph.

Exceptions (--exceptions FILE): one per line, `path` (the file may be too
long, or, for a file in policies/, may reach the forbidden headers) or
`path:function` (that function may be too long); blank lines and lines
starting with '#' are ignored.  An exception that matches nothing is
reported as a note.  Cycles have no exceptions.

Usage:
  tools/structure.py [--root DIR] [--exceptions FILE]   check; exit 1 on a violation
  tools/structure.py --graph [--dot]                    print the module include graph
  tools/structure.py --functions                        print every function's length

ctags is not needed: functions are found by a small C scanner that removes
comments, strings and preprocessor lines and then matches top-level braces;
it assumes the project's style (a definition's body opens after its
parameter list's ')', possibly followed by __attribute__((...))).
"""

import argparse
import os
import re
import sys

DIRS = ("sim", "policies", "reports")
FORBIDDEN = ("sim/scenario.h", "sim/world.h", "sim/checker.h", "sim/evq.h")
MAX_FUNCTION_LINES = 100
MAX_FILE_LINES = 1500
PRIVATE_SUFFIXES = ("_int", "_priv", "_private", "_impl", "_internal")
INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
NOT_NAMES = {"__attribute__", "__declspec", "_Alignas", "__asm__", "asm"}


def source_files(root):
    """Every .c and .h under DIRS, as paths relative to root, sorted."""
    out = []
    for d in DIRS:
        top = os.path.join(root, d)
        for dirpath, _, names in os.walk(top):
            for n in names:
                if n.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/"))
    return sorted(out)


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def includes(text):
    """The quoted includes of a file, in order."""
    return INCLUDE_RE.findall(text)


# --- modules and the include graph ---------------------------------------------------------


def module_of_header(path, files):
    stem = path[:-2]
    for suf in PRIVATE_SUFFIXES:
        if stem.endswith(suf) and stem[: -len(suf)] + ".h" in files:
            return stem[: -len(suf)]
    return stem


def module_of_source(path, files, mod):
    """A source file's module: its header's, or that of the header whose
    name its own extends at an underscore (the longest), or its own."""
    stem = path[:-2]
    if stem + ".h" in files:
        return mod[stem + ".h"]
    d, base = os.path.split(stem)
    cut = base.rfind("_")
    while cut > 0:
        owner = (d + "/" if d else "") + base[:cut]
        if owner + ".h" in files:
            return mod[owner + ".h"]
        cut = base.rfind("_", 0, cut)
    return stem


def module_map(root, files):
    """path -> module name (the path of its header or source without the
    extension)."""
    fileset = set(files)
    mod = {}
    for f in files:
        if f.endswith(".h"):
            mod[f] = module_of_header(f, fileset)
    for f in files:
        if f.endswith(".c"):
            mod[f] = module_of_source(f, fileset, mod)
    return mod


def module_graph(root, files, mod):
    """module -> sorted list of modules it depends on (no self edges)."""
    fileset = set(files)
    g = {m: set() for m in mod.values()}
    for f in files:
        for inc in includes(read(root, f)):
            if inc in fileset and mod[inc] != mod[f]:
                g[mod[f]].add(mod[inc])
    return {m: sorted(deps) for m, deps in g.items()}


def find_cycles(g):
    """The strongly connected components with more than one module (Tarjan),
    each given as one cycle through all of its modules where possible."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            strong(v)
    return [cycle_path(g, c) for c in sorted(comps)]


def cycle_path(g, comp):
    """A closed walk inside comp from its first module back to it, for the
    message: the shortest path out to each module in turn."""
    inside = set(comp)

    def shortest(a, b):
        prev, todo = {a: None}, [a]
        while todo:
            nxt = []
            for v in todo:
                for w in g.get(v, ()):
                    if w in inside and w not in prev:
                        prev[w] = v
                        nxt.append(w)
            todo = nxt
        path, v = [], b
        while v is not None and v != a:
            path.append(v)
            v = prev.get(v)
        return list(reversed(path))

    walk, cur = [comp[0]], comp[0]
    for target in comp[1:]:
        if target in walk:
            continue
        step = shortest(cur, target)
        walk.extend(step)
        cur = target
    walk.extend(shortest(cur, comp[0]) if cur != comp[0] else [comp[0]])
    return walk


def reach_chains(root, start, fileset, targets):
    """For each header of targets that start reaches through includes (of
    headers, transitively), the shortest include chain to it, in the order of
    targets."""
    prev, todo = {start: None}, [start]
    while todo:
        nxt = []
        for f in todo:
            for inc in includes(read(root, f)):
                if inc in fileset and inc not in prev:
                    prev[inc] = f
                    nxt.append(inc)
        todo = nxt
    chains = []
    for t in targets:
        if t in prev:
            chain, v = [], t
            while v is not None:
                chain.append(v)
                v = prev[v]
            chains.append(list(reversed(chain)))
    return chains


# --- functions ---------------------------------------------------------------------------------


def strip_c(text):
    """text with comments, string and character literals and preprocessor
    lines blanked out (newlines kept, so that offsets keep their lines)."""
    out, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            while i < n:  # a directive, with its continuation lines
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                if text[i] == "\n":
                    break
                out.append(" ")
                i += 1
            continue
        line_start = False
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j - 1]) + c)
            i = j
            continue
        if c == "\n":
            line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def function_name(header):
    """(name, offset of the name in header) when header, the text between
    the previous top-level ';' or '}' and a top-level '{', is a function
    definition's; else None."""
    h = header.rstrip()
    while True:  # trailing __attribute__((...)) after the parameter list
        m = re.search(r"__attribute__\s*$", h[: h.rfind("((")]) if h.endswith("))") else None
        if not m:
            break
        h = h[: m.start()].rstrip()
    if not h.endswith(")") or re.search(r"(^|[^=!<>])=([^=]|$)", h):
        return None
    depth = 0
    for k, ch in enumerate(h):
        if ch == "(":
            if depth == 0:
                m = IDENT_RE.search(h[:k].rstrip())
                if m and m.group(0) not in NOT_NAMES:
                    return m.group(0), m.start()
            depth += 1
        elif ch == ")":
            depth -= 1
    return None


def functions(text):
    """(name, first_line, last_line) of every function definition: from the
    line of its name to the line of its closing brace, 1-based."""
    s = strip_c(text)
    out, depth, boundary = [], 0, 0
    name, name_line = None, 0
    for i, ch in enumerate(s):
        if ch == "{":
            if depth == 0:
                header = s[boundary:i]
                fn = function_name(header)
                if fn:
                    name = fn[0]
                    name_line = s.count("\n", 0, boundary + fn[1]) + 1
                else:
                    name = None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if name:
                    out.append((name, name_line, s.count("\n", 0, i) + 1))
                name, boundary = None, i + 1
            if depth < 0:
                depth = 0
        elif ch == ";" and depth == 0:
            boundary = i + 1
    return out


# --- exceptions and the check ------------------------------------------------------------------


def read_exceptions(path):
    """The entries of an exceptions file: one `path` or `path:function` a
    line; '#' starts a comment."""
    ex = []
    if path:
        with open(path, encoding="utf-8") as f:
            for raw in f:
                line = raw.split("#", 1)[0].strip()
                if line:
                    ex.append(line)
    return ex


def check(root, exceptions, out):
    files = source_files(root)
    fileset = set(files)
    mod = module_map(root, files)
    g = module_graph(root, files, mod)
    used = set()
    bad = 0

    for cyc in find_cycles(g):
        print("structure: include cycle: " + " -> ".join(cyc), file=out)
        bad += 1

    for f in files:
        if not f.startswith("policies/"):
            continue
        chains = reach_chains(root, f, fileset, FORBIDDEN)
        if chains:
            if f in exceptions:
                used.add(f)
                continue
            print("structure: %s reaches %s" % (f, ", ".join("%s (%s)" % (c[-1], " -> ".join(c[1:])) for c in chains)),
                  file=out)
            bad += 1

    for f in files:
        text = read(root, f)
        nlines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if nlines > MAX_FILE_LINES:
            if f in exceptions:
                used.add(f)
            else:
                print("structure: %s: %d lines (limit %d)" % (f, nlines, MAX_FILE_LINES), file=out)
                bad += 1
        for name, first, last in functions(text):
            length = last - first + 1
            if length <= MAX_FUNCTION_LINES:
                continue
            key = "%s:%s" % (f, name)
            if key in exceptions:
                used.add(key)
                continue
            print("structure: %s:%d: function %s is %d lines (limit %d)" % (f, first, name, length,
                                                                           MAX_FUNCTION_LINES), file=out)
            bad += 1

    for e in exceptions:
        if e not in used:
            print("structure: note: exception '%s' matches nothing (remove it)" % e, file=out)
    return bad


def print_graph(root, dot, out):
    files = source_files(root)
    mod = module_map(root, files)
    g = module_graph(root, files, mod)
    members = {}
    for f, m in mod.items():
        members.setdefault(m, []).append(f)
    if dot:
        print("digraph includes {", file=out)
        print("    rankdir=LR; node [shape=box, fontname=monospace];", file=out)
        for m in sorted(g):
            for d in g[m]:
                print('    "%s" -> "%s";' % (m, d), file=out)
        print("}", file=out)
        return
    for m in sorted(g):
        files_of = ", ".join(os.path.basename(f) for f in sorted(members[m]))
        print("%-22s -> %s   [%s]" % (m, " ".join(g[m]) if g[m] else "(leaf)", files_of), file=out)
    cycles = find_cycles(g)
    print("cycles: %s" % ("; ".join(" -> ".join(c) for c in cycles) if cycles else "none"), file=out)


def main(argv):
    ap = argparse.ArgumentParser(description="Checks the module structure of simrun.")
    ap.add_argument("--root", default=".", help="the source tree (default: .)")
    ap.add_argument("--exceptions", help="file of known violations, one path or path:function a line")
    ap.add_argument("--graph", action="store_true", help="print the module include graph and exit")
    ap.add_argument("--dot", action="store_true", help="with --graph: in Graphviz DOT")
    ap.add_argument("--functions", action="store_true", help="print every function's length and exit")
    a = ap.parse_args(argv)
    if a.graph:
        print_graph(a.root, a.dot, sys.stdout)
        return 0
    if a.functions:
        for f in source_files(a.root):
            for name, first, last in functions(read(a.root, f)):
                print("%5d %s:%d %s" % (last - first + 1, f, first, name))
        return 0
    bad = check(a.root, read_exceptions(a.exceptions), sys.stdout)
    if bad:
        print("structure: %d violation%s%s" % (bad, "" if bad == 1 else "s",
                                              " (known exceptions: %s)" % a.exceptions if a.exceptions else ""))
        return 1
    print("structure: ok")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.exit(1)
