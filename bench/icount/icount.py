#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Helpers of scripts/icount (instruction counts of kernel objects under
QEMU TCG with bench/icount/icount-plugin.c).

  icount.py ranges BUILD_DIR OUT MAIN_OBJ [CALLEE_OBJ...]
      The guest virtual address range of every function of each object
      (relative to BUILD_DIR, e.g. mm/userfaultfd.o) in BUILD_DIR/vmlinux,
      written to OUT as "OBJ:FUNC START END" lines for the plugin, plus one
      "kernel:text" range (_stext to _etext), and the "@" directives of the
      plugin's gated whole-kernel count (the ioctl handler, the interrupt
      and exception entries, __schedule, the context switch: see
      gate_directives). Functions of MAIN_OBJ that cannot be placed, or a
      directive's symbol missing, are an error; of a callee object, a
      warning.
  icount.py report RUN_DIR
      RUN_DIR/manifest.json + the plugin outputs it names -> counts.json
      and report.md in RUN_DIR: per step, the main object's count per page
      and per function, the callee objects', and the whole kernel's: the
      gated count (exact) beside kernel:text (not exact).

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


# binutils for the kernel's architecture: the host's, or aarch64-linux-gnu-
# ones for an arm64 kernel on another host (set by cmd_ranges)
TOOLS = ""


def run(cmd):
    if cmd[0] in ("nm", "objdump"):
        cmd = [TOOLS + cmd[0]] + cmd[1:]
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


def elf_machine(path):
    with open(path, "rb") as f:
        head = f.read(20)
    if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        die(f"{path} is not a 64-bit little-endian ELF file")
    return {62: "x86_64", 183: "arm64"}.get(int.from_bytes(head[18:20], "little"))


def all_symbols(path):
    """name -> [address] of every text symbol in vmlinux, sized or not."""
    syms = {}
    for line in run(["nm", "--defined-only", path]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.setdefault(parts[2], []).append(int(parts[0], 16))
    return syms


def disassemble(path, start, end, arch):
    """[(address, mnemonic and operands)] of vmlinux's code in [start, end)."""
    out = run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={start:#x}",
               f"--stop-address={end:#x}", path])
    insns = []
    for line in out.splitlines():
        # ffffffff81a0b2c0:	mov    %rsp,0x598(%rdi)
        head, sep, rest = line.partition(":\t")
        if not sep:
            continue
        try:
            insns.append((int(head.strip(), 16), " ".join(rest.split())))
        except ValueError:
            continue
    return insns


