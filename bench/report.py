#!/usr/bin/env python3
"""Turn the JSON lines of movebench and copymodel into a report.

  report.py DIR            DIR/guest-*.jsonl, DIR/native.jsonl, DIR/meta.json
                           -> DIR/report.md (printed too) and DIR/plot.png
  report.py --native DIR   DIR/native.jsonl (and DIR/meta.json if there)
                           -> DIR/report.md: the host-native copy model only
  report.py --check FILE...  smoke test: no error line, every figure a
                           finite positive number (never 0, NaN or inf),
                           one value per run, whole_after a share in
                           [0, 1]; copymodel's table
                           complete (every routine x folio x shape);
                           movebench's counts whole numbers, none
                           negative, one per run, and no split of a
                           figure's own folio size where it says every
                           folio stayed whole; every in-kernel window
                           figure counts every folio of its buffer, and
                           a base guest's median in-kernel window is not
                           below that guest's copy of one 2MB folio (its
                           memcpy 2MB row); files without such figures
                           (older runs) skip that check, with a note
  report.py --check-guest FILE...  the same, and movebench's main figures
                           are all there
  report.py --newest PATH...  the finished benchmark run (report.md and a
                           meta.json naming the patched kernel) with the
                           latest meta.json date, among the PATHs
                           and the directories right under them
  report.py --counts FILE...  the counts table alone, one boot per file
                           (what scripts/bench --smoke prints)
  report.py --windows FILE...  the in-kernel window table alone, one boot
                           per file (scripts/bench --smoke prints it too);
                           from a movebench with a reader and a spinner,
                           with the toucher's view (the reader's and the
                           writer's longest access per folio) after it

Guest figures are never pooled across boots (the boots of one kernel can
differ more than its runs do): every table gives each boot's median over
its runs, and a ratio or a count is taken of the median of those boot
medians; a ratio says when the two kernels' ranges of boot medians overlap.
A guest figure is compared with a memcpy only of as many bytes in the same
direction; the window tables print a p99 only from at least 100 folios of a
boot. The in-kernel window table (from movebench's trace events) is left
out for runs that have none, with a note on stderr; report.md stays as it
was for them. Every table is tagged with where it ran: kvm, tcg (emulated: only
ratios mean anything) or native (host).
"""
import json
import math
import re
import statistics
import sys
from pathlib import Path

MAIN = [("memcpy", "2MB"), ("memcpy", "whole"), ("move_pages", "thp"),
        ("move_pages", "mthp64k"), ("move_pages", "hugetlb2m"),
        ("uffd_move", "4k"), ("uffd_move", "mthp64k"), ("window", "thp"),
        ("window", "thp-reader"), ("kernel_window", "thp-idle"),
        ("kernel_window", "thp-reader"), ("kernel_window", "thp-writer")]


# Rows of the GiB/s and counts tables, in order: (bench, kinds, directions)
FIGURES = (("move_pages", ("thp", "mthp64k", "hugetlb2m", "hugetlb1g"), ("0->1", "1->0")),
           ("uffd_move", ("4k", "mthp64k"), ("same node",)))
# movebench's in-kernel window figures (trace events), 2MB THP moved
# node 0 -> 1 one folio per call: no thread touching the folio, a reader,
# a writer or a dirtier (older movebenches: no reader)
WINDOW_KINDS = (("thp-idle", "idle"), ("thp-reader", "+ reader"),
                ("thp-writer", "+ writer"), ("thp-dirtier", "+ dirtier"))
# The toucher's own view ("window" figures): its longest access per folio
TOUCHER_KINDS = (("thp-reader", "+ reader", "thp-reader"),
                 ("thp", "+ writer", "thp-writer"))   # kind, label, kernel_window kind
# The kernels of a run, in table order: movebench's tags. With the knob
# /proc/sys/vm/migrate_precopy (or its debugfs file) the patched guest runs
# the window figures again with it at 1, tagged patched+precopy.
KERNELS = ("base", "patched", "patched+precopy")
SHORT = {"base": "b", "patched": "p", "patched+precopy": "p+pc"}
# vmstat counters of migration precopy, where the kernel has them:
# (counter, column) in the counts table
PRECOPY_KEYS = (("pgmigrate_precopy", "precopied/run"),
                ("pgmigrate_precopy_redo", "redone/run"))
# movebench's split counters (vmstat); with the run's own mTHP size's
# stats/split they make a run's splits. For the PMD size (movebench's THP,
# 2 MB on x86) that stat counts the same splits as thp_split_page.
# movebench -k's rmap walk counters (kprobe hits on each walk's per-VMA
# callback, one per walk: every folio it moves has one mapping), where the
# kernel has kprobe events: (counter, column), a column where a run has it,
# per folio moved
RMAP_KEYS = (("rmap_unmap", "unmap walks/folio"), ("rmap_remap", "remap walks/folio"),
             ("rmap_precopy_wrprotect", "pre-copy walks/folio"),
             ("rmap_precopy_check", "check walks/folio"),
             ("rmap_precopy_reopen", "reopen walks/folio"))
# The folio size of each kind movebench moves (4k: the page size, x86)
KIND_FOLIO = {"thp": 2 << 20, "mthp64k": 64 << 10, "hugetlb2m": 2 << 20,
              "hugetlb1g": 1 << 30, "4k": 4 << 10}
SPLIT_KEYS = ("thp_split_page", "thp_split_pmd", "thp_split_pte")
PMD_KB = 2048
# The pre-copy knob of the RFC's first versions (later in debugfs)
SYSCTL_KNOB = "/proc/sys/vm/migrate_precopy"


def lines(path):
    out = []
    for n, raw in enumerate(Path(path).read_text(errors="replace").splitlines(), 1):
        raw = raw.strip()
        if not raw.startswith("{"):
            continue
        try:
            out.append(json.loads(raw))
        except json.JSONDecodeError as e:
            raise SystemExit(f"report: {path}:{n}: not JSON ({e})")
    return out


# copymodel's routines (bench/copymodel.c): the kernel's own, assembled
# from a kernel tree, then copymodel's, then the limit
KERNEL_ROUTINES = ("copy_mc_enhanced_fast_string", "copy_mc_fragile", "kernel_memcpy")
OWN_ROUTINES = ("rep_movsb", "rep_movsq", "nt_movnti", "nt_movntdq", "glibc_memcpy")
NATIVE_KINDS = ("2MB", "whole")
NATIVE_SHAPES = ("per-page", "one call")


def check_native(p, recs):
    """copymodel's table is complete: every routine x folio x shape."""
    bad = []
    info = next((d for d in recs if d.get("info") == "copymodel"), None)
    rows = {(d["routine"], d["kind"], d["shape"]) for d in recs
            if d.get("bench") == "copy_native"}
    if info is None:
        return [f"{p}: no copymodel info line"]
    if info.get("kernel_copy") is False and not info.get("note"):
        bad.append(f"{p}: kernel routines missing and no note saying why")
    want = (KERNEL_ROUTINES if info.get("kernel_copy") else ()) + OWN_ROUTINES
    for r in want:
        for k in NATIVE_KINDS:
            for sh in NATIVE_SHAPES:
                if (r, k, sh) not in rows:
                    bad.append(f"{p}: missing copymodel figure: {r} {k} {sh}")
    if not any(d.get("info") == "copymodel_end" for d in recs):
        bad.append(f"{p}: copymodel did not finish (no end line)")
    for k in ("cpu_model", "erms", "fsrm", "avx512f", "loadavg_start"):
        if k not in info:
            bad.append(f"{p}: copymodel info line without {k}")
    return bad


SWEEP_KINDS = ("64KB", "256KB", "1MB", "2MB", "8MB", "32MB", "256MB", "1GB")


