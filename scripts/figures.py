#!/usr/bin/env python3
"""The figure check: every measured figure the series quotes is backed.

    scripts/figures [--root DIR | -C DIR] [--list] [--index]    (or FIGURES_ROOT=DIR scripts/figures)

--list also prints every backed figure with the file that backs it (the
first results file holding it, or the sources list). --index writes
results/INDEX.md instead of comparing it.

DIR (default: this repository) must be the top of a git worktree. Exit 0
when nothing is wrong, 1 when a figure is unbacked or a local path was
found, 2 when the check cannot run (bad arguments, DIR not a worktree, a
malformed sources list).

What is read
------------
The texts: the commit message of every patches/*.patch (from its Subject
header to the first line that is exactly "---") and the notes below that
"---" (up to the diffstat), cover-letter.in, cover-letter.txt, README.md,
docs/*.md and the cover letters of the postings (postings.d/*.cover, and
postings/*.cover where postings is a directory); those of them that
exist. URLs and e-mail addresses or
message ids in them are skipped.

The results: every file `git ls-files results/` lists, as the index holds
it (what `git add` recorded, so a file or an edit not yet added does not
count), except binary files (a NUL byte) and the sources list itself.

What counts as a figure
-----------------------
A number standing on its own (not part of a word, identifier, path,
version or date: x86_64, v3, gcc-16, linux-source-7.3, 4a11007, 13/18,
10^4, =2, 2026-12-04, 7.3.4 and 0.6.4 are not figures) that is
  - a decimal with a fractional part: 13.8, 163.7, 0.60, 1.5GB (except
    right after a version word: Linux, QEMU, gcc, clang, b4, sparse,
    python, Debian, version; except one followed by "+", as in 6.8+; and
    except one written against other letters, as in 1.2rc), or
  - followed by a unit of measurement: a ratio "x" written against the
    number (1.21x; "64 MB x 5" is no ratio), a percentage (31%), a time
    (s, ms, us, µs, ns, min, minutes, hours ...), a rate (anything/s:
    12.1 GiB/s, 4000 moves/s), one of the count words instructions,
    cycles, passed, failed, skipped, or a measured count: splits, IPIs,
    faults, migrations, warnings, with at most one word between (1024
    splits, 32 TLB-flush IPIs, 0 new warnings).
A number followed by "/", "-", "–", "->", "→", "to", "and", "or" or ","
and then a figure with a unit takes that unit: in "7396 / 4542 us" and
"373–396 s" both numbers are figures.
Integers without such a unit are not figures: sizes and counts given as
parameters (2MB, 64 KB, 1 GB, 512 pages, order 9, 10 runs), patch numbers
(0004), commit ids, line numbers. An integer count that was measured is
checked only when a unit or count noun says so (1024 splits, not "1024
folios split"). A
number in a table is a figure by the same rule. A parameter the rule
takes for a figure (a timeout of 600 s, a version 6.12 in prose) goes
in the sources list with the reason.

Backed means
------------
(a) the number, digit for digit, is in a data or report file of the
    results folder the figure's paragraph (lines up to a blank line)
    names, results/<dir> or results/<dir>/<file> (any of them if several
    are named); or, where the paragraph names none, in one of the folders
    the `sources` lines of its posting in `postings` list (the texts of a
    posting are its patches and its cover letter). A text that is in no
    posting and names no folder backs nothing from results/. Meta files
    (meta.json, meta.txt: load averages, dates) and results/INDEX.md back
    nothing. The number is found only as a whole (31 is not in 131, 0.31
    or 31.5; 22,349.80 is read as 22349.80 on both sides, so 349.80 does
    not back it). A whole number with a time unit (736 s, 17 minutes)
    must be there as a time of the same kind: followed by a unit of that
    kind (s, ms, us, ns, min, h in any spelling used here), or in a
    markdown table under a "#" heading naming that unit; or
(b) it is listed in the sources list, results/figure-sources.txt: one
    figure a line, "<figure><TAB><where it comes from>", blank lines and
    lines starting with "#" ignored, e.g.

        19.57<TAB>Shivank Garg, RFC v2 cover letter (AMD EPYC Zen 6), https://lore...
        20 s<TAB>not a figure: scripts/vm's KVM probe timeout

    <figure> is a number, alone or with its unit as the text writes it.
    A bare number (19.57) covers that number with any unit or none; with
    a unit (1.41x, 31%, 20 s; spaces ignored) it covers only that unit.
    The second field must say whose figure it is and where it was
    published, or why the number is not a measured figure at all. The
    list is a results file like the others: it must be tracked by git.

Folders and the index
---------------------
Every folder under results/ must be cited (named in a text or in a
posting's `sources`) and hold a meta file (meta.json or meta.txt, at any
depth: what ran, where, the CPU, the kernel, the series); a folder a
text names must be committed. results/INDEX.md must be what --index
writes: each folder with its meta and who cites it, then per posting
(and for the other texts) every figure with the file that backs it.

Local paths
-----------
An absolute path of a machine (/work/..., /tmp/h4k/fix.diff,
/home/..., /root/..., /srv/...) is refused in the texts above and in every
tracked results file (binary ones excepted). A path is "/", a letter or
"_", and on, after anything but a letter, digit or one of _ . ~ / - ) ]
} > (so read()/write(), I/O, GiB/s, ~/src and <repo>/kunit are not
paths; URLs are skipped; TREE=/work/x is one). Allowed: the
paths that are the same on every machine and that the texts and logs
hold: /proc, /sys and /dev, and the guest's /init and sysfs-relative
/devices/... of a kernel's console log.

Output
------
One line per offence, then the summary:

    FILE:LINE: figure 'X' not in any results folder (...) nor in the sources list
    FILE:LINE: figure 'X' not in results/A/ (named beside it) nor in the sources list
    FILE:LINE: figure 'X' not in results/A/ (its posting's sources) nor in the sources list
    FILE:LINE: local path 'P'
    results/A/: no text cites it (...)  |  no meta.json or meta.txt (...)
    results/INDEX.md: out of date (scripts/figures --index writes it)
    FILE:LINE: figure 'X' in results/A/report.md         (with --list)
    figures: N checked, M unbacked, K local paths, L other
"""
import json
import os
import re
import subprocess
import sys

