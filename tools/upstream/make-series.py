#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write rv's upstream patch series (make upstream).

    make-series.py --base LINUX-SOURCE-DIR [--out DIR]
    make-series.py --header IN OUT

Reads tools/upstream/series.txt and builds the series from this tree's
files in a small git repository (OUT/git) whose first commit holds the
kernel files the series edits, taken from LINUX-SOURCE-DIR; then writes
`git format-patch` output to OUT, the cover letter first, its text from
tools/upstream/cover-letter.txt. Each patch's commit is tagged patch-N in
OUT/git, for tools/upstream/check-series.sh. The result depends only on
the tree and the base: author, dates and identity are fixed, so that
the series never drifts from the tree and two runs give the same bytes.

The C files and headers go through `unifdef -DRV_UPSTREAM`: the series
proposes only the uAPI current PSM3 uses (docs/uapi-upstream.md), while
the out-of-tree module, built without RV_UPSTREAM, keeps the older forms
for deployed clients. In the uAPI header, the members that those forms
share through a macro are then the one struct's own (--header writes
only that header, for the ABI tests).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# The kernel files the series edits (edit NAME in series.txt), and
# MAINTAINERS, which every patch that adds files edits.
EDITED = [
    'MAINTAINERS',
    'include/uapi/rdma/rdma_user_ioctl.h',
    'drivers/infiniband/Kconfig',
    'drivers/infiniband/ulp/Makefile',
    'Documentation/infiniband/index.rst',
]

ENTRY_NAME = 'RV - SHARED RC CONNECTIONS AND MR CACHE FOR RDMA RENDEZVOUS'
MODDIR = 'drivers/infiniband/ulp/rv/'


class Patch:
    def __init__(self, subject):
        self.subject = subject
        self.adds = []          # [path, [drop, ...]]: add or update
        self.edits = []
        self.msg = []


def parse_series(path):
    patches = []
    in_msg = False
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if in_msg:
                if line == 'end':
                    in_msg = False
                else:
                    patches[-1].msg.append(line)
                continue
            if not line.strip() or line.startswith('#'):
                continue
            word, _, rest = line.lstrip().partition(' ')
            if line[0].isspace() and word not in ('drop', 'sub'):
                sys.exit(f'{path}:{n}: an indented line that is neither drop nor sub')
            if word == 'patch':
                patches.append(Patch(rest))
            elif not patches:
                sys.exit(f'{path}:{n}: "{word}" before the first patch')
            elif word in ('add', 'update'):
                patches[-1].adds.append([rest, [], word, n])
            elif word in ('drop', 'sub') and line[0].isspace():
                if not patches[-1].adds:
                    sys.exit(f'{path}:{n}: "drop" without a file')
                patches[-1].adds[-1][1].append((word, rest.strip(), n))
            elif word == 'edit':
                patches[-1].edits.append(rest)
            elif word == 'msg':
                in_msg = True
            else:
                sys.exit(f'{path}:{n}: unknown line "{line}"')
    if in_msg:
        sys.exit(f'{path}: msg without end')
    return patches


def find_one(lines, regex, start, where):
    """The index of the one line from start on that matches regex."""
    hits = [i for i in range(start, len(lines)) if re.search(regex, lines[i])]
    if len(hits) != 1:
        sys.exit(f'{where}: {regex!r} matches {len(hits)} lines, not one')
    return hits[0]


def function_span(lines, name, where):
    """The lines of the definition of the function name: its comment, its
    signature (the return type may be on the line before) and its body."""
    i = find_one(lines, r'^([a-z].*\W)?' + re.escape(name) + r'\(', 0, where)
    start = i
    if start > 0 and lines[start - 1] and not re.search(r'[;{}/]$', lines[start - 1]):
        start -= 1
    if start > 0 and lines[start - 1].endswith('*/'):
        while not lines[start - 1].startswith('/*'):
            start -= 1
        start -= 1
    end = next((j for j in range(i, len(lines)) if lines[j] == '}'), None)
    if end is None:
        sys.exit(f'{where}: no end to {name}()')
    return start, end