def gate_directives(vmlinux, syms):
    """The plugin's gated count: where a system call of the mover starts
    (@gate), the interrupt entries (@async: not counted, with all they
    nest) and exception entries (@sync: counted as the code they
    interrupt), __schedule (@schedule, a statistic) and the context
    switch's stack pointer store and load (@switch-out, @switch-in: the
    address they access names the task). See bench/icount/icount-plugin.c."""
    arch = elf_machine(vmlinux)
    names = all_symbols(vmlinux)

    def one(name):
        a = names.get(name, [])
        if len(a) != 1:
            die(f"{vmlinux}: {'no' if not a else 'more than one'} symbol {name} (for the gated count)")
        return a[0]

    def sized(name):
        c = syms.get(name, [])
        if len(c) != 1 or not c[0][1]:
            die(f"{vmlinux}: no single sized symbol {name} (for the gated count)")
        return c[0]

    def rets(name, what):
        """The addresses of name's return instructions ("ret", or with
        return thunks the jump to __x86_return_thunk)."""
        a, size = sized(name)
        found, outside = [], []
        for addr, text in disassemble(vmlinux, a, a + size, arch):
            mnem = text.split(" ", 1)[0]
            if mnem.startswith("ret") or (mnem.startswith("jmp") and "<__x86_return_thunk" in text):
                found.append(addr)
            elif mnem in ("jmp", "b") and "<" in text:
                target = text.split("<", 1)[1].split(">", 1)[0]
                if not target.startswith(name + "+") and target != name:
                    outside.append(target)
        if not found:
            die(f"{vmlinux}: no return instruction in {name} ({what}, for the gated count)")
        if outside:
            warn(f"{name} jumps out of itself (tail calls to {', '.join(sorted(set(outside))[:4])}): "
                 f"{what} ends there only at the return to user mode")
        return found

    out = [f"# gated count ({arch})"]
    # ICOUNT_GATE_SYSCALL (scripts/icount's workload): the system call
    # whose handler opens the gate, ioctl unless named.
    sc = os.environ.get("ICOUNT_GATE_SYSCALL") or "ioctl"
    gate = f"__x64_sys_{sc}" if arch == "x86_64" else f"__arm64_sys_{sc}"
    if arch in ("x86_64", "arm64"):
        out.append(f"@gate {one(gate):#x}")
        out += [f"@gate-end {a:#x}" for a in rets(gate, "the gate")]
        # Not counted, from the entry to the return, in the task that
        # entered them: __schedule, and the preemption entries that
        # preempt_enable() calls when a reschedule is pending: whether
        # the mover is preempted depends on timing. How often __schedule
        # ran is a statistic.
        for fn in ("__schedule", "preempt_schedule_thunk", "preempt_schedule_notrace_thunk",
                   "preempt_schedule", "preempt_schedule_notrace"):
            if fn != "__schedule" and fn not in names:
                continue
            out.append(f"@pause {one(fn):#x}")
            out += [f"@resume {a:#x} {one(fn):#x}" for a in rets(fn, "the pause")]
    if arch == "x86_64":
        # The IDT's targets. External interrupts: one stub per vector in
        # irq_entries_start, spurious_entries_start (they jump to
        # asm_common_interrupt / asm_spurious_interrupt, which are not
        # entries). System vectors: asm_sysvec_*. NMI and #MC come
        # asynchronously too; the other asm_exc_* are raised by the code
        # they interrupt (page faults in uaccess, int3, ud2 of WARN).
        for stubs in ("irq_entries_start", "spurious_entries_start"):
            if stubs in syms:
                a, size = sized(stubs)
                out.append(f"@async {a:#x} {a + size:#x}")
            elif stubs == "irq_entries_start":
                die(f"{vmlinux}: no symbol irq_entries_start (for the gated count)")
        n_async = n_sync = 0
        for name in sorted(names):
            if name.startswith("asm_sysvec_") or name in ("asm_exc_nmi", "asm_exc_machine_check"):
                out.append(f"@async {one(name):#x}")
                n_async += 1
            elif name.startswith("asm_exc_") or name == "asm_int80_emulation":
                out.append(f"@sync {one(name):#x}")
                n_sync += 1
        if not n_async or "asm_exc_page_fault" not in names:
            die(f"{vmlinux}: no asm_sysvec_* or asm_exc_page_fault symbols (for the gated count)")
        if "asm_fred_entrypoint_kernel" in names:
            # FRED delivers through two entry points, not the IDT; the
            # guest CPU (QEMU 7.2's TCG "max") has no FRED, so the IDT
            # is what runs. Said here so that a FRED guest is not
            # measured silently wrong.
            out.append("# CONFIG_X86_FRED is built in; the guest CPU must not have FRED")
        sw, size = sized("__switch_to_asm")
        store = load = None
        for a, text in disassemble(vmlinux, sw, sw + size, arch):
            if store is None and text.startswith("mov ") and text.endswith("(%rdi)") and "%rsp," in text:
                store = a
            elif load is None and text.startswith("mov ") and text.endswith("(%rsi),%rsp"):
                load = a
        if store is None or load is None:
            die(f"{vmlinux}: no stack pointer store and load in __switch_to_asm (for the gated count)")
        out += [f"@switch-out {store:#x}", f"@switch-in {load:#x}"]
    elif arch == "arm64":
        # Exceptions taken from EL1 with SP_EL1: sync, IRQ, FIQ, SError,
        # in vectors and in each 2 KB table of __bp_harden_el1_vectors
        # (a CPU with a Spectre-BHB mitigation runs with one of those).
        tables = [one("vectors")]
        if "__bp_harden_el1_vectors" in syms:
            a, size = sized("__bp_harden_el1_vectors")
            tables += list(range(a, a + size, 0x800))
        for v in tables:
            out += [f"@sync {v + 0x200:#x}", f"@async {v + 0x280:#x}",
                    f"@async {v + 0x300:#x}", f"@async {v + 0x380:#x}"]
        sw, size = sized("cpu_switch_to")
        insns = disassemble(vmlinux, sw, sw + size, arch)
        # add x8, x0, x10 ... stp x19, x20, [x8], #16 (prev's cpu_context);
        # add x8, x1, x10 ... ldp x19, x20, [x8], #16 (next's)
        store = load = None
        base = None
        for a, text in insns:
            if text.startswith("add x8, x0,"):
                base = "prev"
            elif text.startswith("add x8, x1,"):
                base = "next"
            elif base == "prev" and store is None and text.startswith(("stp ", "str ")) and "[x8" in text:
                store = a
            elif base == "next" and load is None and text.startswith(("ldp ", "ldr ")) and "[x8" in text:
                load = a
        if store is None or load is None:
            die(f"{vmlinux}: no cpu_context store and load in cpu_switch_to (for the gated count)")
        out += [f"@switch-out {store:#x}", f"@switch-in {load:#x}"]
    else:
        die(f"{vmlinux}: the gated count knows x86_64 and arm64 kernels only")
    out.append(f"@schedule {one('__schedule'):#x}")
    return out