PROG = "figures"
SOURCES = "results/figure-sources.txt"
INDEX = "results/INDEX.md"
META_RE = re.compile(r"(^|/)meta\.[^/]*$")
# Where the folders no text cites went (INDEX.md says how to get one back):
# (tag, what, commit) per removal.
PRUNED = (("results-pruned-2026-12-07",
           "the 52 folders no text cited on 2026-12-07 (11 MB of 19 MB)", "6e14560"),
          ("results-pruned-2026-12-07-uffd",
           "the 5 folders of the UFFDIO_MOVE patches before their rework", "39ad893"),
          ("results-pruned-2026-12-07-precopy",
           "7 folders of the pre-copy RFC before its rework, or superseded", "b1d6465"))

# The first component of an absolute path that is fine anywhere.
ALLOWED_ROOTS = {"proc", "sys", "dev", "init", "devices"}

TIME_UNITS = ("s", "ms", "us", "µs", "μs", "ns", "sec", "secs", "second", "seconds",
              "min", "mins", "minute", "minutes", "h", "hour", "hours")
# The same time in other words: a results file backs "17 minutes" only with
# a number of minutes (17 min), not with 17 s.
TIME_CLASS = {u: c for c, us in (("s", ("s", "sec", "secs", "second", "seconds")), ("ms", ("ms",)),
                                 ("us", ("us", "µs", "μs")), ("ns", ("ns",)),
                                 ("min", ("min", "mins", "minute", "minutes")),
                                 ("h", ("h", "hour", "hours"))) for u in us}
COUNT_WORDS = ("instructions", "cycles", "passed", "failed", "skipped")
# Measured counts: "1024 splits", "32 TLB-flush IPIs", "0 new warnings"
# (one word may stand between the number and the noun).
COUNT_NOUNS = ("splits", "IPIs", "faults", "migrations", "warnings")
VERSION_WORDS = ("linux", "qemu", "gcc", "clang", "b4", "sparse", "python", "python3",
                 "debian", "version")

