#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
"""What rv costs a node of a job of N nodes x P processes per node, against
PSM3's per-process RC QPs, from the constants rv_sizing measured.

    tools/sizing/model.py build/sizing-out/sizing.json
    tools/sizing/model.py sizing.json --num-conn 8 --q-depth 2000 -N 64 -P 32

Python 3 standard library only. See docs/sizing.md for the formulas.
"""
import argparse
import json
import math
import sys

PAGE = 4096
RING_HEADER = 64        # struct rv_ring_header
EVENT = 64              # struct rv_event (ABI 1.7)
MB = 1 << 20


def ring_bytes(cq_entries):
    """vmalloc_user(PAGE_ALIGN(RV_RING_ALLOC_LEN(cq_entries))): rv_ring.c"""
    if not cq_entries:
        return 0
    return -(-(RING_HEADER + EVENT * cq_entries) // PAGE) * PAGE


def sq_depth(q_depth, num_conn, attrs):
    """rv_sconn_ctx_alloc() in rv_qp.c"""
    d = max(-(-q_depth // num_conn), 8)
    if attrs.get("max_qp_wr"):
        d = min(d, attrs["max_qp_wr"] - 2)
    if attrs.get("max_cqe"):
        d = min(d, (min(attrs["max_cqe"], 2**31 - 1) - 4) // 2)
    return d


def qp_bytes(c, sq):
    return max(c["qp_fixed_bytes"], 0) + c["qp_bytes_per_sq_depth"] * sq


def conn_fixed(c):
    """Measured as a few KiB either side of 0 (noise): never below 0."""
    return max(c["conn_fixed_bytes"], 0)


def model(c, attrs, n, p, a):
    """One row: per node, one job."""
    sq = sq_depth(a.q_depth, a.num_conn, attrs)
    rv_qps = a.num_conn * (n - 1)
    rv_swqe = rv_qps * (sq + 2)          # max_send_wr: + heartbeat, drain
    rv_rwqe = rv_qps * (sq + 1 + 1)      # rq_depth = sq + 1, + drain
    rv_cqe = rv_qps * (2 * sq + 4)       # one CQ per QP for both
    qp_mem = qp_bytes(c, sq)
    conn_mem = (n - 1) * (conn_fixed(c) + a.num_conn * qp_mem)
    ring = ring_bytes(a.cq_entries)
    proc_mem = p * (c["process_bytes_cq0"] + ring)
    rv_mem = c.get("job_device_bytes", 0) + conn_mem + proc_mem
    pinned = p * a.mr_cache_size * MB
    mrs = a.mr_cache_size * MB // a.mr_size
    mr_book = p * (mrs * c["mr_fixed_bytes"] +
                   a.mr_cache_size * MB // PAGE * c["mr_bytes_per_page"])

    rc_qps = p * p * (n - 1)
    rc_swqe = rc_qps * (a.send_rdma + 1)
    rc_rwqe = rc_qps * (a.tf_nflows + 1)
    rc_mem = rc_qps * c["user_rc_qp_bytes"]
    return {
        "N": n, "P": p, "sq_depth": sq,
        "rv_qps": rv_qps, "rv_send_wqes": rv_swqe, "rv_recv_wqes": rv_rwqe,
        "rv_cqes": rv_cqe, "rv_conn_bytes": conn_mem,
        "rv_process_bytes": proc_mem, "rv_kernel_bytes": rv_mem,
        "ring_bytes_per_process": ring,
        "mr_pinned_bound_bytes": pinned, "mr_bookkeeping_bound_bytes": mr_book,
        "rc_qps": rc_qps, "rc_send_wqes": rc_swqe, "rc_recv_wqes": rc_rwqe,
        "rc_kernel_bytes": rc_mem,
        "rc_over_rv": rc_mem / rv_mem if rv_mem else float("inf"),
        "rv_qps_over_device_max": bool(attrs.get("max_qp")) and rv_qps > attrs["max_qp"],
        "rc_qps_over_device_max": bool(attrs.get("max_qp")) and rc_qps > attrs["max_qp"],
    }


def count(v):
    """1234 -> 1,234; 12345678 -> 12.3M"""
    for div, suf in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if v >= div:
            return f"{v / div:.1f}{suf}"
    return f"{int(v):,}"


def size(b):
    for div, suf in ((1 << 50, "PiB"), (1 << 40, "TiB"), (1 << 30, "GiB"),
                     (1 << 20, "MiB"), (1 << 10, "KiB")):
        if abs(b) >= div:
            return f"{b / div:.1f} {suf}"
    return f"{b:.0f} B"


def ratio(x):
    return f"{x:,.0f}" if x >= 10 else f"{x:.2g}"


def table(head, rows, markdown):
    if markdown:
        out = ["| " + " | ".join(head) + " |",
               "|" + "|".join("---:" for _ in head) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    out = ["  ".join(h.rjust(w[i]) for i, h in enumerate(head))]
    out += ["  ".join(c.rjust(w[i]) for i, c in enumerate(r)) for r in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="rv_sizing --json output")
    ap.add_argument("-N", "--nodes", default="2,16,128,1024,10000",
                    help="nodes in the job (comma list)")
    ap.add_argument("-P", "--ppn", default="1,16,64,256",
                    help="processes per node (comma list)")
    ap.add_argument("--num-conn", type=int, default=4, help="rv num_conn [4]")
    ap.add_argument("--q-depth", type=int, default=4000, help="rv q_depth [4000]")
    ap.add_argument("--cq-entries", type=int, default=192,
                    help="event ring entries per process [192: PSM3's "
                         "NUM_SEND_RDMA + HFI_TF_NFLOWS + 32]")
    ap.add_argument("--mr-cache-size", type=int, default=256,
                    help="rv mr_cache_size, MB per process [256]")
    ap.add_argument("--mr-size", type=int, default=128 * 1024,
                    help="MR size assumed for the bookkeeping bound [128 KiB]")
    ap.add_argument("--send-rdma", type=int, default=128,
                    help="PSM3_NUM_SEND_RDMA (user RC QP send queue - 1) [128]")
    ap.add_argument("--tf-nflows", type=int, default=32,
                    help="HFI_TF_NFLOWS (user RC QP receive queue - 1) [32]")
    ap.add_argument("--qp-fixed-bytes", type=float,
                    help="override the measured rv QP fixed bytes (another device)")
    ap.add_argument("--qp-bytes-per-sq-depth", type=float,
                    help="override the measured rv QP bytes per unit of sq_depth")
    ap.add_argument("--user-qp-bytes", type=float,
                    help="override the measured bytes of one per-process RC QP")
    ap.add_argument("--format", choices=("markdown", "text", "json"),
                    default="markdown")
    ap.add_argument("--metric", choices=("kernel_all", "kernel"), default="kernel_all",
                    help="which measured constants: every unreclaimable kernel "
                         "page (default) or SUnreclaim + VmallocUsed + Percpu")
    a = ap.parse_args()

    with open(a.json) as f:
        m = json.load(f)
    c = dict(m["constants" if a.metric == "kernel_all" else "constants_kernel"])
    for opt, key in (("qp_fixed_bytes", "qp_fixed_bytes"),
                     ("qp_bytes_per_sq_depth", "qp_bytes_per_sq_depth"),
                     ("user_qp_bytes", "user_rc_qp_bytes")):
        if getattr(a, opt) is not None:
            c[key] = getattr(a, opt)
    need = ("qp_fixed_bytes", "qp_bytes_per_sq_depth", "conn_fixed_bytes",
            "process_bytes_cq0", "mr_fixed_bytes", "mr_bytes_per_page",
            "user_rc_qp_bytes")
    missing = [k for k in need if k not in c]
    if missing:
        sys.exit(f"model.py: {a.json} lacks {', '.join(missing)} "
                 "(run every rv_sizing series)")
    attrs = m.get("device_attrs", {})
    nodes = [int(x) for x in a.nodes.split(",")]
    ppn = [int(x) for x in a.ppn.split(",")]
    rows = [model(c, attrs, n, p, a) for n in nodes for p in ppn]

    if a.format == "json":
        json.dump({"params": vars(a), "rows": rows}, sys.stdout, indent=2)
        print()
        return

    md = a.format == "markdown"
    sq = rows[0]["sq_depth"]
    qp_mem = qp_bytes(c, sq)
    print(f"Per node, one job; rv num_conn={a.num_conn} q_depth={a.q_depth} "
          f"(sq_depth {sq} per QP), cq_entries={a.cq_entries}, "
          f"mr_cache_size={a.mr_cache_size} MB; per-process RC QPs as PSM3_RDMA=2 "
          f"sizes them (send {a.send_rdma + 1}, recv {a.tf_nflows + 1}).")
    print(f"Constants ({m.get('device', '?')}, kernel {m.get('kernel', '?')}, "
          f"metric {a.metric}): rv QP {size(qp_mem)}, rv connection "
          f"{size(conn_fixed(c) + a.num_conn * qp_mem)}, process "
          f"{size(c['process_bytes_cq0'])} + ring {size(ring_bytes(a.cq_entries))}, "
          f"MR {size(c['mr_fixed_bytes'])} + {c['mr_bytes_per_page']:.1f} B/page, "
          f"user RC QP {size(c['user_rc_qp_bytes'])}.")
    print()
    print("Queue resources per node (device independent):")
    print()
    flag = lambda r, k: "†" if r[k] else ""
    print(table(
        ["N", "P", "rv QPs", "rv send WQEs", "rv recv WQEs", "rv CQEs",
         "RC QPs", "RC send WQEs", "RC recv WQEs"],
        [[str(r["N"]), str(r["P"]), count(r["rv_qps"]) + flag(r, "rv_qps_over_device_max"),
          count(r["rv_send_wqes"]), count(r["rv_recv_wqes"]), count(r["rv_cqes"]),
          count(r["rc_qps"]) + flag(r, "rc_qps_over_device_max"),
          count(r["rc_send_wqes"]), count(r["rc_recv_wqes"])] for r in rows], md))
    print()
    print("Memory per node (rxe; a hardware NIC's per-QP memory differs):")
    print()
    print(table(
        ["N", "P", "rv kernel", "of it rings", "MR pinned ≤", "MR bookkeeping ≤",
         "RC QPs kernel", "RC / rv"],
        [[str(r["N"]), str(r["P"]), size(r["rv_kernel_bytes"]),
          size(r["P"] * r["ring_bytes_per_process"]),
          size(r["mr_pinned_bound_bytes"]), size(r["mr_bookkeeping_bound_bytes"]),
          size(r["rc_kernel_bytes"]), ratio(r["rc_over_rv"])] for r in rows], md))
    # Per remote node: num_conn rv QPs (+ the connection) against P * P
    # RC QPs; rv's per-process ring and attach are small beside either.
    per_peer_rv = conn_fixed(c) + a.num_conn * qp_mem
    cross = math.ceil(math.sqrt(per_peer_rv / c["user_rc_qp_bytes"]))
    print()
    print(f"Per remote node rv costs {size(per_peer_rv)} whatever P; the "
          f"per-process RC QPs cost P² x {size(c['user_rc_qp_bytes'])}: rv needs "
          f"less kernel memory from P = {cross} processes per node on.")
    if any(r["rv_qps_over_device_max"] or r["rc_qps_over_device_max"] for r in rows):
        print()
        print(f"† more QPs than the measured device allows (max_qp {attrs['max_qp']:,}).")


if __name__ == "__main__":
    main()
