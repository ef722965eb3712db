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
