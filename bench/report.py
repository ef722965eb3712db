#!/usr/bin/env python3
"""Turn the JSON lines of movebench and copymodel into a report.

  report.py DIR            DIR/guest-*.jsonl, DIR/native.jsonl, DIR/meta.json
                           -> DIR/report.md (printed too) and DIR/plot.png
  report.py --check FILE...  smoke test: no error line, every figure a
                           finite positive number
  report.py --check-guest FILE...  the same, and movebench's main figures
                           are all there
  report.py --newest PATH...  the finished run (report.md and meta.json)
                           with the latest meta.json date, among the PATHs
                           and the directories right under them

Runs of the same kernel from several boots are pooled before the mean and
standard deviation are taken. Every table is tagged with where it ran:
kvm, tcg (emulated: only ratios mean anything) or native (host).
"""
import json
import math
import statistics
import sys
from pathlib import Path

MAIN = [("memcpy", "2MB"), ("memcpy", "whole"), ("move_pages", "thp"),
        ("move_pages", "mthp64k"), ("move_pages", "hugetlb2m"),
        ("uffd_move", "4k"), ("uffd_move", "mthp64k"), ("window", "thp")]


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


def check(paths, need_main):
    bad, seen = [], set()
    for p in paths:
        for d in lines(p):
            if "error" in d:
                bad.append(f"{p}: {d['error']}")
            if "bench" not in d or "skip" in d:
                continue
            seen.add((d["bench"], d["kind"]))
            vals = d.get("values", []) + [d["mean"]]
            for k in ("median_us", "p99_us", "max_us"):
                if k in d:
                    vals.append(d[k])
            if not vals or any(not isinstance(v, (int, float)) or not math.isfinite(v)
                               or v <= 0 for v in vals):
                bad.append(f"{p}: {d['bench']} {d['kind']} {d.get('dir', '')}: "
                           f"not finite positive: {vals}")
    if need_main:
        for b, k in MAIN:
            if (b, k) not in seen:
                bad.append(f"missing figure: {b} {k}")
    for b in bad:
        print(f"report: {b}")
    print(f"report: {len(seen)} figures checked, {len(bad)} problems")
    return 1 if bad else 0


def pool(records):
    """(bench, kind, dir, kernel) -> {'values': [...], extras of the last}."""
    out = {}
    for d in records:
        if "bench" not in d or "skip" in d:
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


def main(d):
    d = Path(d)
    meta = json.loads((d / "meta.json").read_text())
    accel = meta["accel"]
    guest = []
    for f in sorted(d.glob("guest-*.jsonl")):
        guest += lines(f)
    errs = [g["error"] for g in guest if "error" in g]
    skips = sorted({f"{g['bench']} {g['kind']}: {g['skip']}" for g in guest if "skip" in g})
    P = pool(guest)
    native = lines(d / "native.jsonl") if (d / "native.jsonl").exists() else []
    N = pool(native)

    def get(b, k, dr, tag):
        e = P.get((b, k, dr, tag))
        return ms(e["values"]) if e else (None, None)

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
    md.append("- ratio: patched / base. of memcpy: patched / single-thread memcpy of "
              "the whole buffer in the same guest. whole (b, p): share of large "
              "folios still whole after the move, base and patched.")
    if accel == "tcg":
        md.append("- **Emulated (TCG)**: the guest's copies run ~60x slower than native and "
                  "its `rep movsb` is slower still than the vector memcpy of user space. "
                  "These are not hardware numbers; only base-vs-patched ratios of what is "
                  "not a byte copy (UFFDIO_MOVE: splits, flushes, IPIs) carry over.")
    md.append("")

    lim_whole = get("memcpy", "whole", "0->1", "patched")[0]
    lim_2m = get("memcpy", "2MB", "0->1", "patched")[0]
    md.append(f"## move_pages() and UFFDIO_MOVE, GiB/s, mean ± stddev [{accel}]")
    md.append("")
    md.append("| figure | base | patched | ratio | of memcpy | whole (b, p) |")
    md.append("|---|---|---|---|---|---|")
    rows = []
    for b, kinds, dirs in (("move_pages", ("thp", "mthp64k", "hugetlb2m", "hugetlb1g"),
                            ("0->1", "1->0")),
                           ("uffd_move", ("4k", "mthp64k"), ("same node",))):
        for k in kinds:
            for dr in dirs:
                bm, bs = get(b, k, dr, "base")
                pm, psd = get(b, k, dr, "patched")
                if bm is None and pm is None:
                    continue
                sp = pm / bm if bm and pm else None
                frac = pm / lim_whole if pm and lim_whole and b == "move_pages" else None
                wb = P.get((b, k, dr, "base"), {}).get("meta", {}).get("whole_after")
                wp = P.get((b, k, dr, "patched"), {}).get("meta", {}).get("whole_after")
                name = f"move_pages {k} {dr}" if b == "move_pages" else f"UFFDIO_MOVE {k}"
                md.append(f"| {name} | {fmt(bm, bs)} | {fmt(pm, psd)} | "
                          f"{'n/a' if sp is None else f'{sp:.2f}x'} | "
                          f"{'-' if frac is None else f'{frac:.0%}'} | {wb}, {wp} |")
                rows.append((name, bm, pm))
    md.append("")
    md.append(f"memcpy limit (single thread, node 0 -> 1, same guest, patched boot): "
              f"2MB chunks {fmt(*get('memcpy', '2MB', '0->1', 'patched'))} GiB/s, "
              f"{meta['size_mb']} MB at once {fmt(*get('memcpy', 'whole', '0->1', 'patched'))} GiB/s.")
    md.append("")

    md.append(f"## The window: a writer blocked while its 2MB THP migrates, µs [{accel}]")
    md.append("")
    md.append("| kernel | folios | median | p99 | max | one 2MB memcpy |")
    md.append("|---|---|---|---|---|---|")
    copy2m = 2 / 1024 / lim_2m * 1e6 if lim_2m else None
    for tag in ("base", "patched"):
        e = P.get(("window", "thp", "0->1", tag))
        if not e:
            continue
        v = sorted(e["values"])
        md.append(f"| {tag} | {len(v)} | {v[len(v) // 2]:.0f} | {v[len(v) * 99 // 100]:.0f} | "
                  f"{v[-1]:.0f} | {'n/a' if copy2m is None else f'{copy2m:.0f}'} |")
    md.append("")

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


def newest(paths):
    """Print the finished run with the latest date in its meta.json."""
    runs = []
    for p in map(Path, paths):
        for d in [p] + (sorted(p.iterdir()) if p.is_dir() else []):
            if (d / "report.md").is_file() and (d / "meta.json").is_file():
                try:
                    date = json.load(open(d / "meta.json"))["date"]
                except (ValueError, KeyError, OSError):
                    continue
                runs.append((date, d.name, str(d)))
    if not runs:
        return 1
    print(max(runs)[2])
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--newest":
        sys.exit(newest(sys.argv[2:]))
    if len(sys.argv) == 3 and sys.argv[1] == "--text":
        sys.exit(text(sys.argv[2]))
    if len(sys.argv) > 2 and sys.argv[1] in ("--check", "--check-guest"):
        sys.exit(check(sys.argv[2:], sys.argv[1] == "--check-guest"))
    if len(sys.argv) != 2:
        raise SystemExit("usage: report.py DIR | report.py --check FILE...")
    sys.exit(main(sys.argv[1]))