def insn_ranges(vmlinux, placed, out):
    """With ICOUNT_INSNS="FUNC ...", one range per instruction of these
    functions of the main object ("insn:FUNC+0xOFF"), to see where in a
    function the count goes; their disassembly goes to OUT.insns."""
    want = os.environ.get("ICOUNT_INSNS", "").split()
    if not want:
        return []
    arch = elf_machine(vmlinux)
    lines, text = [], []
    for w in want:
        hits = [(s, e) for n, s, e in placed if n == w]
        if len(hits) > 1:
            die(f"ICOUNT_INSNS: '{w}' is ambiguous in the main object")
        if not hits:
            warn(f"ICOUNT_INSNS: no function '{w}' in the main object of this step")
            continue
        s, e = hits[0]
        insns = disassemble(vmlinux, s, e, arch)
        for i, (a, t) in enumerate(insns):
            nxt = insns[i + 1][0] if i + 1 < len(insns) else e
            name = f"insn:{w}+{a - s:#x}"
            lines.append(f"{name} {a:#x} {nxt:#x}")
            text.append(f"{name}\t{t}")
    tmp = out + ".insns.tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(text) + "\n")
    os.replace(tmp, out + ".insns")
    return lines


def insns_md(rundir, cname, rows_runs, pages):
    """Per-instruction counts (ICOUNT_INSNS) of each step, per page."""
    md = []
    for vname, runs, zero, ranges in rows_runs:
        names = [n for n in runs[0] if n.startswith("insn:")]
        if not names:
            continue
        dis = {}
        if os.path.isfile(ranges):
            with open(ranges) as f:
                for line in f:
                    n, _, t = line.rstrip("\n").partition("\t")
                    dis[n] = t
        md += [f"## {cname}, {vname}: instructions per page, each instruction", "",
               "(blank: not executed while moving; lines run less than once per 100 pages are blank too)", ""]
        func = None
        total = 0.0
        def key(n):
            f, off = n[5:].rsplit("+", 1)
            return (f, int(off, 16))
        for n in sorted(names, key=key):
            f, off = key(n)
            if f != func:
                if func is not None:
                    md += [f"{'':>8}  total {total:.2f}", ""]
                md += [f"{f}:"]
                func, total = f, 0.0
            d = (runs[0][n][0] - zero.get(n, (0, 0))[0]) / pages
            total += d
            md.append(f"{d:8.2f}  {off:#6x}  {dis.get(n, '')}" if d >= 0.01 else f"{'':8}  {off:#6x}  {dis.get(n, '')}")
        md += [f"{'':>8}  total {total:.2f}", ""]
    return md


