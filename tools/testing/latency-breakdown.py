#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""latency-breakdown.py: the steps of each message in an rvbench lat trace.

    latency-breakdown.py TRACE UNTRACED.json TRACED.json

TRACE is tracefs's `trace` file as latency-breakdown.sh records it; the
two JSON files are rvbench lat's results without and with tracing. For
every rv_post_write, the message it posted is followed to the other job's
rv_recv_cmpl and on to the receiving process's next ioctl; messages whose
steps are not all in the trace (the buffer's start, the last answer) are
left out. Prints the median and 90th percentile of each step in
microseconds, and exits 1 when no message is complete.
"""

import json
import re
import statistics
import sys

LINE = re.compile(r'^\s*(?P<comm>.*)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+'
                  r'(?P<ts>\d+\.\d+): (?P<event>\w+)[:(]\s*(?P<rest>.*)$')
JOB = re.compile(r'\bjob=(\d+)')

STEPS = [
    ('ioctl', 'post', 'ioctl entry -> ib_post_send returned'),
    ('ioctl', 'drv', 'ioctl entry -> driver post_send entry (rxe)'),
    ('drv', 'wire', 'driver post_send -> request at peer (rxe_rcv)'),
    ('wire', 'cqe', 'request at peer -> receive CQE written (rxe)'),
    ('cqe', 'cq', 'receive CQE written -> CQ handler (ib_core)'),
    ('post', 'cq', 'ib_post_send returned -> receiving CQ handler'),
    ('cq', 'recv', 'CQ handler -> rv receive callback'),
    ('recv', 'ring', 'receive callback -> event in the ring'),
    ('ring', 'answer', 'event in the ring -> receiver posts (ioctl entry)'),
    ('ioctl', 'answer', 'one way, ioctl entry to ioctl entry'),
    ('post', 'scmpl', 'sender: ib_post_send returned -> send completion'),
    ('scmpl', 'sring', 'sender: send completion -> event in its ring'),
]
# The CQ handler: ib_core's, for the poll context rv uses.
CQ_EVENTS = ('cq_wq', 'cq_sirq')
# Steps from the driver's probes (rxe only): left out where absent.
OPTIONAL = ('drv', 'wire', 'cqe')


def parse(path):
    events = []
    for line in open(path, errors='replace'):
        if line.startswith('#'):
            continue
        m = LINE.match(line)
        if not m:
            continue
        job = JOB.search(m['rest'])
        events.append({'ts': float(m['ts']) * 1e6, 'pid': int(m['pid']),
                       'cpu': int(m['cpu']), 'event': m['event'],
                       'job': int(job.group(1)) if job else None})
    events.sort(key=lambda e: e['ts'])
    return events


def first(events, start, pred):
    for k in range(start, len(events)):
        if pred(events[k]):
            return k
    return None


def last(events, start, end, pred):
    for k in range(end - 1, start - 1, -1):
        if pred(events[k]):
            return k
    return None


def messages(events):
    """One dict of step times per message that is complete in the trace."""
    job_pid = {e['job']: e['pid'] for e in events if e['event'] == 'rv_post_write'}
    if len(job_pid) != 2:
        return []
    out = []
    for b, e in enumerate(events):
        if e['event'] != 'rv_post_write':
            continue
        other = next(j for j in job_pid if j != e['job'])
        a = last(events, 0, b, lambda x: x['event'] == 'sys_ioctl' and x['pid'] == e['pid'])
        d = first(events, b, lambda x: x['event'] == 'rv_recv_cmpl' and x['job'] == other)
        if a is None or d is None:
            continue
        c = last(events, b, d, lambda x: x['event'] in CQ_EVENTS)
        r = first(events, d, lambda x: x['event'] == 'ring_posted' and
                  x['cpu'] == events[d]['cpu'])
        if c is None or r is None:
            continue
        f = first(events, r, lambda x: x['event'] == 'sys_ioctl' and
                  x['pid'] == job_pid[other])
        g = first(events, b, lambda x: x['event'] == 'rv_send_cmpl' and x['job'] == e['job'])
        if f is None or g is None:
            continue
        h = first(events, g, lambda x: x['event'] == 'ring_posted' and
                  x['cpu'] == events[g]['cpu'])
        if h is None:
            continue
        ts = {k: events[i]['ts'] for k, i in (('ioctl', a), ('post', b), ('cq', c),
                                              ('recv', d), ('ring', r), ('answer', f),
                                              ('scmpl', g), ('sring', h))}
        # the driver's steps, where its probes fired: its post_send
        # entry in this ioctl, the request's arrival at the peer, the
        # last CQE written before the CQ handler ran
        p = first(events, a, lambda x: x['event'] == 'drv_post' and x['pid'] == e['pid'])
        w = p is not None and first(events, p, lambda x: x['event'] == 'rxe_rcv')
        q = last(events, w or a, c, lambda x: x['event'] == 'cq_post')
        if p is not None and p < b and w and w < c and q is not None:
            ts.update(drv=events[p]['ts'], wire=events[w]['ts'], cqe=events[q]['ts'])
        out.append(ts)
    return out


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def median_us(path):
    r = json.load(open(path))['results'][0]
    return r['median_ns'] / 1e3


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    msgs = messages(parse(argv[1]))
    if not msgs:
        print('latency-breakdown: no complete message in the trace', file=sys.stderr)
        return 1
    print(f'{len(msgs)} messages followed')
    print(f'{"step":52s} {"median us":>10s} {"p90 us":>8s}')
    for a, b, name in STEPS:
        d = [m[b] - m[a] for m in msgs if a in m and b in m]
        if not d:
            continue
        print(f'{name:52s} {statistics.median(d):10.1f} {pct(d, 90):8.1f}')
    print(f'{"rvbench lat half round trip, untraced":52s} {median_us(argv[2]):10.1f}')
    print(f'{"rvbench lat half round trip, traced":52s} {median_us(argv[3]):10.1f}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