def apply_drops(path, drops):
    """Take out of the file the lines each drop names (series.txt):
    "drop fn NAME", a function; "drop A .. B", from the one line matching A
    through the first after it matching B (B "EOF": the end of the file);
    "drop A [-N] [+M]", every line matching A (at least one), with N lines
    before and M after it. "sub A => B" rewrites each line matching A
    (at least one) with re.sub(A, B): what a later patch changes, such
    as a count."""
    if not drops:
        return
    with open(path) as f:
        lines = f.read().split('\n')
    gone = set()
    for word, drop, n in drops:
        where = f'series.txt:{n}: {os.path.basename(path)}'
        if word == 'sub':
            a, sep, b = drop.partition(' => ')
            hits = [i for i, t in enumerate(lines) if re.search(a, t)] if sep else []
            if not hits:
                sys.exit(f'{where}: sub {drop!r}: no "A => B", or A matches no line')
            for i in hits:
                lines[i] = re.sub(a, b, lines[i])
            continue
        if drop.startswith('fn '):
            a, b = function_span(lines, drop[3:].strip(), where)
            gone.update(range(a, b + 1))
        elif ' .. ' in drop:
            ra, rb = drop.split(' .. ', 1)
            a = find_one(lines, ra, 0, where)
            b = next((j for j in range(a + 1, len(lines))
                      if re.search(rb, lines[j])), None)
            if rb == 'EOF':
                b = len(lines) - 1
            if b is None:
                sys.exit(f'{where}: nothing after {ra!r} matches {rb!r}')
            gone.update(range(a, b + 1))
        else:
            m = re.fullmatch(r'(.*?)((?: [-+]\d+)*)', drop)
            ra, ctx = m.group(1), m.group(2).split()
            before = sum(-int(c) for c in ctx if c.startswith('-'))
            after = sum(int(c) for c in ctx if c.startswith('+'))
            hits = [i for i, t in enumerate(lines) if re.search(ra, t)]
            if not hits:
                sys.exit(f'{where}: {ra!r} matches no line')
            for i in hits:
                gone.update(range(i - before, i + after + 1))
    text = '\n'.join(t for i, t in enumerate(lines) if i not in gone)
    text = re.sub(r'\n{3,}', '\n\n', text).rstrip('\n') + '\n'
    with open(path, 'w') as f:
        f.write(text)


def insert_after(text, anchor, new, name):
    """Insert the line new after the line that matches anchor."""
    m = re.search(anchor, text, re.M)
    if not m:
        sys.exit(f'edit {name}: no line matches {anchor!r} in the base')
    end = text.index('\n', m.end()) + 1
    return text[:end] + new + '\n' + text[end:]


def edit(work, name):
    def rw(path, fn):
        p = os.path.join(work, path)
        with open(p) as f:
            text = f.read()
        with open(p, 'w') as f:
            f.write(fn(text))

    if name == 'rdma-user-ioctl':
        rw('include/uapi/rdma/rdma_user_ioctl.h', lambda t: insert_after(
            t, r'^ \* #define HFI1_CMD_BAS\s+0xE0$',
            ' * #define RV_CMD_BASE\t\t0xF1', name))
    elif name == 'kconfig':
        rw('drivers/infiniband/Kconfig', lambda t: insert_after(
            t, r'^source "drivers/infiniband/ulp/rtrs/Kconfig"$',
            'source "drivers/infiniband/ulp/rv/Kconfig"', name))
    elif name == 'ulp-makefile':
        rw('drivers/infiniband/ulp/Makefile', lambda t: insert_after(
            t, r'^obj-\$\(CONFIG_INFINIBAND_RTRS\)\s+\+= rtrs/$',
            'obj-$(CONFIG_INFINIBAND_RV)\t\t+= rv/', name))
    elif name == 'doc-index':
        def index(t):
            m = re.search(r'^   sysfs$', t, re.M)
            if not m:
                sys.exit('edit doc-index: no "sysfs" entry in the base')
            return t[:m.start()] + '   rv\n' + t[m.start():]
        rw('Documentation/infiniband/index.rst', index)
    else:
        sys.exit(f'series.txt: unknown edit "{name}"')


def maintainers(work, files):
    """The rv entry, in its alphabetical place, listing files."""
    path = os.path.join(work, 'MAINTAINERS')
    with open(path) as f:
        lines = f.read().split('\n')
    # Drop an entry written by an earlier patch.
    if ENTRY_NAME in lines:
        i = lines.index(ENTRY_NAME)
        j = i
        while j < len(lines) and lines[j]:
            j += 1
        del lines[i:j + 1]
    name, email = identity()
    entry = [ENTRY_NAME,
             f'M:\t{name} <{email}>',
             'L:\tlinux-rdma@vger.kernel.org',
             'S:\tSupported']
    entry += ['F:\t' + f for f in sorted(files)]
    # A section starts with a title line followed by a "X:\t" line.
    i = 0
    start = None
    while i < len(lines) - 1:
        t = lines[i]
        if (t and not re.match(r'^[A-Z]:\t', t) and
                re.match(r'^[A-Z]:\t', lines[i + 1]) and
                (i == 0 or not lines[i - 1])):
            if start is None and t.startswith('3C59X'):
                start = i
            if start is not None and t > ENTRY_NAME:
                break
        i += 1
    if start is None:
        sys.exit('MAINTAINERS: the sections were not found')
    lines[i:i] = entry + ['']
    with open(path, 'w') as f:
        f.write('\n'.join(lines))