def cmd_ranges(build, out, main, callees):
    vmlinux = os.path.join(build, "vmlinux")
    smap = os.path.join(build, "System.map")
    for f in (vmlinux, smap):
        if not os.path.isfile(f):
            die(f"no {f} (build the kernel first)")
    global TOOLS
    if elf_machine(vmlinux) == "arm64" and os.uname().machine != "aarch64":
        TOOLS = "aarch64-linux-gnu-"
    syms = vmlinux_symbols(vmlinux)
    lines = []
    # MAIN_OBJ may name several objects joined by "+" (mm/rmap.o+mm/migrate.o)
    mains = main.split("+")
    main_placed = []
    for obj in mains + callees:
        path = os.path.join(build, obj)
        if not os.path.isfile(path):
            if obj in mains:
                die(f"no object {path}")
            warn(f"no object {path}: skipped")
            continue
        funcs = object_functions(path)
        if not funcs and obj in mains:
            die(f"no function found in {path}")
        placed, lost = place(funcs, syms)
        if lost:
            msg = f"{obj}: cannot place {len(lost)} function(s) in vmlinux: {' '.join(lost[:8])}"
            if obj in mains:
                die(msg)
            warn(msg)
        for name, s, e in placed:
            lines.append(f"{obj}:{name} {s:#x} {e:#x}")
        if obj in mains:
            main_placed += placed
            if obj == mains[-1]:
                lines += insn_ranges(vmlinux, main_placed, out)
    text = {}
    with open(smap) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] in ("_stext", "_etext"):
                text[parts[2]] = int(parts[0], 16)
    if len(text) == 2:
        lines.append(f"kernel:text {text['_stext']:#x} {text['_etext']:#x}")
    gate = gate_directives(vmlinux, syms)
    # Of the gated count, the page allocator's share is also given apart:
    # how much it works for an allocation (a refill of its per-CPU lists
    # from the buddy lists, a split) depends on its state, which boot
    # timing changes (seen: 3 instructions per page more in one boot of
    # five, all in __rmqueue_pcplist, expand, __add_to_free_list, ...).
    for obj in APART + os.environ.get("ICOUNT_APART_EXTRA", "").split():
        path = os.path.join(build, obj)
        if not os.path.isfile(path):
            warn(f"no object {path}: the gated count has no {obj} share apart")
            continue
        placed, lost = place(object_functions(path), syms)
        if lost:
            warn(f"{obj}: cannot place {len(lost)} function(s) for the gated count's share apart: "
                 f"{' '.join(lost[:8])}")
        gate += [f"@apart {s:#x} {e:#x}" for _, s, e in placed]
    lines += gate
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
        for no, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            try:
                name, _, _, insns, entries = line.rstrip("\n").split("\t")
                counts[name] = (int(insns), int(entries))
            except ValueError:
                die(f"{path}:{no}: not a plugin output line (NAME START END INSNS ENTRIES)")
    return counts


GATED = "gated:kernel"
GATED_LABEL = "kernel (mover's syscalls, no interrupts)"
APART = ["mm/page_alloc.o", "mm/vmstat.o"]
APART_LABEL = "without the page allocator"
APART_MORE = ""


def set_apart_extra(extra):
    """ICOUNT_VCPUS=2: the gated count leaves out kernel/smp.o as well."""
    global APART, APART_LABEL, APART_MORE
    if extra:
        APART = APART + extra
        APART_LABEL = "without the page allocator and " + ", ".join(extra)
        APART_MORE = (", and " + ", ".join(extra) + ", where the sender of an IPI waits "
                      "for the other vCPU, a spin whose length is emulation timing")