URL_RE = re.compile(r"[A-Za-z][\w+.-]*://[^\s<>()\"'`]+|<[^\s<>]+@[^\s<>]+>|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A number, with thousands separators (22,349.80) taken whole.
NUM_RE = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d]|,\d)(?:\.\d+)?|\d+(?:\.\d+)*")
# Numbers in a results file, each a maximal run of digits and dots (the
# dots between digits): what a figure must equal to be found there.
TOKEN_RE = NUM_RE
# In JSON and CSV a comma separates values: 42,153 there is two numbers.
RAW_TOKEN_RE = re.compile(r"\d+(?:\.\d+)*")
RAW_EXT = (".json", ".jsonl", ".csv", ".tsv")
# A unit right after a number: group 1 is "x" or "%" written against it,
# group 2 a unit word after at most one space.
UNIT_RE = re.compile(r"(x(?![\w/])|%)|(?:[ \u00a0]|\n[ \t]*)?(%|[A-Za-z]+/s(?![\w/])|(?:WORDS)(?![\w/]))"
                     r"|(?:[ \u00a0]|\n[ \t]*)(?:[A-Za-z][\w-]*(?: |\n[ \t]*))?(NOUNS)(?![\w/])".replace(
    "WORDS", "|".join(re.escape(u) for u in sorted(TIME_UNITS + COUNT_WORDS, key=len, reverse=True))).replace(
    "NOUNS", "|".join(COUNT_NOUNS)))
CHAIN_RE = re.compile(r"\s*(?:/|-|–|->|→|to|and|or|,)\s*")
RESULTS_PATH_RE = re.compile(r"(?<![\w./-])results/[\w.+-]+(?:/[\w.+-]+)*")
LOCAL_PATH_RE = re.compile(r"(?<![\w.~/)>\]}-])/[A-Za-z_][\w.+-]*(?:/[\w.+@%,:=-]*)*")


def fail(msg):
    print("%s: error: %s" % (PROG, msg), file=sys.stderr)
    sys.exit(2)