def sweep_section(recs):
    """copymodel -S: per routine and source (cold, warm), the one-call GiB/s
    (median) of each folio size and its ratio to 4KB calls; Markdown lines,
    [] when there is no sweep."""
    rows = [d for d in recs if d.get("bench") == "copy_sweep"]
    info = next((d for d in recs if d.get("info") == "copymodel"), {})
    end = next((d for d in recs if d.get("info") == "copymodel_end"), {})
    if not rows:
        return []
    med = {(d["routine"], d["cache"], d["kind"], d["shape"]): d["median"] for d in rows}
    kinds = [k for k in SWEEP_KINDS if any(d["kind"] == k for d in rows)]
    routines = list(dict.fromkeys(d["routine"] for d in rows))
    md = ["## Copy size sweep, GiB/s, median [native]", ""]
    fam = (f", family {info['cpu_family']} model {info['cpu_model_nr']}"
           if info.get("cpu_family", -1) >= 0 else "")
    md.append(f"- CPU: `{info.get('cpu_model', '?')}`{fam} (erms {info.get('erms')}, fsrm "
              f"{info.get('fsrm')}, avx512f {info.get('avx512f')}, a virtual machine: "
              f"{info.get('hypervisor')}); pinned to CPU {info.get('cpu')}; {info.get('runs')} "
              f"runs, every shape interleaved, order rotated each run; load average "
              f"{' '.join(str(x) for x in info.get('loadavg_start', []))} at start, "
              f"{' '.join(str(x) for x in end.get('loadavg_end', []))} at end.")
    md.append("- Per folio size: one call over the folio, GiB/s, and in brackets its ratio "
              "to the same folio copied in 4KB calls. cold: a pass over the whole "
              f"{info.get('bytes', 0) >> 20} MB buffer, folio after folio (the source "
              "not in any cache); warm: the first folio copied again and again (at least "
              "256 MB in all), so a folio that fits a cache is read from it. Every copy "
              "checked against the source.")
    md.append("")
    md.append("| routine | source | " + " | ".join(kinds) + " |")
    md.append("|---|---|" + "---|" * len(kinds))
    for r in routines:
        for c in ("cold", "warm"):
            cells = []
            for k in kinds:
                one, per = med.get((r, c, k, "one call")), med.get((r, c, k, "per-page"))
                cells.append("-" if one is None else
                             f"{one:.1f} ({one / per:.2f}x)" if per else f"{one:.1f}")
            md.append(f"| {r} | {c} | " + " | ".join(cells) + " |")
    md.append("")
    vic = [d for d in recs if d.get("bench") == "copy_victim"]
    if vic:
        vmed = {(d["routine"], d["kind"]): d["median"] for d in vic}
        vkinds = list(dict.fromkeys(d["kind"] for d in vic))
        md.append("## What a 2MB copy costs the caches: re-reading a victim buffer, us, "
                  "median [native]")
        md.append("")
        md.append("- A victim buffer is read, one cold 2MB folio copied with the routine, "
                  "and the victim read again (one word per 64-byte line), timed; none: no "
                  "copy in between. In brackets the ratio to none: what the copy's lines "
                  f"pushed out of the caches. {vic[0].get('reps')} rounds per run, median "
                  "per run, median of the runs.")
        md.append("")
        md.append("| routine | " + " | ".join(f"victim {k}" for k in vkinds) + " |")
        md.append("|---|" + "---|" * len(vkinds))
        for r in dict.fromkeys(d["routine"] for d in vic):
            cells = []
            for k in vkinds:
                m, base = vmed.get((r, k)), vmed.get(("none", k))
                cells.append("-" if m is None else
                             f"{m:.0f} ({m / base:.2f}x)" if base else f"{m:.0f}")
            md.append(f"| {r} | " + " | ".join(cells) + " |")
        md.append("")
    return md


def check(paths, need_main):
    bad, seen = [], set()
    for p in paths:
        recs = lines(p)
        if any(d.get("info") == "copymodel" for d in recs) and \
                any(d.get("bench") == "copy_native" for d in recs):
            bad += check_native(p, recs)
        # A movebench that counts says so in an info line; older runs have none
        counted = any(d.get("info") == "counts" for d in recs)
        for d in recs:
            if "error" in d:
                bad.append(f"{p}: {d['error']}")
            if "bench" not in d or "skip" in d:
                continue
            seen.add((d["bench"], d["kind"]) if d["bench"] != "copy_native" else
                     (d["bench"], d["kind"], d["routine"], d["shape"]))
            v = d.get("values")
            if not isinstance(v, list) or not v or ("n" in d and len(v) != d["n"]):
                bad.append(f"{p}: {d['bench']} {d.get('routine', '')} {d['kind']} "
                           f"{d.get('dir', d.get('shape', ''))}: values not one per run "
                           f"(n {d.get('n')}): {v}")
                v = []
            w = d.get("whole_after", 0.5)
            if isinstance(w, bool) or not isinstance(w, (int, float)) or \
                    not math.isfinite(w) or not 0 <= w <= 1:
                bad.append(f"{p}: {d['bench']} {d['kind']} {d.get('dir', '')}: "
                           f"whole_after not a share in [0, 1]: {w}")
            vals = v + d.get("values_cpu", []) + [d.get("mean")]
            for k in ("median_us", "p99_us", "max_us", "median", "min", "max", "median_cpu"):
                if k in d:
                    vals.append(d[k])
            if not vals or any(not isinstance(v, (int, float)) or not math.isfinite(v)
                               or v <= 0 for v in vals):
                bad.append(f"{p}: {d['bench']} {d.get('routine', '')} {d['kind']} "
                           f"{d.get('dir', d.get('shape', ''))}: not finite positive: {vals}")
            if "counts" in d:
                bad += [f"{p}: {d['bench']} {d['kind']} {d.get('dir', '')}: {b}"
                        for b in check_counts(d)]
            elif counted and d["bench"] in ("move_pages", "uffd_move", "kernel_window"):
                bad.append(f"{p}: {d['bench']} {d['kind']} {d.get('dir', '')}: no counts "
                           "(the file's movebench counts them)")
            if d["bench"] == "kernel_window" and \
                    not d.get("folios") == d.get("buffer_folios") == len(d.get("values") or []):
                bad.append(f"{p}: kernel_window {d['kind']} {d['tag']}: not every folio of the "
                           f"buffer counted: folios {d.get('folios')}, buffer "
                           f"{d.get('buffer_folios')}, values {len(d.get('values') or [])}")
            if "toucher_faults_per_folio" in d:
                bad += [f"{p}: {d['bench']} {d['kind']} {d['tag']}: {b}"
                        for b in check_faults(d)]
        # The in-kernel window against the same guest's copy of one 2MB folio
        recs = [dict(g, _boot=str(p)) for g in recs]
        if any(d.get("bench") == "kernel_window" and "skip" not in d for d in recs):
            floor, notes = window_floor(recs)
            bad += floor
            for n in notes:
                print(f"report: note: {n}")
        elif any(d.get("info") == "movebench" for d in recs):
            why = next((d["skip"] for d in recs if d.get("bench") == "kernel_window"
                        and "skip" in d), None)
            print(f"report: note: {p}: no in-kernel window figures ("
                  + (f"skipped: {why}" if why else "a movebench before the trace events")
                  + "): their check skipped")
    if need_main:
        for b, k in MAIN:
            if (b, k) not in seen:
                bad.append(f"missing figure: {b} {k}")
    for b in bad:
        print(f"report: {b}")
    print(f"report: {len(seen)} figures checked, {len(bad)} problems")
    return 1 if bad else 0


def check_counts(d):
    """movebench's per-run counts of figure d: problems, as strings."""
    bad, c = [], d["counts"]
    if not isinstance(c, dict):
        return ["counts is not an object"]
    for k, v in c.items():
        if not isinstance(v, list):
            continue
        if any(isinstance(x, bool) or not isinstance(x, int) for x in v):
            bad.append(f"counts {k}: not whole numbers: {v}")
        elif any(x < 0 for x in v):
            bad.append(f"counts {k}: negative: {v}")
        if len(v) != d.get("n"):
            bad.append(f"counts {k}: {len(v)} runs, the figure has {d.get('n')}")
    if not c.get("moved_bytes") or any(isinstance(x, int) and x <= 0 for x in c["moved_bytes"]):
        bad.append(f"counts: no bytes moved: {c.get('moved_bytes')}")
    own = c.get("mthp_split")
    if own is None and d["kind"] == "thp":
        own = c.get("thp_split_page")
    if d.get("whole_after") == 1.0 and own and \
            any(isinstance(x, int) and x > 0 for x in own):
        bad.append(f"whole_after 1.0 but splits of its own folio size in its runs: {own}")
    # A window run moves one THP mapped once: one unmap walk, one remap walk
    if d.get("bench") == "kernel_window":
        for k in ("rmap_unmap", "rmap_remap"):
            if k in c and any(x != 1 for x in c[k]):
                bad.append(f"counts {k}: a window run moves one folio, one walk each: {c[k]}")
    return bad