def gated_row(runs, zero, pages):
    """The whole-kernel figures of one step: the gated count (exact) and,
    beside it, kernel:text (every instruction in the kernel's text while
    the guest runs, interrupts and other tasks included: not exact)."""
    if not all(GATED in c for c in runs + [zero]):
        return None
    g = [r[GATED][0] for r in runs]
    ap = [r.get("gated:apart", (0, 0))[0] for r in runs]
    zap = zero.get("gated:apart", (0, 0))[0]
    x = [a - b for a, b in zip(g, ap)]
    zx = zero[GATED][0] - zap
    t = [r.get("kernel:text", (0, 0))[0] for r in runs]
    stats = [{n.split(":", 1)[1]: c[0] for n, c in r.items() if n.startswith("gated:") and n != GATED}
             for r in runs]
    zstats = {n.split(":", 1)[1]: c[0] for n, c in zero.items() if n.startswith("gated:") and n != GATED}
    return {"insns": g, "insns_zero": zero[GATED][0],
            "per_page": (g[0] - zero[GATED][0]) / pages,
            "per_page_boots": [(x - zero[GATED][0]) / pages for x in g],
            "boots_spread": max(g) - min(g),
            "stats": stats, "stats_zero": zstats,
            "apart_per_page_boots": [(a - zap) / pages for a in ap],
            "exact_insns": x, "exact_insns_zero": zx,
            "exact_per_page": (x[0] - zx) / pages,
            "exact_per_page_boots": [(a - zx) / pages for a in x],
            "exact_boots_spread": max(x) - min(x),
            "text_insns": t, "text_insns_zero": zero.get("kernel:text", (0, 0))[0],
            "text_per_page_boots": [(x - zero.get("kernel:text", (0, 0))[0]) / pages for x in t]}


def group_of(name):
    return name.rsplit(":", 1)[0]


def fmt(x, nd=2):
    return f"{x:,.{nd}f}" if isinstance(x, float) else f"{x:,}"


def signed(x, nd=2):
    return ("+" if x > 0 else "") + f"{x:,.{nd}f}"


def whole_kernel_md(rows, pages):
    md = [f"Whole kernel, instructions per page: **{GATED_LABEL}**: every "
          "instruction at a kernel address that the mover executes in the handler of its "
          "ioctl system calls (__x64_sys_ioctl / __arm64_sys_ioctl, from its entry to its "
          "return), every callee included, and the exceptions that code raises itself "
          "(\"exceptions\": page faults in uaccess, ...); excluded: asynchronous "
          "interrupts and all they run (timer ticks, IPIs, device interrupts, softirqs "
          "run on their exit, preemptions from them: \"interrupts\" gives how many), "
          "the system call's entry and exit code around the handler, other tasks (the gate "
          "follows the task across context switches), and __schedule with the preemption "
          "entries of preempt_enable() from their entry to their return: \"__schedule\" is "
          "how often the system call itself entered __schedule (voluntary context switches "
          "and preemptions, not counted; its own instructions would depend on timing), "
          "\"preempted in irq\" how often an interrupt of it did. "
          f"**{APART_LABEL}** is that count less its share in the page allocator "
          f"({', '.join(APART)}, given apart{APART_MORE}): the exact figure, the same in every boot "
          "of a kernel up to a few instructions (the allocator's work for the page tables "
          "the move allocates depends on the state of its lists, which boot timing changes: "
          "seen 3 per page more in one boot of five). Beside them, kernel:text, every "
          "instruction in the kernel's text while the guest ran: interrupts and other tasks "
          "included, so not exact.", "",
          f"| step | {APART_LABEL} (exact), boot(s) | 0-round boot | per page | Δ vs base "
          f"| Δ vs previous | per page, each boot | page allocator per page, each boot "
          f"| {GATED_LABEL}, per page, each boot | kernel:text per page, each boot (not exact) "
          "| __schedule | preempted in irq | interrupts | exceptions |",
          "| --- |" + " ---: |" * 13]
    base = rows[0]["kernel_gated"]["exact_per_page"]
    prev = None
    for r in rows:
        k = r["kernel_gated"]

        def d(name):  # in each moving boot
            return " / ".join(fmt(st.get(name, 0)) for st in k["stats"])

        def pp(v, nd=2):
            return " / ".join(f"{x:,.{nd}f}" for x in v)
        k["delta_base"] = k["exact_per_page"] - base
        k["delta_prev"] = k["exact_per_page"] - prev if prev is not None else 0.0
        prev = k["exact_per_page"]
        md.append(f"| {r['name']} | {' / '.join(fmt(x) for x in k['exact_insns'])} "
                  f"| {fmt(k['exact_insns_zero'])} | {fmt(k['exact_per_page'])} "
                  f"| {signed(k['delta_base'])} | {signed(k['delta_prev'])} "
                  f"| {pp(k['exact_per_page_boots'], 4)} | {pp(k['apart_per_page_boots'])} "
                  f"| {pp(k['per_page_boots'])} | {pp(k['text_per_page_boots'])} "
                  f"| {d('schedule-in-syscall')} | {d('schedule-in-interrupt')} "
                  f"| {d('interrupts')} | {d('exceptions-counted')} |")
    md.append("")
    multi = [r for r in rows if len(r["kernel_gated"]["insns"]) > 1]

    def spread(v):
        return max(v) - min(v)
    if multi:
        md += ["Boots of the same kernel, whole kernel: " + "; ".join(
            f"{r['name']}: {APART_LABEL} " +
            ("identical" if not r["kernel_gated"]["exact_boots_spread"] else
             f"differs by {fmt(r['kernel_gated']['exact_boots_spread'])} instructions "
             f"({r['kernel_gated']['exact_boots_spread'] / pages:.4f} per page)") +
            f", with the page allocator by {spread(r['kernel_gated']['insns']) / pages:.4f} per page"
            f", kernel:text by {spread(r['kernel_gated']['text_per_page_boots']):,.2f} per page"
            for r in multi), ""]
    odd = []
    for r in rows:
        for b, st in enumerate(r["kernel_gated"]["stats"] + [r["kernel_gated"]["stats_zero"]]):
            for name in ("user-in-frame", "frame-overflow", "task-table-full", "sysret-in-frame",
                         "user-in-gate"):
                if st.get(name):
                    odd.append(f"{r['name']} boot {b + 1 if b < len(r['kernel_gated']['stats']) else '0-round'}: "
                               f"{name} {st[name]}")
    md += ["Gate anomalies (the gate lost track; the count of that boot is suspect): " +
           ("; ".join(odd) if odd else "none"), ""]
    return md