def identity():
    name = os.environ.get('RV_UPSTREAM_NAME') or git_config('user.name')
    email = os.environ.get('RV_UPSTREAM_EMAIL') or git_config('user.email')
    if not name or not email:
        sys.exit('make-series: no identity: set git user.name and '
                 'user.email, or RV_UPSTREAM_NAME and RV_UPSTREAM_EMAIL')
    return name, email


def git_config(key):
    r = subprocess.run(['git', '-C', TOP, 'config', key],
                       capture_output=True, text=True)
    return r.stdout.strip()


def git(work, *args, **kw):
    name, email = identity()
    env = dict(os.environ,
               GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email,
               GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email,
               GIT_AUTHOR_DATE='2026-01-01T00:00:00Z',
               GIT_COMMITTER_DATE='2026-01-01T00:00:00Z',
               GIT_CONFIG_NOSYSTEM='1', HOME=work)
    return subprocess.run(['git', '-C', work] + list(args), env=env,
                          check=True, text=True, **kw)


def strip_oot(path):
    """Keep the RV_UPSTREAM side of each #ifdef in a C file or header."""
    if not path.endswith(('.c', '.h')):
        return
    r = subprocess.run(['unifdef', '-DRV_UPSTREAM', '-m', path],
                       capture_output=True, text=True)
    if r.returncode > 1:
        sys.exit(f'make-series: unifdef {path}: {r.stderr.strip()}')
    with open(path) as f:
        text = f.read()
    if 'RV_UPSTREAM' in text:
        sys.exit(f'make-series: {path}: RV_UPSTREAM left after unifdef')
    text = inline_field_macros(text)
    # A block dropped between two blank lines leaves both.
    with open(path, 'w') as f:
        f.write(re.sub(r'\n{3,}', '\n\n', text))


def inline_field_macros(text):
    """The out-of-tree header declares the members that the forms of an
    ioctl's input share in a macro (#define __RV_X_FIELDS), described in a
    DOC block (DOC: X input). Once one form is left, the struct declares
    them itself: the members in place of the macro, their descriptions in
    its kernel-doc, the DOC block's remarks after them."""
    for m in list(re.finditer(r'^#define (__RV_\w+_FIELDS) \\\n((?:.*\\\n)*.*\n)',
                              text, re.M)):
        name = m.group(1)
        body = [re.sub(r'\s*\\$', '', t) for t in m.group(2).rstrip('\n').split('\n')]
        body[-1] += ';'
        uses = re.findall(r'^\t' + name + ';$', text, re.M)
        if len(uses) != 1:
            sys.exit(f'make-series: {name} is used {len(uses)} times, not once')
        doc = re.search(r'^/\*\*\n \* DOC: .*\n \*\n \* The members that ' + name +
                        r' declares, in each form of\n(?: \*.*\n)*? \*/\n', text, re.M)
        if not doc:
            sys.exit(f'make-series: no DOC block for {name}')
        lines = doc.group(0).split('\n')[3:-2]
        first_member = next(i for i, t in enumerate(lines) if t.startswith(' * @'))
        intro = ' '.join(t[3:] for t in lines[:first_member] if t != ' *')
        # The intro's first sentence is about the macro.
        intro = re.sub(r'^The members that .*? input\.\s*', '', intro)
        members = lines[first_member:]
        text = text.replace(doc.group(0), '').replace(m.group(0), '')
        ref = re.search(r'^ \* @' + name + r':.*\n(?: \*\t.*\n)*', text, re.M)
        if not ref:
            sys.exit(f'make-series: no @{name} in a struct\'s kernel-doc')
        new_doc = '\n'.join(members) + '\n'
        struct = re.findall(r'^ \* struct (\w+) - ', text[:ref.start()], re.M)[-1]
        text = text[:ref.start()] + new_doc + text[ref.end():]
        # What pointed at the DOC block points at the struct.
        title = re.match(r'/\*\*\n \* DOC: (.*)\n', doc.group(0)).group(1)
        text = text.replace(f'"{title}"', f'struct {struct}')
        if intro:
            # After the members, before the comment's end.
            end = text.index(' */\n', text.index(new_doc))
            wrapped = textwrap.fill(intro, width=72, initial_indent=' * ',
                                    subsequent_indent=' * ')
            text = text[:end] + ' *\n' + wrapped + '\n' + text[end:]
        # The macro's lines are indented as members already.
        text = text.replace('\t' + name + ';\n', '\n'.join(body) + '\n')
    return text