def check_faults(d):
    """The toucher's page faults of window figure d: problems, as strings."""
    f = d["toucher_faults_per_folio"]
    if not isinstance(f, list) or \
            any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in f):
        return [f"toucher_faults_per_folio: not whole numbers, none negative: {f}"]
    bad = []
    if len(f) != d.get("folios"):
        bad.append(f"toucher_faults_per_folio: {len(f)} folios, the figure has "
                   f"{d.get('folios')}")
    if sum(f) != d.get("toucher_faults"):
        bad.append(f"toucher_faults {d.get('toucher_faults')} is not the sum of "
                   f"toucher_faults_per_folio ({sum(f)})")
    return bad


def run_splits(c, i):
    """Run i's splits: the split counters of counts c summed (None if none)."""
    keys = [k for k in SPLIT_KEYS if k in c]
    if "mthp_split" in c and c.get("mthp_kb") != PMD_KB:
        keys.append("mthp_split")
    return sum(c[k][i] for k in keys) if keys else None


def num(x):
    """A count or a rate, short: whole numbers as such."""
    if x is None:
        return "n/a"
    if x == int(x):
        return str(int(x))
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 1 else f"{x:.2g}"


def counts_section(records, accel):
    """The counts table (Markdown lines), or [] when no figure has counts.
    records carry "_boot" (their file): one median per boot over its runs,
    then the median of the boot medians."""
    per = {}   # (bench, kind, dir, tag) -> boot -> metric -> [per-run values]
    idle = set()   # keys of figures run without a busy thread in the mm
    precopy = False   # a kernel counts migration precopy
    rmap = set()   # the rmap walk counters some run has
    for d in records:
        c = d.get("counts")
        if "bench" not in d or "skip" in d or not isinstance(c, dict):
            continue
        if not d.get("busy_threads") and d["bench"] != "kernel_window":
            idle.add((d["bench"], d["kind"], d.get("dir"), d["tag"]))
        moved = c.get("moved_bytes", [])
        m = per.setdefault((d["bench"], d["kind"], d.get("dir"), d["tag"]), {}) \
            .setdefault(d.get("_boot", ""), {"ipi": [], "splits": [], "mig": []})
        for i, b in enumerate(moved):
            if "tlb_ipi" in c and b:
                m["ipi"].append(c["tlb_ipi"][i] / (b / 2**20))
            sp = run_splits(c, i)
            if sp is not None:
                m["splits"].append(sp)
            if "pgmigrate_success" in c:
                m["mig"].append(c["pgmigrate_success"][i])
            for k, _ in PRECOPY_KEYS:
                if k in c:
                    m.setdefault(k, []).append(c[k][i])
                    precopy = True
            folios = b / KIND_FOLIO[d["kind"]] if d["kind"] in KIND_FOLIO else 0
            if d["bench"] == "kernel_window":
                folios = 1   # one 2MB THP a run
            for k, _ in RMAP_KEYS:
                if k in c and folios:
                    m.setdefault(k, []).append(c[k][i] / folios)
                    rmap.add(k)
    if not per:
        return []
    kernels = [t for t in KERNELS if t != "patched+precopy" or any(k[3] == t for k in per)]
    metrics = [("ipi", "TLB IPIs/MB"), ("splits", "splits/run"), ("mig", "migrated/run")]
    if precopy:
        metrics += [(k, col) for k, col in PRECOPY_KEYS]
    metrics += [(k, col) for k, col in RMAP_KEYS if k in rmap]
    windows = any(k[0] == "kernel_window" for k in per)

    def cell(key, metric):
        if key[3] == "patched+precopy" and key[0] != "kernel_window":
            return "-"
        boots = [statistics.median(v[metric]) for _, v in sorted(per.get(key, {}).items())
                 if v.get(metric)]
        if not boots:
            return "n/a"
        mid, lo, hi = statistics.median(boots), min(boots), max(boots)
        mark = "*" if metric == "ipi" and key in idle else ""
        return num(mid) + mark + ("" if lo == hi else f" ({num(lo)}–{num(hi)})")

    infos = {}
    for d in records:
        if d.get("info") == "counts":
            infos.setdefault(d["tag"], (d.get("tlb_source", "?"), tuple(d.get("missing", []))))
    sources = sorted({v[0] for v in infos.values()})
    md = [f"## Exact counts per run, {' vs '.join(kernels)} [{accel}: counts are exact]", ""]
    md.append("- Kernel event counters read in the guest right before and right after "
              "each timed run; their deltas are exact under any accelerator, unlike the "
              "times below. TLB IPIs/MB: TLB-flush IPIs ("
              + (", ".join(sources) or "?") + ", summed over the CPUs) per MB moved. "
              "splits/run: " + " + ".join(SPLIT_KEYS[:2]) + " (+ thp_split_pte where the "
              "kernel has it) + hugepages-64kB/stats/split in 64 KB mTHP runs (in 2 MB THP "
              "runs that stat counts the same splits as thp_split_page, so only once). migrated/run: pgmigrate_success (base pages).")
    every = "- Every move_pages() and UFFDIO_MOVE row" if windows else "- Every row"
    md.append((every if not idle else every + " not marked *")
              + " ran with one thread of the mm busy on another vCPU than the mover "
              "(both pinned), so that a TLB flush of the moved range is an IPI and shows "
              "here; without it the mm is live on the mover's CPU alone, its flushes are "
              "local and the count is 0 whatever the kernel does."
              + (" *: run without that thread (an older movebench): its TLB count says "
                 "nothing." if idle else ""))
    wrows = [d for d in records if d.get("bench") == "kernel_window" and "skip" not in d]
    if windows and is_new_window(wrows):
        md.append("- window rows: 2 MB THP moved node 0 -> 1 by one move_pages() call per "
                  "folio, so a run is one folio; " + threads_note(wrows)
                  + ". The same runs as the in-kernel window table.")
    elif windows:
        md.append("- window rows: 2 MB THP moved node 0 -> 1 by one move_pages() call per "
                  "folio, so a run is one folio; idle: no other thread in the mm (its "
                  "flushes stay local); + writer: a thread of the mm writing the folio on "
                  "vCPU 1. The same runs as the in-kernel window table.")
    if precopy:
        md.append("- precopied/run: pgmigrate_precopy (folios migrated on the copy made "
                  "before their unmap); redone/run: pgmigrate_precopy_redo (copied again "
                  "inside the window: written, or write-protected, meanwhile).")
    if rmap:
        md.append("- walks/folio: rmap walks per folio moved (movebench -k: kprobe hits, "
                  "over the whole guest, on each walk's per-VMA callback: unmap "
                  "try_to_migrate_one(), remap remove_migration_pte(), and the pre-copy's "
                  "write-protect, in-window check and reopen; one per walk, every folio "
                  "moved having one mapping; a split adds a remap walk per folio it "
                  "makes). The probes' traps fall inside the timed runs.")
    md.append(f"- ({', '.join(SHORT[t] for t in kernels)}): "
              + ", ".join(kernels) + ". Each: the median over boots of every boot's median "
              "over its runs, (low–high) the boot medians where they differ; n/a: no counts."
              + (f" p+pc: the patched kernel with {knob_at_1(records)}, in the same boots "
                 "after their other runs; window rows only (-: not run so)."
                 if "patched+precopy" in kernels else ""))
    missing = {t: v[1] for t, v in infos.items() if v[1]}
    if missing:
        if len(set(missing.values())) == 1 and len(missing) == len(infos):
            md.append("- Not on these kernels, so left out: "
                      + ", ".join(next(iter(missing.values()))) + ".")
        else:
            md.append("- Not on the kernel, so left out: " + "; ".join(
                f"{t}: {', '.join(v)}" for t, v in sorted(missing.items())) + ".")
    md.append("")
    short = ", ".join(SHORT[t] for t in kernels)
    md.append("| figure | " + " | ".join(f"{col} ({short})" for _, col in metrics) + " |")
    md.append("|---" * (len(metrics) + 1) + "|")
    tags = sorted({k[3] for k in per})
    rows = list(FIGURES) + [("kernel_window", tuple(k for k, _ in WINDOW_KINDS), ("0->1",))]
    for b, kinds, dirs in rows:
        for k in kinds:
            for dr in dirs:
                if not any((b, k, dr, t) in per for t in tags):
                    continue
                if b == "kernel_window":
                    name = f"window 2MB THP {dict(WINDOW_KINDS)[k]} (per folio)"
                else:
                    name = f"move_pages {k} {dr}" if b == "move_pages" else f"UFFDIO_MOVE {k}"
                cells = [", ".join(cell((b, k, dr, t), metric) for t in kernels)
                         for metric, _ in metrics]
                md.append(f"| {name} | " + " | ".join(cells) + " |")
    md.append("")
    return md