# ---- the migration workloads (scripts/icount ICOUNT_WORKLOAD=migrate64k,
# migratethp): counted per folio, not per 4 KB page ----

def program_lines(path, prefix):
    """{word: value} of the "PROG: PREFIX: name +N name +N ..." line of a
    guest console (bench/icount/migratefolios.c), or None."""
    if not os.path.isfile(path):
        return None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if prefix in line:
                words = line.split(prefix, 1)[1].split()
                return {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}
    return None


def workload_row(row, rundir, man, v, runs, zero, names, units):
    """A step's calls per folio of the functions of the calls_of objects
    (the plugin's entries), the kernel counters the program read over the
    moves (first moving boot), and the interrupts over the moves in the
    boot with 2 vCPUs (v["ipi"])."""
    calls = {}
    for n in names:
        if group_of(n) in man.get("calls_of", []):
            e = runs[0].get(n, (0, 0))[1] - zero.get(n, (0, 0))[1]
            if e:
                calls[n] = e
    row["calls"] = calls
    row["counters"] = program_lines(os.path.join(rundir, v["runs"][0][:-len(".tsv")] + ".console"),
                                    ": counters over the moves:")
    row["interrupts"] = None
    if v.get("ipi"):
        row["interrupts"] = program_lines(os.path.join(rundir, v["ipi"]),
                                          ": interrupts over the moves (all CPUs):")
        if row["interrupts"] is None:
            die(f"no interrupt counts in {v['ipi']}")


def step_table(text, first, rows, keys, label, cell):
    """A paragraph, then a table with one row per key and a column per step."""
    md = [text, "", f"| {first} | " + " | ".join(r["name"] for r in rows) + " |",
          "| --- |" + " ---: |" * len(rows)]
    md += [f"| {label(k)} | " + " | ".join(cell(r, k) for r in rows) + " |" for k in keys]
    return md + [""]