def base_version(base):
    v = {}
    with open(os.path.join(base, 'Makefile')) as f:
        for line in f:
            m = re.match(r'^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=\s*(\S*)',
                         line)
            if m:
                v[m.group(1)] = m.group(2)
            if len(v) == 4:
                break
    return '%s.%s.%s%s' % (v.get('VERSION', '?'), v.get('PATCHLEVEL', '?'),
                           v.get('SUBLEVEL', '0'), v.get('EXTRAVERSION', ''))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--base',
                    help='a Linux source tree (linux-source-7.x, unpacked)')
    ap.add_argument('--out', default=os.path.join(TOP, 'build', 'upstream'))
    ap.add_argument('--header', nargs=2, metavar=('IN', 'OUT'),
                    help='only write IN as the series has it to OUT (the '
                    'ABI tests of the series\' uAPI header)')
    args = ap.parse_args()
    if args.header:
        shutil.copyfile(*args.header)
        strip_oot(args.header[1])
        return
    if not args.base:
        ap.error('--base is needed')

    patches = parse_series(os.path.join(HERE, 'series.txt'))
    out = os.path.abspath(args.out)
    work = os.path.join(out, 'git')
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(work)
    for path in EDITED:
        src = os.path.join(args.base, path)
        if not os.path.isfile(src):
            sys.exit(f'make-series: {src} not found: is --base a Linux tree?')
        os.makedirs(os.path.dirname(os.path.join(work, path)), exist_ok=True)
        shutil.copyfile(src, os.path.join(work, path))
    git(work, 'init', '-q', '-b', 'series')
    git(work, 'config', 'core.autocrlf', 'false')
    git(work, 'add', '-A')
    git(work, 'commit', '-q', '-m', 'base: ' + base_version(args.base))
    git(work, 'tag', 'base')

    added = []
    last_drops = {}
    last_mod_add = max(n for n, p in enumerate(patches, 1)
                       for f, _, word, _ in p.adds
                       if word == 'add' and f.startswith(MODDIR))
    for n, p in enumerate(patches, 1):
        for f, drops, word, line in p.adds:
            src = os.path.join(TOP, f)
            if not os.path.isfile(src):
                sys.exit(f'series.txt: patch {n}: {f} is not in the tree')
            if (word == 'add') == (f in added):
                sys.exit(f'series.txt:{line}: {word} {f}: ' +
                         ('added before' if f in added else 'not added yet'))
            dst = os.path.join(work, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            strip_oot(dst)
            apply_drops(dst, drops)
            last_drops[f] = line if drops else None
            if f not in added:
                added.append(f)
        for e in p.edits:
            edit(work, e)
        if any(word == 'add' for _, _, word, _ in p.adds):
            # checkpatch asks each patch that adds a file to name it in
            # MAINTAINERS: file by file until the last patch that adds one
            # of the module's, then the directory.
            hooked = n >= last_mod_add
            pats = {MODDIR if (hooked and f.startswith(MODDIR)) else f
                    for f in added}
            maintainers(work, pats)
        name, email = identity()
        body = '\n'.join(p.msg).strip('\n')
        msg = f'{p.subject}\n\n{body}\n\nSigned-off-by: {name} <{email}>\n'
        git(work, 'add', '-A')
        git(work, 'commit', '-q', '-F', '-', input=msg)
        git(work, 'tag', f'patch-{n}')

    # The series ends with the tree's files as they are.
    for f, line in last_drops.items():
        if line:
            sys.exit(f'series.txt:{line}: the last state of {f} drops lines')

    git(work, 'format-patch', '-q', '--cover-letter', '--thread=shallow',
        '--subject-prefix=PATCH', '-o', out, 'base..series')
    cover = sorted(f for f in os.listdir(out) if f.startswith('0000-'))[0]
    cover = os.path.join(out, cover)
    with open(os.path.join(HERE, 'cover-letter.txt')) as f:
        blurb = f.read().strip('\n')
    listing = '\n'.join(f'  {n:2d}. {p.subject}'
                        for n, p in enumerate(patches, 1))
    blurb = blurb.replace('@@BASE@@', 'Linux ' + base_version(args.base))
    blurb = blurb.replace('@@PATCH_LIST@@', listing)
    with open(cover) as f:
        text = f.read()
    text = text.replace('*** SUBJECT HERE ***',
                        'RDMA/rv: shared RC connections and an MR cache '
                        'for RDMA rendezvous')
    text = text.replace('*** BLURB HERE ***', blurb)
    with open(cover, 'w') as f:
        f.write(text)
    for f in sorted(os.listdir(out)):
        if f.endswith('.patch'):
            print(os.path.join(out, f))


if __name__ == '__main__':
    main()
