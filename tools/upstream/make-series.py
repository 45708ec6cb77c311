#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write rv's upstream patch series (make upstream).

    make-series.py --base LINUX-SOURCE-DIR [--out DIR]

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
for deployed clients.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

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
        self.adds = []
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
            word, _, rest = line.partition(' ')
            if word == 'patch':
                patches.append(Patch(rest))
            elif not patches:
                sys.exit(f'{path}:{n}: "{word}" before the first patch')
            elif word == 'add':
                patches[-1].adds.append(rest)
            elif word == 'edit':
                patches[-1].edits.append(rest)
            elif word == 'msg':
                in_msg = True
            else:
                sys.exit(f'{path}:{n}: unknown line "{line}"')
    if in_msg:
        sys.exit(f'{path}: msg without end')
    return patches


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
    # A block dropped between two blank lines leaves both.
    with open(path, 'w') as f:
        f.write(re.sub(r'\n{3,}', '\n\n', text))


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
    ap.add_argument('--base', required=True,
                    help='a Linux source tree (linux-source-7.x, unpacked)')
    ap.add_argument('--out', default=os.path.join(TOP, 'build', 'upstream'))
    args = ap.parse_args()

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
    for n, p in enumerate(patches, 1):
        for f in p.adds:
            src = os.path.join(TOP, f)
            if not os.path.isfile(src):
                sys.exit(f'series.txt: patch {n}: {f} is not in the tree')
            dst = os.path.join(work, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            strip_oot(dst)
            added.append(f)
        for e in p.edits:
            edit(work, e)
        if p.adds:
            # Once rv builds (its Makefile is in), the directory.
            hooked = MODDIR + 'Makefile' in added
            pats = {MODDIR if (hooked and f.startswith(MODDIR)) else f
                    for f in added}
            maintainers(work, pats)
        name, email = identity()
        body = '\n'.join(p.msg).strip('\n')
        msg = f'{p.subject}\n\n{body}\n\nSigned-off-by: {name} <{email}>\n'
        git(work, 'add', '-A')
        git(work, 'commit', '-q', '-F', '-', input=msg)
        git(work, 'tag', f'patch-{n}')

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