def workload_md(rows, man):
    units = man["pages"]
    md = []

    def ordered(field, nonzero=False):
        keys = []
        for r in rows:
            keys += [k for k, d in (r[field] or {}).items() if (d or not nonzero) and k not in keys]
        return keys

    def per_folio(field):
        def cell(r, k):
            d = (r[field] or {}).get(k, 0)
            return f"{d / units:,.3f} ({fmt(d)})"
        return cell
    for obj in man.get("calls_of", []):
        text = (f"Calls per folio of the functions of {obj} (the plugin's entries: how often a "
                "function's first instruction ran, moving boot minus 0-move boot, over "
                f"{units} folio moves; the total in brackets):")
        fn = sorted(n for n in ordered("calls") if group_of(n) == obj)
        if not fn:
            md += [text, "", "(none of its functions ran while moving, in any step)", ""]
            continue
        md += step_table(text, "function", rows, fn, lambda n: n.split(":", 1)[1], per_folio("calls"))
    if any(r["counters"] for r in rows):
        md += step_table("Kernel counters over the moves (/proc/vmstat and the mTHP stats of the "
                         "folio size, read by the program before the first move and after the "
                         "last; first moving boot; totals):", "counter", rows, ordered("counters"),
                         str, lambda r, k: fmt((r["counters"] or {}).get(k, 0)))
    if any(r["interrupts"] for r in rows):
        md += step_table(
            "Interrupts over the moves, with 2 vCPUs: the mover on CPU 0 and a second "
            "thread of its mm spinning in user mode on CPU 1, so that a TLB flush of the "
            "mm must reach CPU 1 (a boot of its own, no plugin; /proc/interrupts summed "
            "over the CPUs, read by the program before the first move and after the "
            f"last; {units} folio moves). Per folio, the total in brackets. "
            "x86: TLB is the TLB shootdowns received (flush_tlb_func() run for another "
            "CPU), CAL the function-call IPIs that carry them; arm64 flushes the TLB by "
            "broadcast TLBI instructions, without IPIs. These are counts of what happened "
            "in one boot, not exact like the instruction counts: timer ticks (LOC) and "
            "whatever else ran meanwhile are in them too.",
            "interrupt", rows, ordered("interrupts", nonzero=True), str, per_folio("interrupts"))
    return md


def vcpu_words(man):
    """How many vCPUs the counted boots had."""
    if man.get("vcpus", 1) == 1:
        return "1 vCPU"
    return (f"{man['vcpus']} vCPUs, the mover on CPU 0 and a second thread of its mm "
            "spinning in user mode on CPU 1 (so TLB flushes are deferred and sent there)")


def workload_words(md, man):
    """The report's words for a migration workload: per folio, move_pages."""
    kind = {64: "64 KB mTHP", 2048: "PTE-mapped 2 MB THPs"}.get(man["folio_kb"], f"{man['folio_kb']} KB folios")
    nf = man["size_mb"] * 1024 // man["folio_kb"]
    moves = "one move" if man["rounds"] == 1 else f"{man['rounds']} moves (to node 1, back to node 0, ...)"
    head = (f"move_pages() of {man['size_mb']} MB of {kind} ({nf} folios) from NUMA node 0 to node 1: "
            f"{moves} of each folio = {man['pages']} folio moves per boot "
            f"(bench/icount/{man['program']}), {vcpu_words(man)}, kernel base {man['base'][:12]} with "
            f"{', '.join(man['files'])} of each step. The program checks every folio whole "
            "(pagemap, kpageflags) before the first move and after the last, on its node at "
            "new page frames, with its data; the main objects' count is "
            f"{' + '.join(man['main_objects'])}.")
    words = [("0 round trips", "0 moves"),
             ("seen 3 per page more in one boot of five", "seen for UFFDIO_MOVE 3 per 4 KB page more in one boot of five"),
             ("the page tables the move allocates", "the destination folios the migration allocates"),
             (f"its ioctl system calls (__x64_sys_ioctl / __arm64_sys_ioctl",
              f"its {man['syscall']} system calls (__x64_sys_{man['syscall']} / __arm64_sys_{man['syscall']}"),
             ("per 100 pages", "per 100 folios"), ("per page", "per folio"), ("Per page", "Per folio"),
             ("per-page", "per-folio"), ("0-round boot", "0-move boot"),
             ("page moves", "folio moves")]
    out = []
    for line in md:
        if line.startswith("UFFDIO_MOVE of "):
            line = head
        for a, b in words:
            line = line.replace(a, b)
        out.append(line)
    return out