def pool(records):
    """(bench, kind, dir, kernel) -> {'values': [...], extras of the last}."""
    out = {}
    for d in records:
        if "bench" not in d or "skip" in d or d["bench"] == "copy_native":
            continue
        key = (d["bench"], d["kind"], d.get("dir") or d.get("shape"), d["tag"])
        e = out.setdefault(key, {"values": [], "meta": d, "windows": []})
        e["values"] += d.get("values", [d["mean"]])
        if "median_us" in d:
            e["windows"].append(d)
    return out


def ms(vals):
    if not vals:
        return None, None
    return statistics.mean(vals), (statistics.stdev(vals) if len(vals) > 1 else 0.0)


def fmt(m, s, nd=3):
    return "n/a" if m is None else f"{m:.{nd}g} ± {s:.2g}"


def boot_key(rec):
    """Boot order of a record: the round number in its file's name."""
    m = re.search(r"-(\d+)\.jsonl$", rec.get("_boot", ""))
    return (int(m.group(1)) if m else 0, rec.get("_boot", ""))


def by_boot(records):
    """(bench, kind, dir, kernel) -> that figure's record of every boot, in
    boot order (records carry "_boot": their file, one per boot)."""
    out = {}
    for d in records:
        if "bench" not in d or "skip" in d or d["bench"] == "copy_native":
            continue
        out.setdefault((d["bench"], d["kind"], d.get("dir"), d["tag"]), []).append(d)
    for recs in out.values():
        recs.sort(key=boot_key)
    return out


def boot_medians(recs):
    """Each boot's median over its runs."""
    return [statistics.median(d.get("values") or [d["mean"]]) for d in recs]


def g3(x):
    return f"{x:.3g}"


def boots_cell(meds):
    """'a / b': the boots' medians in boot order."""
    return " / ".join(map(g3, meds)) if meds else "n/a"


def overlap(a, b):
    """Do the ranges of two lists of boot medians overlap?"""
    return max(min(a), min(b)) <= min(max(a), max(b))


def p99(v):
    """Nearest-rank 99th percentile of v (at least 100 values)."""
    v = sorted(v)
    return v[math.ceil(0.99 * len(v)) - 1]


# The window table prints a p99 only from this many folios of one boot
P99_MIN = 100


def us(x):
    """A time in µs, short."""
    return f"{x:.0f}" if x >= 10 else f"{x:.3g}"


def copy_2mb_us(records):
    """(boot, tag) -> µs to copy 2 MB at that boot's median of its memcpy in
    2MB chunks node 0 -> 1 (the guest's own copy of one 2MB folio's bytes)."""
    out = {}
    for d in records:
        if d.get("bench") == "memcpy" and d.get("kind") == "2MB" and "skip" not in d \
                and d.get("values"):
            gibs = statistics.median(d["values"])
            if gibs > 0:
                out[(d.get("_boot", ""), d["tag"])] = 2 / 1024 / gibs * 1e6
    return out


def own_kernel(tag):
    """The kernel a tag ran on: patched+precopy is the patched guest."""
    return tag.split("+")[0]


def window_floor(records):
    """Each base boot's median in-kernel window (idle, + writer) against the
    same guest's copy of one 2MB folio (its memcpy 2MB row): a window that
    does not hold the copy of its folio measures something else. Returns
    (problems, notes), as strings."""
    copy = copy_2mb_us(records)
    bad, notes = [], []
    for d in records:
        if d.get("bench") != "kernel_window" or "skip" in d or d.get("tag") != "base" \
                or not d.get("values"):
            continue
        boot = d.get("_boot", "")
        med = statistics.median(d["values"])
        c = copy.get((boot, "base"))
        if c is None:
            notes.append(f"{boot}: base {d['kind']}: no memcpy 2MB row in that guest, "
                         "so its window is not compared with a copy")
        elif med < c:
            bad.append(f"{boot}: in-kernel window of base {d['kind']}: median {us(med)} µs, "
                       f"below that guest's copy of one 2MB folio ({us(c)} µs, 2 MB at its "
                       "memcpy 2MB median): the trace does not span the copy")
    return bad, notes


def is_new_window(records):
    """Do the window figures among records say which thread ran where (a
    movebench with the reader and the spinner)? Older ones get the tables
    and notes they always had."""
    return any("toucher" in d for d in records
               if d.get("bench") in ("window", "kernel_window") and "skip" not in d)


def threads_note(rows):
    """What the window kinds ran with, from their figures' own members."""
    def cpus(key, only=lambda d: True):
        v = sorted({d[key] for d in rows if only(d) and isinstance(d.get(key), int)
                    and d[key] >= 0})
        return "/".join(map(str, v)) or "?"
    spin = [d for d in rows if d.get("spinner")]
    note = (f"the mover pinned to vCPU {cpus('mover_cpu')}; idle: no thread touching the "
            "folio; + reader: a thread of the mm reading one word of the folio over and "
            "over, each read timed; + writer: one writing a byte of it, timed; + dirtier: "
            "one writing every line of the folio over and over, untimed (so that a "
            f"pre-copy finds it written); the toucher pinned to vCPU {cpus('toucher_cpu')}")
    if spin:
        note += ("; in every kind, idle too, a spinner: a thread of the mm spinning on "
                 f"vCPU {cpus('spinner_cpu', lambda d: d.get('spinner'))} without touching "
                 "the folio, so that every TLB flush of a migration (and of a pre-copy's "
                 "write-protect) reaches another CPU by IPI, also while the toucher "
                 "sleeps on the migration entry")
        if len(spin) < len(rows):
            note += " (not in the runs of a guest with fewer than 3 vCPUs)"
    else:
        note += ("; no spinner (a guest with fewer than 3 vCPUs): with no toucher, "
                 "idle's flushes stay local")
    return note


def knob_at_1(records):
    """The pre-copy knob at 1, as the notes name it: the sysctl, or the
    debugfs file movebench found (its "precopy" info line)."""
    k = next((d.get("knob") for d in records
              if d.get("info") == "precopy" and d.get("present")), None)
    return "vm.migrate_precopy=1" if k in (None, SYSCTL_KNOB) else f"`{k}` at 1"


def folio_rate(d, what):
    """A window figure's count per folio it moved, None where it has none:
    faults, the toucher's page faults; ipi, TLB IPIs; copies, the copies of
    the folio (one per folio moved, one more for each copied again inside
    the window after its pre-copy); in_window, those made inside the window
    (all but the pre-copies kept)."""
    if what == "faults":
        f = d.get("toucher_faults_per_folio")
        return sum(f) / len(f) if f else None
    c, folios = d.get("counts") or {}, d.get("folios")
    if not folios:
        return None
    if what == "ipi":
        return sum(c["tlb_ipi"]) / folios if "tlb_ipi" in c else None
    if "thp_migration_success" not in c:
        return None
    moved = sum(c["thp_migration_success"])
    if what == "copies":
        return (moved + sum(c.get("pgmigrate_precopy_redo", []))) / folios
    return (moved - sum(c.get("pgmigrate_precopy", []))) / folios


def rate(x):
    """A count per folio: whole numbers as such, else two decimals."""
    return "n/a" if x is None else str(int(x)) if x == int(x) else f"{x:.2f}"


def stat_cells(vals):
    """The cells every window row starts with, each boot's values in turn:
    how many, the median, the p99 (from P99_MIN values) and the max."""
    return (" / ".join(str(len(v)) for v in vals) + " | "
            + " / ".join(us(statistics.median(v)) for v in vals) + " | "
            + " / ".join(us(p99(v)) if len(v) >= P99_MIN else f"n<{P99_MIN}" for v in vals)
            + " | " + " / ".join(us(max(v)) for v in vals) + " | ")


