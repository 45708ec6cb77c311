#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""call-circles.py: find circles in the calls between rv's source files.

    tools/testing/call-circles.py [-v] OBJDIR

OBJDIR holds the module's objects as kbuild left them (build-module.sh puts
them in build/modules/KVER/src/drivers/infiniband/ulp/rv). A file A calls
a file B when A.o needs a global function that B.o defines, as nm
reports them. Shared data (the module's workqueue, its parameters, the
tracepoints) and static inline helpers in headers are not calls. The KUnit suites
(*_test.o) reach into what they test, and the linked rv.o and rv.mod.o
repeat the others, so none of them is read.

Prints each group of files that call each other in a circle, one a line;
-v also prints every edge with the symbols behind it. Exit status: 0 when
there is no circle, 1 when there is one, 2 on a usage or nm error.
"""

import os
import subprocess
import sys


def symbols(path):
    """The global functions an object defines, and the symbols it needs."""
    out = subprocess.run(['nm', path], check=True, capture_output=True,
                         text=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'U':
            needed.add(parts[1])
        elif len(parts) == 3 and parts[1] == 'T':
            defined.add(parts[2])
    return defined, needed


def circles(edges, nodes):
    """Tarjan's strongly connected groups of more than one file."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return groups


def main(argv):
    verbose = len(argv) > 1 and argv[1] == '-v'
    args = argv[2:] if verbose else argv[1:]
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    objdir = args[0]
    objs = sorted(f for f in os.listdir(objdir)
                  if f.endswith('.o') and not f.endswith('_test.o')
                  and f not in ('rv.o', 'rv.mod.o'))
    if not objs:
        print(f'call-circles: no objects in {objdir}', file=sys.stderr)
        return 2
    try:
        syms = {f: symbols(os.path.join(objdir, f)) for f in objs}
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'call-circles: nm: {e}', file=sys.stderr)
        return 2
    owner = {s: f for f, (defined, _) in syms.items() for s in defined}
    edges, why = {}, {}
    for f, (_, needed) in syms.items():
        for s in needed:
            g = owner.get(s)
            if g and g != f:
                edges.setdefault(f, set()).add(g)
                why.setdefault((f, g), []).append(s)
    if verbose:
        for (f, g), names in sorted(why.items()):
            print(f'{f} -> {g}: {", ".join(sorted(names))}')
    groups = circles(edges, objs)
    for group in groups:
        print('circle: ' + ' '.join(group))
    return 1 if groups else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