def cmd_report(rundir):
    mpath = os.path.join(rundir, "manifest.json")
    if not os.path.isfile(mpath):
        die(f"no {mpath}")
    with open(mpath) as f:
        man = json.load(f)
    set_apart_extra(man.get("apart_extra", []))
    main = man["main_object"]
    mains = main.split("+")
    out = {"main_object": main, "rounds": man["rounds"], "pages": man["pages"],
           "configs": {}}
    md = [f"# Instruction counts of {main} under QEMU TCG", "",
          f"UFFDIO_MOVE of {man['size_mb']} MB of 4 KB pages, {man['rounds']} round trips "
          f"= {man['pages']} page moves per boot (bench/icount/uffdmove4k), "
          f"1 vCPU, kernel base {man['base'][:12]} with mm/userfaultfd.c of each step.",
          f"Host: {man['cpu']}; {man['qemu']}; plugin: inline counts per function, TB callbacks for the gated whole-kernel count (both exact).", "",
          "Per page = (instructions in the object during a boot that moves, minus "
          "a boot that runs the program with 0 round trips) / page moves. "
          "Callees outside the object are not in its count (see the callee table).", ""]
    pages = man["pages"]
    insns_files = []
    for cfg in man["configs"]:
        cname = cfg["name"]
        rows, insn_runs = [], []
        for v in cfg["variants"]:
            runs = [read_counts(os.path.join(rundir, p)) for p in v["runs"]]
            zero = read_counts(os.path.join(rundir, v["zero"]))
            names = sorted(set().union(*[set(r) for r in runs], zero))
            main_names = [n for n in names if group_of(n) in mains]

            def tot(c, names=main_names):
                return sum(c.get(n, (0, 0))[0] for n in names)
            totals = [tot(r) for r in runs]
            per_fn = {}
            for n in main_names:
                d = runs[0].get(n, (0, 0))[0] - zero.get(n, (0, 0))[0]
                e = runs[0].get(n, (0, 0))[1] - zero.get(n, (0, 0))[1]
                if d or runs[0].get(n, (0, 0))[0]:
                    per_fn[n.split(":", 1)[1] if len(mains) == 1 else n.rsplit("/", 1)[-1]] = {
                        "insns": runs[0].get(n, (0, 0))[0], "insns_zero": zero.get(n, (0, 0))[0],
                        "per_page": d / pages, "calls_per_page": e / pages}
            groups = {}
            insn_runs.append((v["name"], runs, zero,
                              os.path.join(rundir, v["zero"][:-len("-r0.tsv")] + ".ranges.insns")))
            for n in names:
                g = group_of(n)
                if g in mains or g in ("gated", "insn"):
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
                   "functions": per_fn, "callees": groups,
                   "kernel_gated": gated_row(runs, zero, pages)}
            if man.get("workload"):
                workload_row(row, rundir, man, v, runs, zero, names, pages)
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
        if all(r["kernel_gated"] for r in rows):
            md += whole_kernel_md(rows, pages)
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
                   "(kernel:text is every instruction in the kernel's text, interrupts and other "
                   "tasks included: not exact; the exact whole-kernel figure is the gated one above):", "",
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
        if man.get("workload"):
            md += workload_md(rows, man)
        imd = insns_md(rundir, cname, insn_runs, pages)
        if imd:
            insns_files.append((f"insns-{cname}.txt", "\n".join(imd) + "\n"))
            md += [f"Per instruction of {os.environ.get('ICOUNT_INSNS', 'the ICOUNT_INSNS functions')}: insns-{cname}.txt", ""]
    if man.get("workload"):
        md = workload_words(md, man)
        insns_files = [(n, "\n".join(workload_words(t.split("\n"), man))) for n, t in insns_files]
    for name, text in [("counts.json", json.dumps(out, indent=1) + "\n"), ("report.md", "\n".join(md))] + insns_files:
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
