#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
"""Checks the rv ABI figures measured by layout.c (see run.sh).

Input: for each ABI, the assembler output of layout.c (its "->" lines),
the object file built with -g (its DWARF), and the "gcc -dM -E" macro dump
of the header; the header itself; expected-x86_64.txt.

Output: TAP result lines without numbers ("ok - ...", "not ok - ...",
"# ..."); run.sh numbers them. Exit status 0 even when a check fails (the
result lines carry it); 2 on a usage or input error.
"""

import argparse
import re
import subprocess
import sys
from collections import OrderedDict

ABIS = ("x86_64", "i386", "x32")
PTR_SIZE = {"x86_64": 8, "i386": 4, "x32": 4}
DIRS = {0: "NONE", 1: "W", 2: "R", 3: "RW"}
# structs of the table that are not declared by the header
TEST_ONLY_STRUCTS = {"rv_event_legacy"}


class Results:
    def __init__(self):
        self.lines = []

    def check(self, ok, desc, diags=()):
        self.lines.append(("ok - " if ok else "not ok - ") + desc)
        for d in diags:
            self.lines.append("# " + d)

    def diag(self, text):
        self.lines.append("# " + text)

    def dump(self):
        sys.stdout.write("".join(line + "\n" for line in self.lines))


def norm_path(path):
    return re.sub(r"\s+", "", path)


class Layout:
    """The figures of one ABI, from layout.c's "->" lines."""

    def __init__(self):
        self.structs = OrderedDict()  # name -> (size, align, holecheck)
        self.fields = OrderedDict()   # name -> OrderedDict(path -> (kind, off, size))
        self.ioctls = OrderedDict()   # name -> (type, nr, dir, size, value)
        self.consts = OrderedDict()   # label -> value
        self.nonint = []              # names


def parse_asm(path):
    lay = Layout()
    pat = re.compile(r'^\s*\.ascii\s+"->(.*)"\s*$')
    with open(path) as f:
        for line in f:
            m = pat.match(line)
            if not m:
                continue
            tok = m.group(1).split(" ", 2)
            kind = tok[0]
            if kind == "S":
                name, rest = tok[1], tok[2].split()
                lay.structs[name] = (int(rest[0]), int(rest[1]), rest[2] == "1")
                lay.fields.setdefault(name, OrderedDict())
            elif kind in ("F", "P", "X"):
                name = tok[1]
                # the path may contain spaces ("in. addr"): the last two
                # words are the numbers
                words = tok[2].rsplit(None, 2)
                p = norm_path(words[0])
                lay.fields.setdefault(name, OrderedDict())[p] = (
                    kind, int(words[1]), int(words[2]))
            elif kind == "I":
                v = [int(x) for x in tok[2].split()]
                lay.ioctls[tok[1]] = (v[0], v[1], v[2], v[3], v[4] | (v[5] << 16))
            elif kind == "K":
                v = [int(x) for x in tok[2].split()]
                lay.consts[tok[1]] = v[0] | v[1] << 16 | v[2] << 32 | v[3] << 48
            elif kind == "N":
                lay.nonint.append(tok[1].strip())
            else:
                raise ValueError("%s: unknown line %r" % (path, line))
    return lay


def parse_expected(path):
    lay = Layout()
    strings = OrderedDict()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            w = line.split()
            try:
                if w[0] == "S":
                    lay.structs[w[1]] = (int(w[2], 0), int(w[3], 0), None)
                    lay.fields.setdefault(w[1], OrderedDict())
                elif w[0] in ("F", "P", "X"):
                    lay.fields.setdefault(w[1], OrderedDict())[w[2]] = (
                        w[0], int(w[3], 0), int(w[4], 0))
                elif w[0] == "I":
                    d = [k for k, v in DIRS.items() if v == w[4]][0]
                    lay.ioctls[w[1]] = (int(w[2], 0), int(w[3], 0), d, int(w[5], 0), None)
                elif w[0] == "K":
                    lay.consts[w[1]] = int(w[2], 0)
                elif w[0] == "T":
                    strings[w[1]] = line.split(None, 2)[2]
                else:
                    raise ValueError(w[0])
            except (ValueError, IndexError):
                raise SystemExit("%s:%d: cannot parse %r" % (path, n, line))
    return lay, strings


# ---------------------------------------------------------------- DWARF