def git(root, *args, data=None):
    r = subprocess.run(["git", "-C", root] + list(args), input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace").strip().splitlines()
        fail("git %s failed in %s: %s" % (" ".join(args), root, err[-1] if err else "exit %d" % r.returncode))
    return r.stdout


def parse_args(argv):
    root = os.environ.get("FIGURES_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            try:
                print(__doc__.strip())
                sys.stdout.flush()
            except BrokenPipeError:  # scripts/figures --help | head
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        elif a in ("--root", "-C"):
            if i + 1 >= len(argv) or not argv[i + 1]:
                fail("%s needs a directory (usage: scripts/figures [--root DIR])" % a)
            root = argv[i + 1]
            i += 1
        elif a.startswith("--root="):
            root = a[len("--root="):]
        else:
            fail("unknown argument '%s' (usage: scripts/figures [--root DIR] [--list])" % a)
        i += 1
    if not os.path.isdir(root):
        fail("no directory %s" % root)
    root = os.path.realpath(root)
    r = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    top = r.stdout.decode().strip()
    if r.returncode != 0 or os.path.realpath(top) != root:
        fail("%s is not the top of a git worktree" % root)
    return root


def tracked_results(root):
    """{path: text} of the results files in the index, binary ones left out."""
    entries = []
    for rec in git(root, "ls-files", "-s", "-z", "--", "results/").split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, sha, _stage = meta.split()
        if mode == b"160000":  # a submodule has no text
            continue
        entries.append((path.decode(errors="replace"), sha.decode()))
    out = git(root, "cat-file", "--batch", data="".join(s + "\n" for _, s in entries).encode())
    files, pos = {}, 0
    for path, sha in entries:
        nl = out.index(b"\n", pos)
        size = int(out[pos:nl].split()[2])
        blob = out[nl + 1:nl + 1 + size]
        pos = nl + 1 + size + 1
        if b"\0" in blob:
            continue
        files[path] = blob.decode("utf-8", errors="replace")
    return files


def read_sources(files):
    """The sources list: [(number, unit or None)]."""
    text = files.get(SOURCES)
    if text is None:
        return []
    entries = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fig, _, src = line.partition("\t")
        m = re.fullmatch(r"\s*[-+~]?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(\S.*?)?\s*", fig)
        if not src.strip() or not m:
            fail("%s:%d: want '<figure><TAB><where it comes from>', not '%s'" % (SOURCES, n, line))
        unit = re.sub(r"\s+", "", m.group(2)) if m.group(2) else None
        entries.append((m.group(1).replace(",", ""), unit))
    return entries


def read_postings(root, chk):
    """({text: posting}, {posting: {"sources": (results/dir, ...), ...}})
    from the `postings` file: the texts of a posting are its patches and its
    cover letter; its `sources` line names the results folders its figures
    come from."""
    path = os.path.join(root, "postings")
    owner, posts, cur = {}, {}, None
    if not os.path.isfile(path):
        return owner, posts
    pdir = os.path.join(root, "patches")
    pfiles = sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[([a-z0-9][a-z0-9-]*)\]", line)
        if m:
            cur = m.group(1)
            posts[cur] = {"sources": (), "patches": [], "cover": None, "line": n}
            continue
        key, _, val = line.partition(" ")
        val = val.strip()
        if cur is None:
            continue
        if key == "patches":
            for num in val.split():
                hit = [f for f in pfiles if f.startswith(num + "-") and f.endswith(".patch")]
                for f in hit:
                    owner["patches/" + f] = cur
                    posts[cur]["patches"].append("patches/" + f)
        elif key == "cover" and val != "-":
            owner[val] = cur
            posts[cur]["cover"] = val
        elif key == "sources" and val != "-":
            srcs = []
            for src in val.split():
                d = src.rstrip("/")
                if not re.fullmatch(r"results/[\w.+-]+", d) or d.split("/")[1] not in chk.folders:
                    chk.offence("postings:%d: source '%s' of [%s] is no committed results folder" % (n, src, cur))
                    continue
                srcs.append(d)
                chk.cite(d, "postings [%s]" % cur)
            posts[cur]["sources"] = tuple(posts[cur]["sources"]) + tuple(srcs)
    return owner, posts


def mask(text, regex):
    return regex.sub(lambda m: " " * len(m.group(0)), text)


def patch_regions(lines):
    """Line numbers (1-based) of a patch's message and notes, as regions."""
    regions, cur, state = [], [], "head"
    for n, line in enumerate(lines, 1):
        if state == "head":
            if line.startswith("Subject:"):
                state = "msg"
                cur = [(n, line[len("Subject:"):])]
            continue
        if state == "msg":
            if line.startswith("diff --git"):  # no "---": no notes either
                break
            if line == "---":
                regions.append(cur)
                cur, state = [], "notes"
            else:
                cur.append((n, line))
            continue
        # notes: up to the diffstat or the diff
        if re.match(r" \S.*\|", line) or re.match(r" \d+ files? changed", line) or line.startswith("diff --git"):
            break
        cur.append((n, line))
    if cur:
        regions.append(cur)
    return regions


def paragraphs(region):
    para = []
    for n, line in region:
        if line.strip():
            para.append((n, line))
        elif para:
            yield para
            para = []
    if para:
        yield para


WORD_BEFORE_RE = re.compile(r"([\w-]+)\s+$")


def word_before(text, s):
    """The word that ends, followed by white space, right where text[s:]
    starts, or None. Looks back a little first: the search over the whole
    prefix of a long results file, once per decimal, was most of the
    check's time."""
    lo = max(0, s - 256)
    m = WORD_BEFORE_RE.search(text, lo, s)
    if m and m.start() == lo and lo > 0:
        m = WORD_BEFORE_RE.search(text, 0, s)  # the word may go on before lo
    return m.group(1) if m else None


def figures_in(text):
    """[(start, end, number, unit, own)] of the figures in a paragraph's
    text: unit is the figure's unit or None, own whether the text writes
    it right after this number (not taken over from a chained one)."""
    toks = []
    for m in NUM_RE.finditer(text):
        s, e, num = m.start(), m.end(), m.group(0)
        if num.count(".") > 1:
            continue  # a version: 7.3.4
        before = text[s - 1] if s else " "
        if before.isalnum() or before in "_./:=#@^\\$":
            continue  # x86_64, v3, 13/18, 10^4, a time or a value of a setting
        if before in "-\u2013" and s >= 2:
            if text[s - 2].isalpha() or text[s - 2] == "_":
                continue  # gcc-16, linux-source-7.3
            if text[s - 2].isdigit() and not (toks and toks[-1][1] == s - 1):
                continue  # the rest of an id
        if len(num) > 1 and num[0] == "0" and num[1] != ".":
            continue  # a patch number: 0004
        u = UNIT_RE.match(text, e)
        after = text[e] if e < len(text) else " "
        if (after.isalpha() or after == "_") and not u and \
                not ("." in num and re.match(r"[KMGT]i?B\b", text[e:])):
            continue  # 4a11007, 2MB, 0x1f: ids and sizes (but 1.5GB is a figure)
        if "." in num:
            if after == "+":
                continue  # 6.8+
            word = word_before(text, s)
            if word and word.lower() in VERSION_WORDS:
                continue
        unit = (u.group(1) or u.group(2) or u.group(3)) if u else None
        toks.append([s, e, num, unit, unit is not None])
    # "7396 / 4542 us": a number chained to a figure with a unit takes it.
    for i in range(len(toks) - 2, -1, -1):
        if toks[i][3] is None and toks[i + 1][3] is not None and \
                CHAIN_RE.fullmatch(text, toks[i][1], toks[i + 1][0]):
            toks[i][3] = toks[i + 1][3]
    return [tuple(t) for t in toks if t[3] is not None or "." in t[2]]


def shown(text, e, num, unit, own):
    """The figure as the text writes it: with its unit if that follows it."""
    if not own:
        return num
    return num + (" " if text[e] in " \u00a0" else "") + unit


class Checker:
    def __init__(self, root, listing=False, write_index=False):
        self.write_index = write_index
        self.root = root
        self.list = listing
        self.results = tracked_results(root)
        self.tracked = {x.decode(errors="replace") for x in git(root, "ls-files", "-z", "--", "results/").split(b"\0") if x}
        self.sources = read_sources(self.results)
        # Meta files say where a run ran (its load average, its date):
        # they back no figure; nor does the index made from this check.
        self.backing = {p: t for p, t in self.results.items()
                        if p not in (SOURCES, INDEX) and not META_RE.search(p)}
        self.folders = sorted({p.split("/")[1] for p in self.results if p.count("/") >= 2})
        self.cache, self.token_sets, self.time_sets = {}, {}, {}
        self.checked = self.unbacked = self.local = self.other = 0
        self.cited = {}     # folder -> {text}
        self.claims = []    # (text, line, figure, backing file)
        self.owner, self.postings = read_postings(root, self)

    def found(self, num, paths, unit=None):
        """The first results file (in the paths named, if any) holding num
        as a whole number, or None. A number is found where it is a maximal
        run of digits and dots, the same as not being part of a longer
        number: 13.8 is not in 13.81, 213.8 or 1.13.8."""
        num = num.replace(",", "")
        tclass = TIME_CLASS.get(unit) if "." not in num else None
        key = (num, paths, tclass)
        if key not in self.cache:
            hit = None
            for p in self.backing:
                if not any(p == q or p.startswith(q + "/") for q in paths):
                    continue
                if (num, tclass) in self.timed(p) if tclass else num in self.tokens(p):
                    hit = p
                    break
            self.cache[key] = hit
        return self.cache[key]

    def timed(self, path):
        """{(number, time class)} of the whole numbers a results file gives
        as times (736 s, 17 minutes, "373-396 s", a cell of a table under a
        heading naming its unit)."""
        if path not in self.time_sets:
            got, text = set(), self.backing[path]
            if not path.endswith(".jsonl"):  # raw values: no units
                got = {(num.replace(",", ""), TIME_CLASS[unit]) for _s, _e, num, unit, _own in figures_in(mask(text, URL_RE))
                       if "." not in num and unit in TIME_CLASS}
                # A markdown table under a heading that gives a time unit
                # ("## In-kernel window per folio, 2MB THP, µs"): its cells.
                table_units = set()
                for line in text.splitlines():
                    if line.startswith("#"):
                        words = re.findall(r"(?<![/\w])[^\W\d_]+(?![/\w])",  # not GiB/s
                                           re.sub(r"min\s*[-–]\s*max", "", line))
                        table_units = {TIME_CLASS[w] for w in words if w in TIME_CLASS}
                    elif table_units and line.startswith("|"):
                        got |= {(t.replace(",", ""), c) for t in TOKEN_RE.findall(line)
                                if "." not in t for c in table_units}
            self.time_sets[path] = got
        return self.time_sets[path]

    def tokens(self, path):
        if path not in self.token_sets:
            rx = RAW_TOKEN_RE if path.endswith(RAW_EXT) else TOKEN_RE
            self.token_sets[path] = {t.replace(",", "") for t in rx.findall(self.backing[path])}
        return self.token_sets[path]

    def sourced(self, num, unit):
        u = unit or ""
        for n, su in self.sources:
            if n == num.replace(",", "") and (su is None or su == u):
                return True
        return False

    def local_paths(self, name, n, line):
        for m in LOCAL_PATH_RE.finditer(mask(line, URL_RE)):
            first = m.group(0)[1:].split("/", 1)[0]
            if first in ALLOWED_ROOTS:
                continue
            self.local += 1
            print("%s:%d: local path '%s'" % (name, n, m.group(0).rstrip(".,;:")))

    def offence(self, msg):
        self.other += 1
        print(msg)

    def cite(self, path, text):
        parts = path.split("/")
        if len(parts) >= 2:
            self.cited.setdefault(parts[1], set()).add(text)

    def text(self, name, regions):
        own = self.postings[self.owner[name]]["sources"] if name in self.owner else ()
        for region in regions:
            for n, line in region:
                self.local_paths(name, n, line)
            for para in paragraphs(region):
                joined, starts = "", []
                for n, line in para:
                    starts.append((len(joined), n))
                    joined += line + "\n"
                named = tuple(sorted({p.rstrip("/.") for p in RESULTS_PATH_RE.findall(joined)}
                                     - {SOURCES, INDEX}))
                for p in named:
                    self.cite(p, name)
                    if p not in self.tracked and not any(k.startswith(p + "/") for k in self.tracked):
                        self.offence("%s:%d: names %s, which is not committed"
                                     % (name, para[0][0], p))
                # What a figure may come from: the results its paragraph
                # names, else the sources of the posting the text is in.
                beside = bool(named)
                named = named or own
                body = mask(joined, URL_RE)
                for s, e, num, unit, own_unit in figures_in(body):
                    n = [ln for off, ln in starts if off <= s][-1]
                    self.checked += 1
                    src = self.sourced(num, unit) and SOURCES or self.found(num, named, unit)
                    if src:
                        self.claims.append((name, n, shown(body, e, num, unit, own_unit), src))
                        if self.list:
                            print("%s:%d: figure '%s' in %s"
                                  % (name, n, shown(body, e, num, unit, own_unit), src))
                        continue
                    self.unbacked += 1
                    where = "any results folder (its paragraph names none, and %s)" % (
                        "its posting has no sources" if name in self.owner else "it is in no posting") \
                        if not named else \
                        ", ".join(p + ("" if p in self.results else "/") for p in named) + \
                        (" (named beside it)" if beside else " (its posting's sources)")
                    print("%s:%d: figure '%s' not in %s nor in the sources list"
                          % (name, n, shown(body, e, num, unit, own_unit), where))

    def run(self):
        names = ["README.md", "cover-letter.in", "cover-letter.txt"]
        for sub, ext in (("docs", ".md"), ("patches", ".patch"), ("postings.d", ".cover"),
                         ("postings", ".cover")):
            d = os.path.join(self.root, sub)
            if os.path.isdir(d):
                names += sorted(sub + "/" + f for f in os.listdir(d) if f.endswith(ext))
        names = [n for n in names if os.path.isfile(os.path.join(self.root, n))]
        if not names:
            fail("nothing to check in %s: no README.md, cover letter, docs/*.md, patches/*.patch "
                 "or postings.d/*.cover" % self.root)
        for name in names:
            with open(os.path.join(self.root, name), encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
            if name.endswith(".patch"):
                self.text(name, patch_regions(lines))
            else:
                self.text(name, [list(enumerate(lines, 1))])
        for path in sorted(self.results):
            for n, line in enumerate(self.results[path].splitlines(), 1):
                self.local_paths(path, n, line)
        for d in self.folders:
            if d not in self.cited:
                self.offence("results/%s/: no text cites it (name it beside its figures or in a "
                             "posting's sources, or remove it: git keeps it)" % d)
            elif not any(p.startswith("results/%s/" % d) and META_RE.search(p) for p in self.results):
                self.offence("results/%s/: no meta.json or meta.txt (what ran, where, on what CPU)" % d)
        index = self.index()
        path = os.path.join(self.root, INDEX)
        if self.write_index:
            with open(path, "w", encoding="utf-8") as f:
                f.write(index)
            print("figures: wrote %s" % INDEX)
        else:
            old = open(path, encoding="utf-8").read() if os.path.isfile(path) else None
            if old != index:
                self.offence("%s: %s (scripts/figures --index writes it)"
                             % (INDEX, "missing" if old is None else "out of date"))
        print("figures: %d checked, %d unbacked, %d local paths, %d other"
              % (self.checked, self.unbacked, self.local, self.other))
        if self.unbacked:
            print("figures: for each: name the results file beside the figure (results/<dir>/...), "
                  "add it to %s with whose it is and where it was published, or correct it" % SOURCES,
                  file=sys.stderr)
        return 1 if self.unbacked or self.local or self.other else 0

    def what_ran(self, d):
        j = self.results.get("results/%s/meta.json" % d)
        if j is not None:
            try:
                m = json.loads(j)
            except ValueError:
                return "meta.json (not JSON)"
            if not isinstance(m, dict):
                return "meta.json (not an object)"
            bits = [str(m[k]) for k in ("date", "what", "command") if k in m]
            if "accel" in m:
                bits.append("%s guest, %s vCPUs" % (str(m["accel"]).upper(), m.get("vcpus", "?")))
            for k in ("patched_kernel", "kernel", "series"):
                if k in m:
                    bits.append("%s: %s" % (k.replace("_", " "), m[k]))
                    break
            if "host_cpu" in m or "cpu" in m:
                bits.append("host %s" % m.get("host_cpu", m.get("cpu")))
            return "; ".join(bits)
        t = self.results.get("results/%s/meta.txt" % d)
        if t is None:  # a meta file further down: that of its first run
            sub = sorted(p for p in self.results if p.startswith("results/%s/" % d) and META_RE.search(p))
            if not sub:
                return ""
            t = self.results[sub[0]]
            if sub[0].endswith(".json"):
                try:
                    m = json.loads(t)
                    if not isinstance(m, dict):
                        return sub[0]
                    return "%s (%s)" % ("; ".join("%s: %s" % (k, m[k]) for k in ("date", "host_cpu", "cpu", "accel", "vcpus")
                                                 if k in m), sub[0].split("/", 2)[2])
                except ValueError:
                    return sub[0]
        first = next((ln.strip() for ln in t.splitlines() if ln.strip()), "")
        first = re.sub(r"^what:\s*", "", first)
        return first if len(first) <= 100 else first[:97] + "..."

    def index(self):
        cell = lambda t: str(t).replace("|", "\\|")
        out = ["# What backs each figure", "",
               "Made by `scripts/figures --index` from the texts (patches/, postings.d/,",
               "cover-letter.txt, README.md, docs/) and `postings`; `make check` fails",
               "when this file is out of date, when a figure is not in the folder its",
               "paragraph or its posting's `sources` names, and when a folder here is",
               "cited by no text or has no meta file. Meta files back no figure.", "",
               ] + ["Removed: %s, kept in git under the tag `%s` (commit %s);" % (what, tag, sha)
                    for tag, what, sha in PRUNED] + [
               "`git checkout <commit> -- results/<folder>` brings one back.", "",
               "## Folders", "", "| folder | what ran (its meta file) | cited by |", "|---|---|---|"]
        for d in self.folders:
            out.append("| %s | %s | %s |" % (d, cell(self.what_ran(d)), cell(", ".join(sorted(self.cited.get(d, ()))))))
        groups = [(name, [p["cover"]] * bool(p["cover"]) + p["patches"], p["sources"])
                  for name, p in self.postings.items()]
        owned = {t for _, ts, _ in groups for t in ts}
        others = sorted({c[0] for c in self.claims} - owned)
        groups.append(("Other texts", others, ()))
        for name, texts, srcs in groups:
            rows = [c for c in self.claims if c[0] in texts]
            out += ["", "## " + name, ""]
            if srcs:
                out += ["Sources: " + ", ".join(srcs), ""]
            if not rows:
                out.append("No figure.")
                continue
            # No line numbers: an edit that moves a figure leaves this file as it is.
            out += ["| text | figure | backed by |", "|---|---|---|"]
            seen = set()
            for t, n, fig, src in sorted(rows, key=lambda c: (texts.index(c[0]) if c[0] in texts else 0, c[0], c[1])):
                if (t, fig, src) not in seen:
                    seen.add((t, fig, src))
                    out.append("| %s | %s | %s |" % (t, cell(fig), src))
        return "\n".join(out) + "\n"


def main():
    argv = sys.argv[1:]
    listing = "--list" in argv
    write_index = "--index" in argv
    root = parse_args([a for a in argv if a not in ("--list", "--index")])
    try:
        rc = Checker(root, listing, write_index).run()
        sys.stdout.flush()
    except BrokenPipeError:  # scripts/figures --list | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        rc = 1
    sys.exit(rc)


if __name__ == "__main__":
    main()