def window_rows(records, bench):
    """The figures of @bench a window table shows, and what every such
    table needs beside them: (rows, records by boot, the 2MB copy time,
    the kernels in report order); rows is [] when there is none."""
    rows = [d for d in records if d.get("bench") == bench and "skip" not in d]
    tags = {d["tag"] for d in rows}
    kernels = [t for t in KERNELS if t in tags] + sorted(tags - set(KERNELS))
    return rows, by_boot(records), copy_2mb_us(records), kernels


def kernel_window_section(records, accel):
    """The in-kernel window table (Markdown lines), [] when no record has
    one. records carry "_boot" (their file, one per boot)."""
    rows, B, copy, kernels = window_rows(records, "kernel_window")
    if not rows:
        return []
    clocks = sorted({(d.get("trace_clock", "?"), d.get("clock_step_us")) for d in rows},
                    key=str)
    per_folio = sorted({(k, d[k] / max(d.get("folios") or 1, 1)) for d in rows
                        for k in ("set_migration_pmd", "remove_migration_pmd",
                                  "set_migration_pte", "remove_migration_pte") if d.get(k)})
    md = [f"## In-kernel window per folio, 2MB THP, µs [{accel}]", ""]
    md.append("- Per folio, from the guest's trace events: the time from its first "
              "set_migration_pte/pmd event to its last remove_migration_pte/pmd one "
              "while move_pages() moves it node 0 -> 1, one folio per call: how long the "
              "folio is out of reach in the kernel. Trace clock "
              + "; ".join(f"`{c}` (smallest step seen between two markers: "
                          f"{'?' if st is None else us(st)} µs)" for c, st in clocks)
              + ". Events per folio: "
              + (", ".join(f"{k} {num(v)}" for k, v in per_folio) or "none") + ".")
    dirtier = any(d.get("kind") == "thp-dirtier" for d in rows)
    new = is_new_window(rows)
    who = ("- " + threads_note(rows) + " (+ reader and + writer: the runs of the toucher's "
           "view below)") if new else \
        ("- idle: no other thread in the mm; + writer: a thread writing the folio "
         "meanwhile (the runs of the writer's view below)"
         + ("; + dirtier: a thread writing every line of the folio over and over "
            "meanwhile, untimed (so that a pre-copy finds the folio written)"
            if dirtier else ""))
    md.append(who + ". Per boot, in boot order: "
              "the median over its folios, the p99 (only from a boot of at least "
              f"{P99_MIN} folios; n<{P99_MIN}: too few, see max), the max; folios: those "
              "counted (movebench reports an error when a folio of the buffer lacks either "
              "event).")
    md.append("- one 2MB memcpy: 2 MB at that boot's median of the guest's memcpy in 2MB "
              "chunks, node 0 -> 1 (user space, the memcpy 2MB row measured in the same "
              "guest; patched+precopy: its patched boot's). The report and `report.py "
              "--check` fail when a base boot's median in-kernel window is below it: the "
              "window holds the copy of the folio.")
    if "patched+precopy" in kernels:
        md.append(f"- patched+precopy: the patched boots again with {knob_at_1(records)} "
                  "(after their other runs). Its folios are copied before the migration "
                  "entries are set, while their mappings are read-only, so this window "
                  "leaves the pre-copy out. A write during the pre-copy does not wait: its "
                  "write-protect fault reuses the exclusive folio (do_wp_page(), "
                  "do_huge_pmd_wp_page(), without the folio lock) and leaves the entry "
                  "dirty, and the folio is then copied again inside the window, which "
                  "pgmigrate_precopy_redo (counts) counts."
                  + (" A read goes on through the read-only mapping and leaves the folio "
                     "clean: a reader meets the window alone, the folio is not copied "
                     "again." if any(d.get("kind") == "thp-reader" for d in rows) else ""))
    fromcall = any("call_median_us" in d for d in rows)
    if fromcall:
        md.append("- from the call: per folio, the time from the start of the move_pages() "
                  "call that moved it (its mm_migrate_pages_start event) to its last "
                  "remove_migration_pte/pmd event: the window plus all that comes before the "
                  "migration entries (allocating the new folio, and with the pre-copy its "
                  "write-protect, flush and copy). Per boot: the median and the max over its "
                  "folios; -: a kernel or movebench without it.")
    if new:
        md.append("- per folio, per boot, exact counts: toucher faults: the page faults of "
                  "the thread touching the folio (getrusage(RUSAGE_THREAD), minor + major, "
                  "taken by that thread around each of its accesses; -: idle, no toucher); "
                  "TLB IPIs: /proc/interrupts TLB (or vmstat nr_tlb_remote_flush_received) "
                  "over the guest, read around each folio's move_pages() call; copies "
                  "(in the window): thp_migration_success + pgmigrate_precopy_redo, one "
                  "copy per folio moved plus one for each pre-copied folio copied again, "
                  "and in brackets those made inside the window (thp_migration_success - "
                  "pgmigrate_precopy: all but the pre-copies kept).")
    if accel == "tcg":
        md.append("- Emulated (TCG): guest time, not hardware time.")
    elif new and accel == "guest":
        md.append("- The accelerator is not in these files: under TCG (every guest of "
                  "this repo so far) the times are emulated guest time, not hardware "
                  "time; the counts are exact either way.")
    md.append("")
    extra_h = " median from the call | max from the call |" if fromcall else ""
    count_h = " toucher faults/folio | TLB IPIs/folio | copies/folio (in the window) |" \
        if new else ""
    md.append("| kernel | 2MB THP | folios per boot | median | p99 | max | one 2MB memcpy |"
              + extra_h + count_h)
    md.append("|---|---|---|---|---|---|---|" + ("---|---|" if fromcall else "")
              + ("---|---|---|" if new else ""))
    for tag in kernels:
        for kind, label in WINDOW_KINDS:
            recs = B.get(("kernel_window", kind, "0->1", tag))
            if not recs:
                continue
            vals = [r.get("values") or [] for r in recs]
            cp = [copy.get((r.get("_boot", ""), own_kernel(tag))) for r in recs]
            md.append(f"| {tag} | {label} | " + stat_cells(vals)
                      + " / ".join("n/a" if c is None else us(c) for c in cp) + " |"
                      + ("".join(" " + " / ".join(us(r[k]) if k in r else "-" for r in recs)
                                 + " |" for k in ("call_median_us", "call_max_us"))
                         if fromcall else "")
                      + (" " + " / ".join("-" if kind == "thp-idle" else
                                          rate(folio_rate(r, "faults")) for r in recs)
                         + " | " + " / ".join(rate(folio_rate(r, "ipi")) for r in recs)
                         + " | " + " / ".join(f"{rate(folio_rate(r, 'copies'))} "
                                              f"({rate(folio_rate(r, 'in_window'))})"
                                              for r in recs) + " |" if new else ""))
    md.append("")
    return md


