#!/usr/bin/env python3
"""The measured part of the cover letter, from a saved benchmark run.

    scripts/cover-letter.py RESULTS_DIR NAME    (called by scripts/cover-letter)

Reads RESULTS_DIR/report.md (what bench/report.py wrote and `git add`
recorded) and RESULTS_DIR/meta.json, and prints the few tables a
reviewer needs, each line at most 80 columns: the exact counts where
base and patched differ, the guest's GiB/s ratios (labelled emulated when
the guest ran under TCG), the in-kernel window of a 2MB THP, and the
host-native copy of the copy_mc routines. Every figure is copied from
report.md as it is written there, so scripts/figures finds it in the run.
NAME is the run's directory under results/ (named in the letter: the
full tables are in results/NAME/report.md). A section report.md lacks
is left out (older runs have no counts or window).
"""
import json
import os
import re
import sys
import textwrap

WIDTH = 80


def sections(path):
    """{heading: [table rows as lists of cells]} of a report.md."""
    out, head = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("## "):
                head = line[3:]
                out[head] = []
            elif head and line.startswith("|") and not re.match(r"\|\s*-", line):
                out[head].append([c.strip() for c in line.strip().strip("|").split("|")])
    return out


def find(secs, prefix):
    for h, rows in secs.items():
        if h.startswith(prefix) and len(rows) > 1:
            return h, rows[0], rows[1:]
    return None, None, None


def parts(cell):
    """'0.11 (0.095–0.13), 0.063, -' -> ['0.11', '0.063', '-']: the
    values of a (b, p, ...) cell without their ranges."""
    return [re.sub(r"\s*\(.*?\)", "", p).strip() for p in re.split(r",\s*(?![^()]*\))", cell)]


def plain(cell):
    return re.sub(r"\s*\(.*?\)", "", cell).strip()


def table(rows, indent="  "):
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [(indent + "  ".join(c.ljust(w[i]) for i, c in enumerate(r))).rstrip() for r in rows]


def para(text):
    return textwrap.wrap(text, WIDTH, break_on_hyphens=False)


def main(d, name):
    secs = sections(os.path.join(d, "report.md"))
    meta = {}
    if os.path.exists(os.path.join(d, "meta.json")):
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
    accel = meta.get("accel", "?")
    emulated = accel == "tcg"
    out = []
    host = "%s%s, %s CPUs" % (meta.get("host_cpu", "?"), " (a VM)" if meta.get("host_virtual") else "",
                              meta.get("host_cpus", "?"))
    out += para("make bench, results/%s/report.md in the series' repository (the full "
                "tables and how each figure is made): base %s, patched %s, one guest "
                "shape for both, %s boots each, %s MB per run; guest under %s%s; host %s."
                % (name, meta.get("base_kernel", "?"), meta.get("patched_kernel", "?"),
                   meta.get("rounds", "?"), meta.get("size_mb", "?"), accel.upper(),
                   " (emulated: its times are not hardware times)" if emulated else "", host))

    h, hdr, rows = find(secs, "Exact counts")
    if rows:
        ipi = next((i for i, c in enumerate(hdr) if c.startswith("TLB IPIs")), None)
        spl = next((i for i, c in enumerate(hdr) if c.startswith("splits")), None)
        t, same = [["", "TLB IPIs/MB", "splits/run"]], []
        for r in rows:
            if r[0].startswith("window"):
                continue
            a, b = (parts(r[ipi])[:2] if ipi is not None else ["-", "-"]), \
                (parts(r[spl])[:2] if spl is not None else ["-", "-"])
            if a[0] == a[1] and b[0] == b[1]:
                same.append(r[0])
                continue
            t.append([r[0], "%s -> %s" % tuple(a), "%s -> %s" % tuple(b)])
        out += ["", "Exact counts per run, base -> patched (kernel counters, exact under"
                " any", "accelerator; a busy thread of the mm on another CPU, so that"
                " flushes are IPIs):"]
        out += table(t) if len(t) > 1 else ["  (none differs)"]
        if same:
            out += para("The other %d move_pages() and UFFDIO_MOVE rows count the same on "
                        "both kernels." % len(same))

    h, hdr, rows = find(secs, "move_pages() and UFFDIO_MOVE, GiB/s")
    if rows:
        t = [["GiB/s, boot medians", "base", "patched", "ratio"]]
        for r in rows:
            t.append([r[0], r[1], r[2], r[3]])
        out += [""] + para("%sGiB/s of the same runs, each boot's median, patched / base "
                           "the ratio of the medians of boot medians; (overlap): the boots "
                           "do not tell the kernels apart:"
                           % ("Emulated (TCG, not hardware) " if emulated else ""))
        out += table(t)

    h, hdr, rows = find(secs, "In-kernel window")
    # A run whose writer did not write (ERRATA.txt beside it): idle rows only
    withdrawn = os.path.exists(os.path.join(d, "ERRATA.txt"))
    if withdrawn:
        rows = [r for r in rows if r[1] == "idle"]
    if rows:
        med = hdr.index("median") if "median" in hdr else 3
        t = [["in-kernel window, us", "2MB THP", "median per boot"]]
        for r in rows:
            t.append([r[0], r[1], r[med]])
        out += [""] + para("%show long a 2MB THP is out of reach: its first migration entry "
                           "set to its last removed (trace events), median per boot, us%s:"
                           % ("Emulated (TCG guest time): " if emulated else "H",
                              " (the run's writer rows are withdrawn: its writer did not "
                              "write, see ERRATA.txt there)" if withdrawn else ""))
        out += table(t)

    h, hdr, rows = find(secs, "Host-native copy routines")
    if rows:
        col = {c: i for i, c in enumerate(hdr)}
        t = [["routine", "folio", "per-page", "one call", "ratio", "on-CPU"]]
        for r in rows:
            if not (r[0].startswith("copy_mc") or r[0] == "glibc_memcpy"):
                continue
            t.append([r[0], r[1], plain(r[col["per-page"]]), plain(r[col["one call"]]),
                      r[col["ratio"]], r[col.get("on-CPU ratio", col["ratio"])]])
        out += [""] + para("Native on the host, the kernel's own copy routines (GiB/s, "
                           "median over the runs, cold source; ratio: one call / 4KB calls; "
                           "on-CPU: the same ratio of the time the thread ran):")
        out += table(t)
    long = [l for l in out if len(l) > WIDTH]
    if long:
        sys.exit("cover-letter.py: a line over %d columns: %s" % (WIDTH, long[0]))
    print("\n".join(out))


if __name__ == "__main__":
    args = sys.argv[1:]
    # -h/--help: the docstring above; an option it does not take: one error line.
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        sys.exit(0)
    bad = [a for a in args if a.startswith("-")]
    if bad:
        sys.exit("cover-letter.py: error: unknown option '%s' (see --help)" % bad[0])
    if len(args) != 2:
        sys.exit("usage: scripts/cover-letter.py RESULTS_DIR NAME")
    main(args[0], args[1])
