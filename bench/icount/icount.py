#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Helpers of scripts/icount (instruction counts of kernel objects under
QEMU TCG with bench/icount/icount-plugin.c).

  icount.py ranges BUILD_DIR OUT MAIN_OBJ [CALLEE_OBJ...]
      The guest virtual address range of every function of each object
      (relative to BUILD_DIR, e.g. mm/userfaultfd.o) in BUILD_DIR/vmlinux,
      written to OUT as "OBJ:FUNC START END" lines for the plugin, plus one
      "kernel:text" range (_stext to _etext). Functions of MAIN_OBJ that
      cannot be placed are an error; of a callee object, a warning.
  icount.py report RUN_DIR
      RUN_DIR/manifest.json + the plugin outputs it names -> counts.json
      and report.md in RUN_DIR.

Errors: one line "icount.py: error: ..." on stderr, exit status 1.
"""
import json
import os
import subprocess
import sys


def die(msg):
    sys.stderr.write(f"icount.py: error: {msg}\n")
    sys.exit(1)


def warn(msg):
    sys.stderr.write(f"icount.py: warning: {msg}\n")


def run(cmd):
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        die(f"missing tool '{cmd[0]}'")
    except subprocess.CalledProcessError as e:
        die(f"{' '.join(cmd)} failed: {e.stderr.strip().splitlines()[-1] if e.stderr.strip() else e.returncode}")


def object_functions(path):
    """(name, section, offset, size) of the functions in .text* sections."""
    funcs = []
    for line in run(["objdump", "-t", path]).splitlines():
        # 0000000000000064 l     F .text	000000000000001b PageHuge
        if len(line) < 26 or line[23] != "F":
            continue
        try:
            off = int(line[:16], 16)
            sec, rest = line[25:].split("\t", 1)
            size_s, name = rest.split(None, 1)
            size = int(size_s, 16)
        except ValueError:
            continue
        if sec.startswith(".text") and size:
            funcs.append((name.strip(), sec, off, size))
    return funcs


def vmlinux_symbols(path):
    """name -> [(addr, size)] of the text symbols with a size in vmlinux."""
    syms = {}
    for line in run(["nm", "--defined-only", "-S", path]).splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[2] not in "tTwW":
            continue
        syms.setdefault(parts[3], []).append((int(parts[0], 16), int(parts[1], 16)))
    return syms


def place(funcs, syms):
    """[(name, start, end)] of an object's functions in vmlinux, and the
    names that could not be placed. The linker keeps each input section
    whole, so a function is at its section's address plus its offset in
    it: the section's address comes from the functions whose name and size
    are unique in vmlinux (all must agree), and then places the others,
    static helpers whose names other objects use too."""
    bases, lost, placed = {}, [], []
    for name, sec, off, size in funcs:
        cands = [a for a, s in syms.get(name, []) if s == size]
        if len(cands) == 1:
            bases.setdefault(sec, set()).add(cands[0] - off)
    for sec, b in bases.items():
        if len(b) != 1:
            die(f"functions of section {sec} are not laid out contiguously in vmlinux "
                f"({len(b)} different bases): cannot place them")
    for name, sec, off, size in funcs:
        if sec not in bases:
            lost.append(name)
            continue
        addr = next(iter(bases[sec])) + off
        if (addr, size) not in syms.get(name, []):
            lost.append(name)
            continue
        placed.append((name, addr, addr + size))
    return sorted(placed, key=lambda p: p[1]), lost


def cmd_ranges(build, out, main, callees):
    vmlinux = os.path.join(build, "vmlinux")
    smap = os.path.join(build, "System.map")
    for f in (vmlinux, smap):
        if not os.path.isfile(f):
            die(f"no {f} (build the kernel first)")
    syms = vmlinux_symbols(vmlinux)
    lines = []
    for obj in [main] + callees:
        path = os.path.join(build, obj)
        if not os.path.isfile(path):
            if obj == main:
                die(f"no object {path}")
            warn(f"no object {path}: skipped")
            continue
        funcs = object_functions(path)
        if not funcs and obj == main:
            die(f"no function found in {path}")
        placed, lost = place(funcs, syms)
        if lost:
            msg = f"{obj}: cannot place {len(lost)} function(s) in vmlinux: {' '.join(lost[:8])}"
            if obj == main:
                die(msg)
            warn(msg)
        for name, s, e in placed:
            lines.append(f"{obj}:{name} {s:#x} {e:#x}")
    text = {}
    with open(smap) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] in ("_stext", "_etext"):
                text[parts[2]] = int(parts[0], 16)
    if len(text) == 2:
        lines.append(f"kernel:text {text['_stext']:#x} {text['_etext']:#x}")
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("# NAME START END (guest virtual, END exclusive), from "
                f"{os.path.abspath(vmlinux)}\n")
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, out)


def read_counts(path):
    """{range name: (insns, entries)} of one plugin output."""
    if not os.path.isfile(path):
        die(f"no plugin output {path}")
    counts = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, _, _, insns, entries = line.rstrip("\n").split("\t")
            counts[name] = (int(insns), int(entries))
    return counts


def group_of(name):
    return name.rsplit(":", 1)[0]


def fmt(x, nd=2):
    return f"{x:,.{nd}f}" if isinstance(x, float) else f"{x:,}"


def signed(x, nd=2):
    return ("+" if x > 0 else "") + f"{x:,.{nd}f}"


def cmd_report(rundir):
    mpath = os.path.join(rundir, "manifest.json")
    if not os.path.isfile(mpath):
        die(f"no {mpath}")
    with open(mpath) as f:
        man = json.load(f)
    main = man["main_object"]
    out = {"main_object": main, "rounds": man["rounds"], "pages": man["pages"],
           "configs": {}}
    md = [f"# Instruction counts of {main} under QEMU TCG", "",
          f"UFFDIO_MOVE of {man['size_mb']} MB of 4 KB pages, {man['rounds']} round trips "
          f"= {man['pages']} page moves per boot (bench/icount/uffdmove4k), "
          f"1 vCPU, kernel base {man['base'][:12]} with mm/userfaultfd.c of each step.",
          f"Host: {man['cpu']}; {man['qemu']}; plugin mode inline (exact counts).", "",
          "Per page = (instructions in the object during a boot that moves, minus "
          "a boot that runs the program with 0 round trips) / page moves. "
          "Callees outside the object are not in its count (see the callee table).", ""]
    pages = man["pages"]
    for cfg in man["configs"]:
        cname = cfg["name"]
        rows = []
        for v in cfg["variants"]:
            runs = [read_counts(os.path.join(rundir, p)) for p in v["runs"]]
            zero = read_counts(os.path.join(rundir, v["zero"]))
            names = sorted(set().union(*[set(r) for r in runs], zero))
            main_names = [n for n in names if group_of(n) == main]

            def tot(c, names=main_names):
                return sum(c.get(n, (0, 0))[0] for n in names)
            totals = [tot(r) for r in runs]
            per_fn = {}
            for n in main_names:
                d = runs[0].get(n, (0, 0))[0] - zero.get(n, (0, 0))[0]
                e = runs[0].get(n, (0, 0))[1] - zero.get(n, (0, 0))[1]
                if d or runs[0].get(n, (0, 0))[0]:
                    per_fn[n.split(":", 1)[1]] = {
                        "insns": runs[0].get(n, (0, 0))[0], "insns_zero": zero.get(n, (0, 0))[0],
                        "per_page": d / pages, "calls_per_page": e / pages}
            groups = {}
            for n in names:
                g = group_of(n)
                if g == main:
                    continue
                d = runs[0].get(n, (0, 0))[0] - zero.get(n, (0, 0))[0]
                gg = groups.setdefault(g, {"per_page": 0.0, "functions": {}})
                gg["per_page"] += d / pages
                if d and g != "kernel":
                    gg["functions"][n.split(":", 1)[1]] = d / pages
            row = {"name": v["name"], "commit": v.get("commit"), "subject": v.get("subject", ""),
                   "insns": totals, "insns_zero": tot(zero),
                   "per_page": (totals[0] - tot(zero)) / pages,
                   "boots_agree": len(set(totals)) == 1,
                   "boots_spread": max(totals) - min(totals),
                   "functions": per_fn, "callees": groups}
            rows.append(row)
        base = rows[0]["per_page"]
        prev = None
        for r in rows:
            r["delta_base"] = r["per_page"] - base
            r["delta_prev"] = r["per_page"] - prev if prev is not None else 0.0
            prev = r["per_page"]
        out["configs"][cname] = {"optimisation": cfg["opt"], "variants": rows}

        md += [f"## {cname} ({cfg['opt']})", "",
               f"| step | {main} insns (boot, moving) | 0-round boot | per page | Δ vs base | Δ vs previous |",
               "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for r in rows:
            boots = " / ".join(fmt(t) for t in r["insns"])
            md.append(f"| {r['name']} | {boots} | {fmt(r['insns_zero'])} | {fmt(r['per_page'])} "
                      f"| {signed(r['delta_base'])} | {signed(r['delta_prev'])} |")
        md.append("")
        if any(len(r["insns"]) > 1 for r in rows):
            md += ["Boots of the same kernel (the per-page figures use the first): " + "; ".join(
                f"{r['name']}, {len(r['insns'])} boots: " +
                ("identical counts" if r["boots_agree"] else
                 f"counts differ by at most {fmt(max(r['insns']) - min(r['insns']))} instructions "
                 f"({(max(r['insns']) - min(r['insns'])) / pages:.4f} per page)")
                for r in rows if len(r["insns"]) > 1), ""]
        # per-function table
        fnames = []
        for r in rows:
            for n, f in sorted(r["functions"].items(), key=lambda kv: -kv[1]["per_page"]):
                if abs(f["per_page"]) >= 0.005 and n not in fnames:
                    fnames.append(n)
        md += [f"Per function of {main}, instructions per page (calls per page):", "",
               "| function | " + " | ".join(r["name"] for r in rows) + " |",
               "| --- |" + " ---: |" * len(rows)]
        for n in fnames:
            cells = []
            for r in rows:
                f = r["functions"].get(n)
                cells.append("–" if not f else f"{fmt(f['per_page'])} ({fmt(f['calls_per_page'])})")
            md.append(f"| {n} | " + " | ".join(cells) + " |")
        md.append("")
        gnames = sorted({g for r in rows for g in r["callees"]})
        if gnames:
            md += ["Out-of-line callees, instructions per page in each object "
                   "(kernel:text is the whole kernel, interrupts included: not exact):", "",
                   "| object | " + " | ".join(r["name"] for r in rows) + " |",
                   "| --- |" + " ---: |" * len(rows)]
            for g in gnames:
                md.append(f"| {g} | " + " | ".join(
                    fmt(r["callees"].get(g, {}).get("per_page", 0.0)) for r in rows) + " |")
            md.append("")
            last = rows[-1]
            top = []
            for g, gg in last["callees"].items():
                for n, v in gg["functions"].items():
                    top.append((v, f"{g}:{n}"))
            top.sort(reverse=True)
            if top:
                md += [f"Busiest callee functions with {last['name']} (per page; base in brackets): " +
                       ", ".join(f"{n} {fmt(v)} ({fmt(rows[0]['callees'].get(group_of(n), {}).get('functions', {}).get(n.split(':', 1)[1], 0.0))})"
                                 for v, n in top[:12]), ""]
    for name, text in (("counts.json", json.dumps(out, indent=1) + "\n"), ("report.md", "\n".join(md))):
        tmp = os.path.join(rundir, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(rundir, name))


def main():
    a = sys.argv[1:]
    if len(a) >= 4 and a[0] == "ranges":
        cmd_ranges(a[1], a[2], a[3], a[4:])
    elif len(a) == 2 and a[0] == "report":
        cmd_report(a[1])
    else:
        die("usage: icount.py ranges BUILD_DIR OUT MAIN_OBJ [CALLEE_OBJ...] | report RUN_DIR")


if __name__ == "__main__":
    main()
