#!/usr/bin/env python3
"""Write the letter of the whole stack from cover-letter.in and `postings`.

    scripts/cover-letter.py ROOT OUT

cover-letter.in holds @@COUNT@@ (the number of postings, in words) and
@@POSTINGS@@, which becomes one paragraph per posting, by wave: its name,
patches, tree, its `summary` lines, what it waits for, and its `sources`
(the results folders its figures come from, which the figure check then
reads for the figures of that paragraph). The letter must be at most 120
lines of at most 80 columns. Exit 1 with one line on stderr otherwise.
"""
import os
import re
import sys
import textwrap

WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()


def fail(msg):
    print("cover-letter: %s" % msg, file=sys.stderr)
    sys.exit(1)


def postings(path):
    posts, cur, wave_now = [], None, None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[([a-z0-9][a-z0-9-]*)\]", line)
        if m:
            cur = {"name": m.group(1), "summary": [], "sources": []}
            posts.append(cur)
            continue
        key, _, val = line.partition(" ")
        val = val.strip()
        if cur is None:
            if key == "wave-now":
                if not re.fullmatch(r"[1-9]\d*", val):
                    fail("postings:%d: wave-now '%s' is not a number from 1" % (n, val))
                wave_now = int(val)
        elif key == "summary":
            cur["summary"].append(val)
        elif key == "sources":
            cur["sources"] += [] if val == "-" else val.split()
        else:
            cur[key] = val
    if not posts:
        fail("no posting in postings")
    for p in posts:
        if not p.get("patches"):
            fail("[%s] in postings has no patches line" % p["name"])
        if not p["summary"]:
            fail("[%s] in postings has no summary line" % p["name"])
        m = re.fullmatch(r"(\d+)(?:\s+after\s+(.*))?", p.get("wave", ""))
        if not m:
            fail("[%s] in postings has no wave" % p["name"])
        p["wave"], p["waits"] = int(m.group(1)), m.group(2)
    return posts, wave_now


def stable(root, nums):
    pdir = os.path.join(root, "patches")
    if not os.path.isdir(pdir):
        fail("no patches/ directory in %s" % root)
    for f in sorted(os.listdir(pdir)):
        if f[:4] in nums and re.search(r"^Cc:.*stable@vger\.kernel\.org", open(os.path.join(pdir, f)).read(), re.M):
            return True
    return False


def item(root, p):
    nums = p["patches"].split()
    what = "%d patch%s" % (len(nums), "es" if len(nums) > 1 else "")
    runs = []
    for x in nums:
        if runs and int(x) == int(runs[-1][-1]) + 1:
            runs[-1].append(x)
        else:
            runs.append([x])
    what += " (%s)" % ", ".join(r[0] if len(r) == 1 else "%s-%s" % (r[0], r[-1]) for r in runs)
    if p.get("rfc") == "yes":
        what = "RFC, " + what
    elif p.get("tree", "-") != "-":
        what += " for " + p["tree"]
    if p.get("revision", "1") != "1":
        what += ", v" + p["revision"]
    if stable(root, nums):
        what += ", stable"
    wrap = lambda t: textwrap.wrap(t, 76, initial_indent="  ", subsequent_indent="  ",
                                   break_on_hyphens=False, break_long_words=False)
    lines = ["- %s: %s" % (p["name"], what)]
    lines += wrap(" ".join(p["summary"]))
    if p["waits"]:
        lines += wrap("Waits for: %s." % p["waits"])
    if p["sources"]:
        lines += wrap("Results: " + " ".join(p["sources"]))
    return lines


def main():
    args = sys.argv[1:]
    if any(a in ("-h", "--help") for a in args):
        print(__doc__.strip())
        return
    bad = [a for a in args if a.startswith("-")]
    if bad or len(args) != 2:
        print("cover-letter.py: %s (usage: scripts/cover-letter.py ROOT OUT)"
              % ("unknown option '%s'" % bad[0] if bad else "want ROOT and OUT"), file=sys.stderr)
        sys.exit(2)
    root, out = args
    tmpl = open(os.path.join(root, "cover-letter.in"), encoding="utf-8").read()
    for mark in ("@@COUNT@@", "@@POSTINGS@@"):
        if tmpl.count(mark) != 1:
            fail("cover-letter.in must hold %s once" % mark)
    posts, wave_now = postings(os.path.join(root, "postings"))
    body = []
    for wave in sorted({p["wave"] for p in posts}):
        body.append("Wave %d%s:" % (wave, ", now" if wave == wave_now else ""))
        body.append("")
        for p in (p for p in posts if p["wave"] == wave):
            body += item(root, p) + [""]
    count = WORDS[len(posts)] if len(posts) < len(WORDS) else str(len(posts))
    letter = tmpl.replace("@@COUNT@@", count).replace("@@POSTINGS@@", "\n".join(body).rstrip("\n"))
    # The count may make a line longer: fill the first paragraph again.
    lines = letter.splitlines()
    for n, l in enumerate(lines, 1):
        if len(l) > 80:
            fail("line %d of the letter is %d columns (at most 80): %s" % (n, len(l), l))
    if len(lines) > 120:
        fail("the letter is %d lines (at most 120)" % len(lines))
    open(out, "w", encoding="utf-8").write(letter)


if __name__ == "__main__":
    main()
