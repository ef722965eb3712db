# shellcheck shell=bash
# Common helpers for the scripts in this directory. Sourced, never run.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORKDIR=${WORKDIR:-$ROOT/work}
case $WORKDIR in /*) ;; *) WORKDIR=$PWD/$WORKDIR ;; esac
BASEDIR=$WORKDIR/base          # git repo holding the base commit (Debian default)
TREE=${TREE:-$WORKDIR/linux}   # worktree: base + series
BASE_ENV=$WORKDIR/base.env     # records which repo and commit are the base
SERIES=${SERIES:-$ROOT/series}
PATCHDIR=${PATCHDIR:-$ROOT/patches}
export CCACHE_DIR=${CCACHE_DIR:-$WORKDIR/ccache}
PROG=$(basename "$0")

die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
log() { printf '%s: %s\n' "$PROG" "$*" >&2; }

need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
			die "missing tool '$t' (run scripts/deps to install what the project needs)"
	done
}

# Load the base recorded by scripts/base: BASE_REPO (a git dir) and BASE_COMMIT.
load_base() {
	[ -f "$BASE_ENV" ] || die "no base tree under $WORKDIR (run scripts/base first)"
	# shellcheck source=/dev/null
	. "$BASE_ENV"
	git -C "$BASE_REPO" rev-parse -q --verify "$BASE_COMMIT^{commit}" >/dev/null ||
		die "base commit $BASE_COMMIT is gone from $BASE_REPO (run scripts/base again)"
}

# Fail unless $TREE is a worktree of the base repository.
need_tree() {
	load_base
	git -C "$TREE" rev-parse --git-dir >/dev/null 2>&1 ||
		die "no kernel worktree at $TREE (run scripts/apply first)"
}

# Patches listed in $SERIES, one path per line, comments and blanks skipped.
series_patches() {
	[ -f "$SERIES" ] || die "no series file at $SERIES"
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$SERIES" | awk 'NF'
}

# Seconds since $1 (an epoch time), for timing lines.
since() { echo $(( $(date +%s) - $1 )); }

# kunit.py's "Testing complete. Ran N tests: passed: P, failed: F, skipped: S"
# line in file $1, as "P F S" (crashed counts as failed); nothing if absent.
kunit_counts() {
	sed -n 's/.*Testing complete\. Ran [0-9]* tests*: *//p' "$1" | tail -n 1 | tr -d ',' |
		awk '{ for (i = 1; i < NF; i += 2) c[$i] = $(i + 1)
		       printf "%d %d %d\n", c["passed:"], c["failed:"] + c["crashed:"], c["skipped:"] }'
}

# The copy_mc_highpages() path the copy_mc suite reports in raw KTAP file $2,
# one line per path with its case count, each prefixed with "$1: ".
kunit_paths() {
	{ grep -h 'copy_mc_highpages() path' "$2" 2>/dev/null || true; } | sed 's/.*path: //' | sort | uniq -c |
		awk -v p="$1" '{ n = $1; $1 = ""; printf "%s: copy_mc_highpages() path:%s (%d cases)\n", p, $0, n }'
}