def toucher_window_section(records, accel):
    """The toucher's view: per boot the longest access per folio of the
    thread reading or writing it (movebench's "window" figures), beside the
    in-kernel window of the same runs, with its page faults per folio.
    Markdown lines, [] when there is none. records carry "_boot"."""
    rows, B, copy, kernels = window_rows(records, "window")
    if not rows:
        return []
    md = [f"## The toucher's view: a reader or a writer blocked while its 2MB THP "
          f"migrates, µs [{accel}]", ""]
    md.append("- Per folio the longest access of the thread touching it while it moves node "
              "0 -> 1 (+ reader: a read of one word; + writer: a write of one byte; each "
              "timed), in the same runs as the in-kernel table's rows of that name, with "
              "their threads. Per boot, in boot order: the median over the folios, the p99 "
              f"(only from a boot of at least {P99_MIN} folios; n<{P99_MIN}: too few, see "
              "max), the max; faulting: the median and the max over the folios of the "
              "longest access that took a page fault (0 for a folio where none did; an "
              "access without a fault was held up by the scheduler alone, under TCG the "
              "host's too, not by the migration); in-kernel median: that boot's median "
              "in-kernel window of the same runs; one 2MB memcpy: as in the in-kernel "
              "table.")
    md.append("- The pre-copy is for the reader: its reads go on while the folio is "
              "copied (the mapping is read-only, not gone) and wait for the window alone. "
              "A write faults on the write-protect, and the folio is copied again inside "
              "the window.")
    md.append("- toucher faults/folio: its page faults (getrusage(RUSAGE_THREAD), minor + "
              "major, taken around each access by the toucher itself) per folio moved.")
    if accel == "tcg":
        md.append("- Emulated (TCG): guest time, not hardware time.")
    elif accel == "guest":
        md.append("- The accelerator is not in these files: under TCG (every guest of "
                  "this repo so far) the times are emulated guest time, not hardware time.")
    md.append("")
    md.append("| kernel | toucher | folios per boot | median | p99 | max | faulting median | "
              "faulting max | in-kernel median | one 2MB memcpy | toucher faults/folio |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for tag in kernels:
        for kind, label, kkind in TOUCHER_KINDS:
            recs = B.get(("window", kind, "0->1", tag))
            if not recs:
                continue
            kw = {r.get("_boot", ""): r for r in B.get(("kernel_window", kkind, "0->1", tag), [])}
            vals = [r.get("values") or [] for r in recs]
            kmed = [kw.get(r.get("_boot", ""), {}).get("values") for r in recs]
            cp = [copy.get((r.get("_boot", ""), own_kernel(tag))) for r in recs]
            md.append(f"| {tag} | {label} | " + stat_cells(vals)
                      + "".join(" / ".join(us(r[k]) if k in r else "-" for r in recs) + " | "
                                for k in ("faulting_median_us", "faulting_max_us"))
                      + " / ".join(us(statistics.median(k)) if k else "n/a" for k in kmed)
                      + " | " + " / ".join("n/a" if c is None else us(c) for c in cp) + " | "
                      + " / ".join(rate(folio_rate(r, "faults")) for r in recs) + " |")
    md.append("")
    return md


def main(d):
    d = Path(d)
    meta = json.loads((d / "meta.json").read_text())
    accel = meta["accel"]
    guest = []
    for f in sorted(d.glob("guest-*.jsonl")):
        guest += [dict(g, _boot=f.name) for g in lines(f)]
    errs = [g["error"] for g in guest if "error" in g]
    skips = sorted({f"{g['bench']} {g['kind']}: {g['skip']}" for g in guest if "skip" in g})
    B = by_boot(guest)
    native = lines(d / "native.jsonl") if (d / "native.jsonl").exists() else []
    N = pool(native)

    def meds(b, k, dr, tag):
        return boot_medians(B.get((b, k, dr, tag), []))

    def mid(b, k, dr, tag):
        m = meds(b, k, dr, tag)
        return statistics.median(m) if m else None

    md = [f"# Benchmark {meta['date']} ({meta['sha']})", ""]
    md.append(f"- Guest: {accel.upper()}, {meta['vcpus']} vCPUs, {meta['mem_mb']} MB in 2 NUMA "
              f"nodes, CPU model `{meta['cpu_model']}`, same shape for both kernels; "
              f"{meta['rounds']} boots per kernel interleaved (base, patched, ...), "
              f"{meta['runs']} runs per boot, {meta['size_mb']} MB per run "
              f"(1GB hugetlb: {meta['runs_1g']} runs per boot)"
              + ("; guest RAM allocated on the host before boot." if meta.get("prealloc") else "."))
    md.append(f"- Kernels: base `{meta['base_kernel']}`, patched `{meta['patched_kernel']}` "
              f"(same config: tinyconfig + selftests/config).")
    virt = " (itself a virtual machine)" if meta.get("host_virtual") else ""
    md.append(f"- Host: {meta['host_cpu']}{virt}, {meta['host_cpus']} CPUs, load average at "
              f"start {meta['load_start']}, at end {meta.get('load_end', '?')}.")
    if accel == "tcg":
        md.append("- **Emulated (TCG)**: the guest's copies run ~60x slower than native and "
                  "its `rep movsb` is slower still than the vector memcpy of user space. "
                  "These are not hardware numbers; only base-vs-patched ratios of what is "
                  "not a byte copy (UFFDIO_MOVE: splits, flushes, IPIs) carry over.")
    md.append("")
    # Counts first: exact where the times are emulated
    md += counts_section(guest, accel)

    # The limit a move_pages() figure is compared with: the guest's memcpy of
    # the whole buffer (as many bytes in one go) in the same direction.
    mc = {(d["dir"], d.get("bytes")): rs for (b, k, dr, t), rs in B.items()
          for d in rs[:1] if b == "memcpy" and k == "whole" and t == "patched"}
    mc_dirs = {k[0] for k in mc}
    md.append(f"## move_pages() and UFFDIO_MOVE, GiB/s, per-boot medians [{accel}]")
    md.append("")
    md.append("- base, patched: each boot's median over its runs, in boot order (boots "
              "alternate base, patched, ...). Runs are not pooled across boots: the runs "
              "of one boot can agree while the boots of one kernel differ.")
    md.append("- ratio: patched / base, each the median of its boot medians; (overlap): "
              "the range of base's boot medians and that of patched's overlap, so the "
              "boots do not tell the kernels apart: no conclusion.")
    md.append("- of memcpy: patched / the guest's single-thread memcpy of as many bytes "
              "in one go, in the same direction, on the patched boots (medians of boot "
              "medians); -: UFFDIO_MOVE copies no data.")
    md.append("- whole (b, p): the lowest share, over the boots, of large folios still "
              "whole after the move, base and patched.")
    md.append("")
    md.append("| figure | base | patched | ratio | of memcpy | whole (b, p) |")
    md.append("|---|---|---|---|---|---|")
    rows, notes = [], {}
    for b, kinds, dirs in FIGURES:
        for k in kinds:
            for dr in dirs:
                rb, rp = B.get((b, k, dr, "base"), []), B.get((b, k, dr, "patched"), [])
                if not rb and not rp:
                    continue
                mb, mp = boot_medians(rb), boot_medians(rp)
                bm = statistics.median(mb) if mb else None
                pm = statistics.median(mp) if mp else None
                if bm and pm:
                    ratio = f"{pm / bm:.2f}x"
                    if len(mb) < 2 or len(mp) < 2:
                        ratio += " (1 boot)"
                    elif overlap(mb, mp):
                        ratio += " (overlap)"
                else:
                    ratio = "n/a"
                if b != "move_pages":
                    frac = "-"
                elif not pm:
                    frac = "n/a"
                else:
                    nbytes = (rp or rb)[0].get("bytes")
                    lim = mc.get((dr, nbytes))
                    if lim:
                        frac = f"{pm / statistics.median(boot_medians(lim)):.0%}"
                    elif not mc:
                        frac = "n/a [3]"
                        notes[3] = "[3] no memcpy figure from the patched boots."
                    elif dr not in mc_dirs:
                        frac = "n/a [1]"
                        notes[1] = (f"[1] no memcpy {dr} in the guest (movebench copies "
                                    f"node {' and '.join(sorted(mc_dirs)) or 'none'} only): "
                                    "a figure is compared only with a copy in its own direction.")
                    else:
                        frac = "n/a [2]"
                        notes[2] = ("[2] no memcpy of that size in the guest: these runs "
                                    f"move {nbytes >> 20} MB each, the memcpy copies "
                                    + ", ".join(f"{n >> 20} MB" for _, n in sorted(mc)
                                                if isinstance(n, int))
                                    + "; a figure is compared only with a copy of as many bytes.")

                def whole(recs):
                    w = [r["whole_after"] for r in recs if "whole_after" in r]
                    return g3(min(w)) if w else "n/a"
                name = f"move_pages {k} {dr}" if b == "move_pages" else f"UFFDIO_MOVE {k}"
                md.append(f"| {name} | {boots_cell(mb)} | {boots_cell(mp)} | {ratio} | "
                          f"{frac} | {whole(rb)}, {whole(rp)} |")
                rows.append((name, bm, pm))
    md.append("")
    if notes:
        md += [notes[n] for n in sorted(notes)]
        md.append("")
    lims = []
    for k, label in (("2MB", "2MB chunks"), ("whole", f"{meta['size_mb']} MB at once")):
        lims.append(f"{label} base {boots_cell(meds('memcpy', k, '0->1', 'base'))}, "
                    f"patched {boots_cell(meds('memcpy', k, '0->1', 'patched'))}")
    md.append("memcpy (single thread, node 0 -> 1, same guest), GiB/s, boot medians: "
              + "; ".join(lims) + ".")
    md.append("")

    # The in-kernel window (trace events); runs of older movebenches have none
    kw = kernel_window_section(guest, accel)
    if kw:
        md += kw
        floor, floor_notes = window_floor(guest)
        errs += floor
        for n in floor_notes:
            print(f"report: {n}", file=sys.stderr)
    else:
        print("report: no in-kernel window figures in this run (a movebench before the "
              "trace events): that table and its check skipped", file=sys.stderr)

    # The toucher's view: the writer's table, and the reader's where movebench has one
    if is_new_window(guest):
        md += toucher_window_section(guest, accel)
    else:
        md.append(f"## The window: a writer blocked while its 2MB THP migrates, µs [{accel}]")
        md.append("")
        md.append("- Per folio the longest write while it migrates node 0 -> 1. Per boot, in "
                  "boot order: the median over the folios, the p99 (only from a boot of at "
                  f"least {P99_MIN} folios; n<{P99_MIN}: too few for a p99, see max) and the "
                  "max. One 2MB memcpy: 2 MB at the median of boot medians of the memcpy in "
                  "2MB chunks, node 0 -> 1, on that kernel's boots.")
        if any(r.get("traced") for recs in B.values() for r in recs if r["bench"] == "window"):
            md.append("- The writer's view of the same runs as the in-kernel \"+ writer\" rows "
                      "above (the trace events on): the writer meets a migration only when its "
                      "write lands inside the window.")
        md.append("")
        md.append("| kernel | folios per boot | median | p99 | max | one 2MB memcpy |")
        md.append("|---|---|---|---|---|---|")
        for tag in KERNELS:
            recs = B.get(("window", "thp", "0->1", tag))
            if not recs:
                continue
            vals = [r.get("values") or [] for r in recs]
            lim_2m = mid("memcpy", "2MB", "0->1", own_kernel(tag))
            copy2m = 2 / 1024 / lim_2m * 1e6 if lim_2m else None
            md.append(f"| {tag} | {' / '.join(str(len(v)) for v in vals)} | "
                      + " / ".join(f"{statistics.median(v):.0f}" for v in vals) + " | "
                      + " / ".join(f"{p99(v):.0f}" if len(v) >= P99_MIN else f"n<{P99_MIN}"
                                   for v in vals) + " | "
                      + " / ".join(f"{max(v):.0f}" for v in vals) + " | "
                      + f"{'n/a' if copy2m is None else f'{copy2m:.0f}'} |")
        md.append("")

    md += native_section(native, N, rows)
    if skips:
        md.append("Skipped: " + "; ".join(skips) + ".")
        md.append("")
    if errs:
        md.append("**Errors**: " + "; ".join(errs))
        md.append("")
    md.append("Raw data: guest-*.jsonl (one file per boot), native.jsonl, meta.json. "
              "Plot: plot.png.")
    (d / "report.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    plot(d, rows, accel)
    return 1 if errs else 0


def med_fmt(d):
    """median (min-max) of a copymodel row"""
    return f"{d['median']:.3g} ({d['min']:.3g}–{d['max']:.3g})"


def native_section(native, N, rows):
    """The host-native copy model: copymodel's table (copy_native rows), or
    the older one of saved runs (copy_model rows: rep movsb only)."""
    md = []
    info = next((x for x in native if x.get("info") == "copymodel"), {})
    end = next((x for x in native if x.get("info") == "copymodel_end"), {})
    R = {(d["routine"], d["kind"], d["shape"]): d for d in native
         if d.get("bench") == "copy_native"}
    if R:
        mb = info.get("bytes", 0) >> 20
        flags = ", ".join(f"{f} {'yes' if info.get(f) else 'no'}" for f in ("erms", "fsrm", "avx512f"))
        virt = ", a virtual machine" if info.get("hypervisor") else ""
        ls = info.get("loadavg_start", [info.get("loadavg_1m")])
        le = end.get("loadavg_end", ["?"])
        md.append("## Host-native copy routines, GiB/s, median (min–max) [native]")
        md.append("")
        fam = (f", family {info['cpu_family']} model {info['cpu_model_nr']}"
               if info.get("cpu_family", -1) >= 0 else "")
        md.append(f"- CPU: `{info.get('cpu_model')}`{fam} ({flags}{virt}); pinned to CPU "
                  f"{info.get('cpu')}; {info.get('runs')} runs, every routine and shape "
                  f"interleaved, order rotated each run; {mb} MB buffers"
                  f"{' backed by THP' if info.get('thp') else ' of 4KB pages'}, cold source; "
                  f"{end.get('seconds', '?')} s in all.")
        md.append(f"- Host load average (1, 5, 15 min) {' '.join(map(str, ls))} at start, "
                  f"{' '.join(map(str, le))} at end"
                  + (" — a busy host: compare the on-CPU column" if ls and isinstance(ls[0], (int, float))
                     and ls[0] > 1 else "") + ".")
        if info.get("quick"):
            md.append("- Quick mode (`copymodel -q`): a smoke test, not a measurement.")
        if info.get("kernel_copy"):
            md.append(f"- Kernel routines assembled from `{info.get('ksrc')}` "
                      "(arch/x86/lib/copy_mc_64.S, memcpy_64.S) with bench/kshim, called "
                      "through a wrapper shaped like copy_mc_to_kernel(); kernel_memcpy is "
                      "its memcpy() branch on a CPU without ERMS (memcpy_orig, no FSRM). "
                      "Not modelled: the return thunk of retbleed/SRSO mitigations.")
        else:
            md.append(f"- **Fallback**: {info.get('note')}.")
        md.append("- folio: 2MB = 512 folios of 2MB (THP); whole = the buffer as one folio "
                  f"({mb}MB, as a 1GB hugetlb folio). per-page: 4KB calls; one call: the "
                  "folio in one call. ratio: one call / per-page. of glibc: / glibc memcpy "
                  "in one call, same folio. on-CPU: medians counting only the time the "
                  "thread ran (preemptions left out; memory-bandwidth sharing and any "
                  "hypervisor steal stay in), and their ratio.")
        md.append("")
        md.append("| routine | folio | per-page | one call | ratio | per-page of glibc | "
                  "one call of glibc | on-CPU per-page, one call | on-CPU ratio |")
        md.append("|---|---|---|---|---|---|---|---|---|")
        order = [r for r in KERNEL_ROUTINES + OWN_ROUTINES if any(k[0] == r for k in R)]
        order += sorted({k[0] for k in R} - set(order))
        for r in order:
            for k in NATIVE_KINDS:
                pp, one = R.get((r, k, "per-page")), R.get((r, k, "one call"))
                lim = R.get(("glibc_memcpy", k, "one call"))
                if not pp or not one:
                    continue
                label = "2MB" if k == "2MB" else f"{mb}MB"
                ratio = one["median"] / pp["median"]
                fp = f"{pp['median'] / lim['median']:.0%}" if lim else "n/a"
                fo = f"{one['median'] / lim['median']:.0%}" if lim else "n/a"
                cp, co = pp.get("median_cpu"), one.get("median_cpu")
                oncpu = f"{cp:.3g}, {co:.3g} | {co / cp:.2f}x" if cp and co else "n/a | n/a"
                md.append(f"| {r} | {label} | {med_fmt(pp)} | {med_fmt(one)} | {ratio:.2f}x | "
                          f"{fp} | {fo} | {oncpu} |")
        md.append("")

        def m(r, k, sh="one call"):
            d = R.get((r, k, sh))
            return d["median"] if d else None

        notes = []
        for k in NATIVE_KINDS:
            label = "2MB" if k == "2MB" else f"{mb}MB"
            q, b = m("rep_movsq", k), m("rep_movsb", k)
            qp, bp = m("rep_movsq", k, "per-page"), m("rep_movsb", k, "per-page")
            if q and b and qp and bp:
                n = (f"rep movsq / rep movsb, page-aligned, {label}: one call "
                     f"{q / b:.2f}x, per-page {qp / bp:.2f}x")
                qc, bc = R[("rep_movsq", k, "one call")].get("median_cpu"), \
                    R[("rep_movsb", k, "one call")].get("median_cpu")
                if qc and bc:
                    n += f" (on-CPU, one call: {qc / bc:.2f}x)"
                notes.append(n)
        for k in NATIVE_KINDS:
            label = "2MB" if k == "2MB" else f"{mb}MB"
            g = m("glibc_memcpy", k)
            nt = [(m(r, k), r) for r in ("nt_movnti", "nt_movntdq") if m(r, k)]
            fast_r = "copy_mc_enhanced_fast_string" if m("copy_mc_enhanced_fast_string", k) \
                else "rep_movsb"
            fast = m(fast_r, k)
            if g and nt:
                v, r = max(nt)
                n = (f"best non-temporal copy in one call, {label}: {r} {v:.3g} GiB/s = "
                     f"{v / g:.0%} of glibc memcpy ({g:.3g})")
                if fast:
                    n += f"; {fast_r} (rep movsb) in one call {fast / g:.0%}"
                notes.append(n)
        if notes:
            md += [f"- {n}" for n in notes]
            md.append("")
        for k in NATIVE_KINDS:
            d = (R.get(("copy_mc_enhanced_fast_string", k, "per-page")), R.get(("copy_mc_enhanced_fast_string", k, "one call")))
            if not all(d):
                d = (R.get(("rep_movsb", k, "per-page")), R.get(("rep_movsb", k, "one call")))
            if all(d):
                label = "2MB (THP)" if k == "2MB" else f"{mb}MB (hugetlb)"
                rows.append((f"native {label} per-page vs one call", d[0]["median"], d[1]["median"]))
        return md
    if N:
        info = next((x for x in native if x.get("info") == "copymodel"), {})
        md.append("## Host-native copy model, GiB/s, mean ± stddev [native]")
        md.append("")
        md.append(f"`rep movsb` as per-page `copy_mc_to_kernel()` calls (before) and as one "
                  f"call (after), cold source, pinned to CPU {info.get('cpu')}, shapes "
                  f"interleaved, {info.get('runs')} runs, buffer {info.get('bytes', 0) >> 20} MB, "
                  f"load average {info.get('loadavg_1m')} at start.")
        md.append("")
        md.append("| folio | per-page calls | one call | ratio | memcpy | of memcpy |")
        md.append("|---|---|---|---|---|---|")
        for k, label in (("2MB", "2MB (THP)"), ("whole", f"{info.get('bytes', 0) >> 20}MB (hugetlb)")):
            pp = ms(N.get(("copy_model", k, "per-page", "native"), {}).get("values", []))
            one = ms(N.get(("copy_model", k, "one call", "native"), {}).get("values", []))
            mc = ms(N.get(("copy_model", k, "memcpy", "native"), {}).get("values", []))
            if pp[0] is None:
                continue
            md.append(f"| {label} | {fmt(*pp)} | {fmt(*one)} | {one[0] / pp[0]:.2f}x | "
                      f"{fmt(*mc)} | {one[0] / mc[0]:.0%} |")
            rows.append((f"native {label} per-page vs one call", pp[0], one[0]))
        md.append("")
    return md


def plot(d, rows, accel):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: python3-matplotlib missing, no plot", file=sys.stderr)
        return
    rows = [r for r in rows if r[1] and r[2]]
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(rows) + 1.5))
    y = range(len(rows))
    ax.barh([i + 0.2 for i in y], [r[1] for r in rows], 0.4, label="base / per-page")
    ax.barh([i - 0.2 for i in y], [r[2] for r in rows], 0.4, label="patched / one call")
    ax.set_yticks(list(y))
    ax.set_yticklabels([r[0] + (" [native]" if r[0].startswith("native") else f" [{accel}]")
                        for r in rows], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("GiB/s (log)")
    ax.legend(fontsize=8)
    ax.set_title(f"base vs patched ({accel} guest; native host copy model)")
    fig.tight_layout()
    fig.savefig(d / "plot.png", dpi=100)


def text(d):
    """report.md as plain text for a mail: aligned columns, no markup."""
    import textwrap
    out, table = [], []

    def flush():
        if not table:
            return
        rows = [[c.strip() for c in r.strip().strip("|").split("|")] for r in table
                if not set(r.replace("|", "").strip()) <= set("-: ")]
        w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            out.append("  " + "  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
        table.clear()

    for line in (Path(d) / "report.md").read_text().splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        flush()
        if line.startswith("# ") or line.startswith("Raw data") or line.startswith("Plot"):
            continue
        line = line.replace("**", "").replace("`", "")
        if line.startswith("## "):
            line = line[3:]
        if line.startswith("- "):
            out += textwrap.wrap(line, 72, subsequent_indent="  ")
        elif len(line) > 72:
            out += textwrap.wrap(line, 72)
        else:
            out.append(line)
    flush()
    while out and not out[-1].strip():
        out.pop()
    print("\n".join(out))


def native_only(d):
    """report.md of a copymodel run alone (scripts/copymodel)."""
    d = Path(d)
    native = lines(d / "native.jsonl")
    errs = [x["error"] for x in native if "error" in x]
    meta = json.loads((d / "meta.json").read_text()) if (d / "meta.json").exists() else {}
    md = [f"# Host-native copy model {meta.get('date', '')} ({meta.get('sha', '?')})", ""]
    if meta:
        md.append(f"- Run by `{meta.get('command', 'copymodel')}`; host {meta.get('host_cpu')}, "
                  f"{meta.get('host_cpus')} CPUs; load average {meta.get('load_start')} before, "
                  f"{meta.get('load_end')} after.")
        md.append("")
    md += native_section(native, pool(native), [])
    if errs:
        md.append("**Errors**: " + "; ".join(errs))
        md.append("")
    md.append("Raw data: native.jsonl, meta.json.")
    (d / "report.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 1 if errs else 0


def newest(paths):
    """Print the finished run with the latest date in its meta.json."""
    runs = []
    for p in map(Path, paths):
        for d in [p] + (sorted(p.iterdir()) if p.is_dir() else []):
            if (d / "report.md").is_file() and (d / "meta.json").is_file():
                try:
                    meta = json.load(open(d / "meta.json"))
                    date = meta["date"]
                except (ValueError, KeyError, OSError):
                    continue
                # a benchmark run names its two kernels (make icount's
                # runs, which also have a report.md, do not)
                if "patched_kernel" not in meta:
                    continue
                runs.append((date, d.name, str(d)))
    if not runs:
        return 1
    print(max(runs)[2])
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--newest":
        sys.exit(newest(sys.argv[2:]))
    if len(sys.argv) == 3 and sys.argv[1] == "--native":
        sys.exit(native_only(sys.argv[2]))
    if len(sys.argv) == 3 and sys.argv[1] == "--text":
        sys.exit(text(sys.argv[2]))
    if len(sys.argv) > 2 and sys.argv[1] == "--counts":
        recs = [dict(g, _boot=f) for f in sys.argv[2:] for g in lines(f)]
        md = counts_section(recs, "guest")
        print("\n".join(md) if md else "report: no counts in these files")
        sys.exit(0 if md else 1)
    if len(sys.argv) > 2 and sys.argv[1] == "--sweep":
        md = sweep_section([g for f in sys.argv[2:] for g in lines(f)])
        print("\n".join(md) if md else "report: no copy sweep in these files")
        sys.exit(0 if md else 1)
    if len(sys.argv) > 2 and sys.argv[1] == "--windows":
        recs = [dict(g, _boot=f) for f in sys.argv[2:] for g in lines(f)]
        md = kernel_window_section(recs, "guest")
        if md and is_new_window(recs):
            md += toucher_window_section(recs, "guest")
        print("\n".join(md) if md else "report: no in-kernel window figures in these files")
        sys.exit(0 if md else 1)
    if len(sys.argv) > 2 and sys.argv[1] in ("--check", "--check-guest"):
        sys.exit(check(sys.argv[2:], sys.argv[1] == "--check-guest"))
    if len(sys.argv) != 2:
        raise SystemExit("usage: report.py DIR | report.py --native DIR | report.py --check FILE...")
    sys.exit(main(sys.argv[1]))