def parse_dwarf(obj, readelf):
    """DIEs of obj: offset -> dict(tag, attrs, children)."""
    out = subprocess.run([readelf, "--debug-dump=info", "--wide", obj],
                         check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    die_re = re.compile(r"^\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: (\d+)(?: \((\w+)\))?")
    attr_re = re.compile(r"^\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*?)\s*$")
    dies = {}
    stack = []  # (depth, offset)
    cur = None
    for line in out.splitlines():
        m = die_re.match(line)
        if m:
            depth, off, abbrev, tag = int(m.group(1)), int(m.group(2), 16), m.group(3), m.group(4)
            if abbrev == "0":
                cur = None
                continue
            cur = {"tag": tag, "attrs": {}, "children": []}
            dies[off] = cur
            while stack and stack[-1][0] >= depth:
                stack.pop()
            if stack:
                dies[stack[-1][1]]["children"].append(off)
            stack.append((depth, off))
            continue
        m = attr_re.match(line)
        if m and cur is not None:
            # newer readelf prefixes the form: "(data1) 8", "(strp) (offset..."
            cur["attrs"][m.group(1)] = re.sub(r"^\(\w+\)\s*", "", m.group(2))
    return dies


def dw_name(die):
    v = die["attrs"].get("DW_AT_name")
    if v is None:
        return None
    if v.startswith("("):  # "(indirect string, offset: 0x..): name"
        v = v.split("): ", 1)[1]
    return v.strip()


def dw_int(v):
    m = re.match(r"^(0x[0-9a-f]+|-?\d+)\b", v)
    if m:
        return int(m.group(1), 0)
    m = re.search(r"DW_OP_plus_uconst: (\d+)", v)
    if m:
        return int(m.group(1))
    raise ValueError(v)


def dw_ref(die):
    v = die["attrs"].get("DW_AT_type")
    return int(re.match(r"<0x([0-9a-f]+)>", v).group(1), 16) if v else None


def dw_strip(dies, off):
    while off is not None and dies[off]["tag"] in (
            "DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type",
            "DW_TAG_atomic_type"):
        off = dw_ref(dies[off])
    return off


def dw_size(dies, off):
    """Byte size of a type, None for an array without bound."""
    off = dw_strip(dies, off)
    die = dies[off]
    if "DW_AT_byte_size" in die["attrs"]:
        return dw_int(die["attrs"]["DW_AT_byte_size"])
    if die["tag"] == "DW_TAG_array_type":
        n = dw_size(dies, dw_ref(die))
        for c in die["children"]:
            sub = dies[c]["attrs"]
            if "DW_AT_count" in sub:
                n *= dw_int(sub["DW_AT_count"])
            elif "DW_AT_upper_bound" in sub:
                n *= dw_int(sub["DW_AT_upper_bound"]) + 1
            else:
                return None
        return n
    raise ValueError("no size for DIE 0x%x" % off)


def dwarf_layouts(dies):
    """name -> (size, OrderedDict(path -> (off, size))) for struct rv_*."""
    res = OrderedDict()

    def walk(toff, prefix, base, acc):
        for c in dies[toff]["children"]:
            m = dies[c]
            if m["tag"] != "DW_TAG_member":
                continue
            loc = m["attrs"].get("DW_AT_data_member_location")
            off = base + (dw_int(loc) if loc else 0)
            t = dw_strip(dies, dw_ref(m))
            name = dw_name(m)
            agg = dies[t]["tag"] in ("DW_TAG_structure_type", "DW_TAG_union_type")
            if name is None:
                if agg:
                    walk(t, prefix, off, acc)
                continue
            path = prefix + name
            acc[path] = (off, dw_size(dies, dw_ref(m)))
            tname = dw_name(dies[t])
            if agg and (tname is None or tname.startswith("rv_")):
                walk(t, path + ".", off, acc)

    for off, die in dies.items():
        if die["tag"] not in ("DW_TAG_structure_type", "DW_TAG_union_type"):
            continue
        name = dw_name(die)
        if not name or not name.startswith("rv_") or "DW_AT_declaration" in die["attrs"]:
            continue
        if die["tag"] == "DW_TAG_union_type":
            name = "union " + name
        acc = OrderedDict()
        walk(off, "", 0, acc)
        res[name] = (dw_int(die["attrs"]["DW_AT_byte_size"]), acc)
    return res


# ---------------------------------------------------------------- checks

def header_names(header):
    with open(header) as f:
        text = f.read()
    # drop comments so that "struct rv_x" in prose does not count
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    tags = OrderedDict((t, 1) for t in re.findall(r"\bstruct\s+(rv_\w+)\s*\{", text))
    macros = OrderedDict((m, 1) for m in re.findall(r"^\s*#\s*define\s+(\w+)", text, flags=re.M))
    return list(tags), list(macros)


def check_header_lists(res, header, lay):
    tags, macros = header_names(header)
    table = [s for s in lay.structs if s not in TEST_ONLY_STRUCTS]
    missing = [t for t in tags if t not in lay.structs]
    stale = [t for t in table if t not in tags]
    res.check(not missing and not stale,
              "table: the %d struct rv_* tags defined in the header are all listed" % len(tags),
              ["struct %s is in the header but not in abi_table.h" % t for t in missing]
              + ["struct %s is in abi_table.h but not defined in the header" % t for t in stale])
    listed = set(lay.ioctls) | set(lay.consts) | set(lay.nonint)
    missing = [m for m in macros if m not in listed]
    res.check(not missing,
              "table: the %d macros #defined in the header are all listed" % len(macros),
              ["#define %s is not in abi_table.h (ABI_IOCTL, ABI_CONST or ABI_NONINT)" % m
               for m in missing])


def check_dwarf(res, abi, lay, dw):
    diags = []
    for name, (size, members) in dw.items():
        if name not in lay.structs:
            diags.append("%s: in the debug info but not in abi_table.h" % name)
            continue
        if lay.structs[name][0] != size:
            diags.append("%s: DWARF size %d, asm dump %d" % (name, size, lay.structs[name][0]))
        table = lay.fields.get(name, {})
        for path, (off, msize) in members.items():
            if path not in table:
                diags.append("%s.%s: member missing from abi_table.h" % (name, path))
                continue
            kind, toff, tsize = table[path]
            if toff != off or (kind != "X" and msize is not None and tsize != msize):
                diags.append("%s.%s: DWARF @%d [%s], asm dump @%d [%d]"
                             % (name, path, off, msize, toff, tsize))
        for path in table:
            if path not in members:
                diags.append("%s.%s: listed in abi_table.h but not a member" % (name, path))
    for name in lay.structs:
        if name not in dw:
            diags.append("%s: listed but not in the debug info" % name)
    res.check(not diags,
              "%s: debug info shows every member listed, at the measured offsets (%d structs)"
              % (abi, len(dw)), diags)


def fmt_field(kind, off, size):
    return "@%d [%d]%s" % (off, size, {"P": " (pointer)", "X": " (flexible array)"}.get(kind, ""))


def struct_figures(lay, name, ptr_neutral):
    """Comparable figures of one struct: key -> text."""
    out = OrderedDict()
    if name in lay.structs:
        size, align, _ = lay.structs[name]
        out["(size)"] = str(size)
        out["(alignment)"] = str(align)
    for path, (kind, off, size) in lay.fields.get(name, {}).items():
        if kind == "P" and ptr_neutral:
            out[path] = "@%d (pointer)" % off
        else:
            out[path] = fmt_field(kind, off, size)
    return out


def compare_figures(a_name, a, b_name, b, struct):
    diags = []
    for k in list(a) + [k for k in b if k not in a]:
        va, vb = a.get(k, "(absent)"), b.get(k, "(absent)")
        if va != vb:
            what = "%s %s" % (struct, k) if k.startswith("(") else "%s.%s" % (struct, k)
            diags.append("%s: %s %s, %s %s" % (what, a_name, va, b_name, vb))
    return diags


def holes(lay, name):
    """Hidden holes of struct name: list of messages."""
    size = lay.structs[name][0]
    fields = lay.fields.get(name, {})
    children = OrderedDict()
    for path, f in fields.items():
        parent = path.rsplit(".", 1)[0] if "." in path else ""
        children.setdefault(parent, []).append((path, f))
    msgs = []
    for parent, members in children.items():
        if parent:
            if parent not in fields:
                msgs.append("%s: parent of %s is not listed" % (parent, members[0][0]))
                continue
            _, pbase, psize = fields[parent]
        else:
            pbase, psize = 0, size
        where = parent or "(top)"
        # members at the same offset form a union (anonymous unions are
        # flattened in the paths): it counts once, with its largest size
        groups = OrderedDict()
        flex = None
        for path, (kind, off, msize) in members:
            if kind == "X":
                flex = (path, off - pbase)
                continue
            groups.setdefault(off - pbase, []).append((path, msize))
        pos = 0
        last = "start"
        for off in sorted(groups):
            g = groups[off]
            if off > pos:
                msgs.append("%s: hole of %d bytes at offset %d (after %s)"
                            % (where, off - pos, pbase + pos, last))
            elif off < pos:
                msgs.append("%s: %s at offset %d overlaps %s"
                            % (where, g[0][0], pbase + off, last))
            end = off + max(s for _, s in g)
            if end > pos:
                pos, last = end, "/".join(p for p, _ in g)
        if pos < psize:
            msgs.append("%s: %d bytes of tail padding at offset %d (after %s)"
                        % (where, psize - pos, pbase + pos, last))
        if flex and flex[1] != psize:
            msgs.append("%s: flexible array %s at offset %d, not at the end (%d)"
                        % (where, flex[0], pbase + flex[1], pbase + psize))
    return msgs


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--build", required=True,
                    help="directory with layout-<abi>.s, layout-<abi>.o, macros-<abi>.txt")
    ap.add_argument("--readelf", default="readelf")
    ap.add_argument("--print", dest="print_abi", choices=ABIS,
                    help="print the figures measured for one ABI, in the format "
                         "of expected-x86_64.txt, and check nothing")
    args = ap.parse_args()

    lays = OrderedDict()
    for abi in ABIS:
        lays[abi] = parse_asm("%s/layout-%s.s" % (args.build, abi))
    x86 = lays["x86_64"]

    if args.print_abi:
        lay = lays[args.print_abi]
        for name, (size, align, _) in lay.structs.items():
            print("S %s %d %d" % (name, size, align))
            for path, (kind, off, sz) in lay.fields[name].items():
                print("%s %s %s %d %d" % (kind, name, path, off, sz))
        for name, (t, nr, d, sz, _) in lay.ioctls.items():
            print("I %s 0x%x 0x%x %s %d" % (name, t, nr, DIRS[d], sz))
        for name, v in lay.consts.items():
            print("K %s %d" % (name, v))
        return 0

    res = Results()
    exp, exp_strings = parse_expected(args.expected)

    # -- the table is complete
    check_header_lists(res, args.header, x86)
    for abi in ABIS:
        check_dwarf(res, abi, lays[abi],
                    dwarf_layouts(parse_dwarf("%s/layout-%s.o" % (args.build, abi), args.readelf)))
    for abi in ABIS[1:]:
        a, b = set(x86.structs), set(lays[abi].structs)
        if a != b:
            res.check(False, "%s measures the same structs as x86_64" % abi,
                      ["only on one ABI: %s" % s for s in sorted(a ^ b)])

    # -- structs: the same on all ABIs, as expected, no hidden holes
    for name in x86.structs:
        figs = {abi: struct_figures(lays[abi], name, True) for abi in ABIS}
        diags = []
        for abi in ABIS[1:]:
            diags += compare_figures("x86_64", figs["x86_64"], abi, figs[abi], name)
        for abi in ABIS:
            for path, (kind, off, size) in lays[abi].fields.get(name, {}).items():
                if kind == "P" and size != PTR_SIZE[abi]:
                    diags.append("%s.%s (%s): pointer of %d bytes" % (name, path, abi, size))
        res.check(not diags, "struct %s: same layout on x86_64, i386 and x32" % name, diags)

        if name in exp.structs:
            diags = compare_figures("x86_64", struct_figures(x86, name, False),
                                    "expected", struct_figures(exp, name, False), name)
            res.check(not diags, "struct %s: x86_64 layout as in expected-x86_64.txt" % name,
                      diags)
        else:
            res.check(False, "struct %s: x86_64 layout as in expected-x86_64.txt" % name,
                      ["struct %s is not in expected-x86_64.txt" % name])

        if x86.structs[name][2]:
            diags = []
            for abi in ABIS:
                diags += ["%s (%s): %s" % (name, abi, m) for m in holes(lays[abi], name)]
            res.check(not diags, "struct %s: members fill it, no hidden hole (3 ABIs)" % name,
                      diags)
    stale = [s for s in exp.structs if s not in x86.structs]
    if stale:
        res.check(False, "expected-x86_64.txt: every struct is measured",
                  ["struct %s is expected but not in abi_table.h" % s for s in stale])

    # -- ioctls
    for name in x86.ioctls:
        diags = []
        want = exp.ioctls.get(name)
        if want is None:
            diags.append("%s is not in expected-x86_64.txt" % name)
        for abi in ABIS:
            got = lays[abi].ioctls.get(name)
            if got is None:
                diags.append("%s: not measured on %s" % (name, abi))
                continue
            if want is not None and got[:4] != want[:4]:
                diags.append("%s (%s): type 0x%x nr 0x%x dir %s size %d, expected "
                             "type 0x%x nr 0x%x dir %s size %d"
                             % ((name, abi) + got[:2] + (DIRS[got[2]], got[3])
                                + want[:2] + (DIRS[want[2]], want[3])))
            if got[4] != x86.ioctls[name][4]:
                diags.append("%s: 0x%08x on %s, 0x%08x on x86_64"
                             % (name, got[4], abi, x86.ioctls[name][4]))
        t, nr, d, sz, v = x86.ioctls[name]
        res.check(not diags, "%s = 0x%08x: type 0x%x, nr 0x%x, %s, %d bytes on all 3 ABIs"
                  % (name, v, t, nr, DIRS[d], sz), diags)
    stale = [s for s in exp.ioctls if s not in x86.ioctls]
    if stale:
        res.check(False, "expected-x86_64.txt: every ioctl is measured",
                  ["%s is expected but not in abi_table.h" % s for s in stale])

    # -- constants
    diags = []
    for abi in ABIS[1:]:
        for k in x86.consts:
            if lays[abi].consts.get(k) != x86.consts[k]:
                diags.append("%s: %s on x86_64, %s on %s"
                             % (k, x86.consts[k], lays[abi].consts.get(k), abi))
    res.check(not diags, "constants: the %d values are the same on x86_64, i386 and x32"
              % len(x86.consts), diags)
    diags = []
    for k in list(x86.consts) + [k for k in exp.consts if k not in x86.consts]:
        got, want = x86.consts.get(k), exp.consts.get(k)
        if got != want:
            diags.append("%s: %s, expected %s"
                         % (k, "0x%x" % got if got is not None else "not measured",
                            "0x%x" % want if want is not None else "nothing (not listed)"))
    res.check(not diags, "constants: values as in expected-x86_64.txt", diags)

    diags = []
    for abi in ABIS:
        c = lays[abi].consts
        leg = lays[abi].structs.get("rv_event_legacy", (None,))[0]
        if c.get("RV_EVENT_LEGACY_SIZE") != leg:
            diags.append("%s: RV_EVENT_LEGACY_SIZE %s, sizeof legacy event %s"
                         % (abi, c.get("RV_EVENT_LEGACY_SIZE"), leg))
        ev = lays[abi].structs.get("rv_event", (None,))[0]
        for n in (0, 1, "RV_MAX_CQ_ENTRIES"):
            k = "RV_RING_ALLOC_LEN(%s)" % n
            cnt = c.get("RV_MAX_CQ_ENTRIES") if n == "RV_MAX_CQ_ENTRIES" else n
            hdr = lays[abi].structs.get("rv_ring_header", (None,))[0]
            if None in (ev, hdr, cnt) or c.get(k) != cnt * ev + hdr:
                diags.append("%s: %s = %s, not %s * sizeof(struct rv_event) + "
                             "sizeof(struct rv_ring_header)" % (abi, k, c.get(k), n))
    res.check(not diags, "RV_EVENT_LEGACY_SIZE is the size of the ABI 1.6 event and "
              "RV_RING_ALLOC_LEN() counts 1.7 events, on all 3 ABIs", diags)

    # -- string macros, from "gcc -dM -E"
    for name, want in exp_strings.items():
        diags = []
        for abi in ABIS:
            got = None
            with open("%s/macros-%s.txt" % (args.build, abi)) as f:
                for line in f:
                    w = line.split(None, 2)
                    if len(w) == 3 and w[0] == "#define" and w[1] == name:
                        got = w[2].strip()
            if got != want:
                diags.append("%s (%s): %s, expected %s" % (name, abi, got, want))
        res.check(not diags, "%s is %s on all 3 ABIs" % (name, want), diags)

    res.dump()
    return 0


if __name__ == "__main__":
    sys.exit(main())
