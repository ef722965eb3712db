# shellcheck shell=bash
# Common helpers for the scripts in this directory. Sourced, never run.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORKDIR=${WORKDIR:-$ROOT/work}
case $WORKDIR in /*) ;; *) WORKDIR=$PWD/$WORKDIR ;; esac
# git run in a directory under $WORKDIR that is not a tree of its own must
# fail, not act on a repository above it (the project's clone, when work/
# is inside it); and variables a git hook exports must not redirect it.
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_COMMON_DIR GIT_OBJECT_DIRECTORY
export GIT_CEILING_DIRECTORIES=$WORKDIR${GIT_CEILING_DIRECTORIES:+:$GIT_CEILING_DIRECTORIES}
BASEDIR=$WORKDIR/base          # git repo holding the base commit (Debian default)
TREE=${TREE:-$WORKDIR/linux}   # worktree: base + series
BASE_ENV=$WORKDIR/base.env     # records which repo and commit are the base
SERIES=${SERIES:-$ROOT/series}
PATCHDIR=${PATCHDIR:-$ROOT/patches}
# Signs the Debian archive for the private apt setups (base, sparse, icount)
# shellcheck disable=SC2034 # used by those scripts
KEYRING=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
# The compiler cache lives outside the clone, so a fresh clone on the same
# machine (a second CI run) starts warm; CCACHE_DIR= puts it elsewhere.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/linux-mm-series/ccache}
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

# True if directory $1 is the top of a git work tree of its own.
own_toplevel() {
	local top
	[ -d "$1" ] || return 1
	top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null) || return 1
	[ "$top" = "$(cd -- "$1" >/dev/null && pwd -P)" ]
}

# True if directory $1 is a linked worktree of the base repository, at its
# top: never the base's own checkout (a user's clone, which the scripts
# would remove to replace it), never a directory git only finds inside.
base_worktree() {
	local common
	[ -n "${BASE_REPO:-}" ] && own_toplevel "$1" || return 1
	common=$(git -C "$1" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || return 1
	[ "$common" = "$(git -C "$BASE_REPO" rev-parse --path-format=absolute --git-common-dir)" ] &&
		[ "$(git -C "$1" rev-parse --absolute-git-dir)" != "$common" ]
}

# Make directory $1 a new worktree of the base at commit $2 (detached),
# throwing away whatever was there.
new_base_worktree() {
	git -C "$BASE_REPO" worktree remove --force "$1" >/dev/null 2>&1 || rm -rf "$1"
	git -C "$BASE_REPO" worktree prune
	git -C "$BASE_REPO" worktree add -q --force --detach "$1" "$2" ||
		die "cannot add a worktree of $BASE_REPO at $1"
	base_worktree "$1" || die "git added no usable worktree at $1"
}

# Fail unless $TREE is a worktree of the base repository.
need_tree() {
	load_base
	base_worktree "$TREE" || die "no kernel worktree at $TREE (run scripts/apply first)"
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

# format-patch base..HEAD of worktree $1 into directory $2, as scripts/export
# writes patches/: --zero-commit and no signature, so the files depend only
# on the changes; each commit's git note (its changelog) below "---".
# --histogram: the default algorithm showed a block of uffd-unit-tests.c
# that a patch leaves alone as removed and added again.
format_series() {
	git -C "$1" format-patch -q --notes --zero-commit --no-signature --no-cover-letter \
		--histogram --subject-prefix=PATCH -o "$2" "$BASE_COMMIT..HEAD"
}

# The changelog below "---" of patch file $1 (format-patch --notes), as the
# text of its git note; empty if it has none.
patch_notes() {
	awk 'seen && /^Notes:$/ { on = 1; next }
		on && (/^    / || /^$/) { sub(/^    /, ""); print; next }
		on { exit }
		/^---$/ { seen = 1 }' "$1"
}

# The environment of every kernel build in tree $1: a fixed build identity
# (the same sources give the same objects) and ccache keyed on paths
# relative to the tree.
# The clang of LLVM 17 or later (7.3's minimum) to build with: prints the
# suffix of its tools for make's LLVM= ("1" for unsuffixed ones, "-19" for
# Debian's clang-19 and its ld.lld-19 ...), or dies.
llvm_suffix() {
	local s v
	for s in "" -22 -21 -20 -19 -18 -17; do
		command -v "clang$s" >/dev/null && command -v "ld.lld$s" >/dev/null || continue
		v=$("clang$s" -dumpversion 2>/dev/null) || continue
		[ "${v%%.*}" -ge 17 ] 2>/dev/null || continue
		echo "${s:-1}"
		return
	done
	die "no clang 17 or later with its ld.lld (Debian: apt install clang-19 lld-19 llvm-19)"
}

kbuild_env() {
	export KBUILD_BUILD_TIMESTAMP="2026-01-01" KBUILD_BUILD_USER=kbuild KBUILD_BUILD_HOST=localhost
	export CCACHE_BASEDIR=$1 CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=time_macros,include_file_mtime
	mkdir -p "$CCACHE_DIR"
}

# The Debian mirror of the machine's apt sources (deb822 .sources first,
# then one-line .list files), unless DEBIAN_MIRROR says otherwise; dies
# when there is none.
debian_mirror() {
	local m=${DEBIAN_MIRROR:-}
	if [ -z "$m" ]; then
		m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
			awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }')
	fi
	if [ -z "$m" ]; then
		m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }')
	fi
	[ -n "$m" ] || die "cannot find a Debian mirror in the apt sources; set DEBIAN_MIRROR=<url of a Debian archive>"
	echo "$m"
}

# private_apt [-a ARCH] DIR LINE...: an apt configuration of its own in
# directory DIR for the sources.list lines LINE... (packages of
# architecture ARCH only, with -a), whose package index it then fetches.
# Sets the array apt_opts for apt-get and apt-cache. Lists, cache, sources
# and the log apt.log live under DIR; the machine's apt setup is never
# touched.
private_apt() {
	local arch=
	if [ "$1" = -a ]; then
		arch=$2
		shift 2
	fi
	apt_dir=$1
	shift
	need apt-get
	[ -r "$KEYRING" ] || die "no Debian archive keyring at $KEYRING (apt-get install debian-archive-keyring)"
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	printf '%s\n' "$@" >"$apt_dir/sources.list"
	: >"$apt_dir/apt.log"
	apt_opts=(-q -o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
		-o Dir::Etc::preferencesparts=/dev/null -o APT::Sandbox::User=root)
	[ -z "$arch" ] || apt_opts+=(-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch")
	apt_in "$apt_dir" update
}

# apt_in DIR ARG...: `apt-get ARG...` run in directory DIR (where download
# and source put their files) with the configuration of the last
# private_apt, adding to its apt.log. A failure ends the script with one
# line: the command and apt's first error.
apt_in() {
	local where=$1
	shift
	(cd "$where" && apt-get "${apt_opts[@]}" "$@") >>"$apt_dir/apt.log" 2>&1 ||
		die "apt-get $* failed: $(grep -E '^(E|W):' "$apt_dir/apt.log" | head -n 1)"
}

# Config fragments merged over tinyconfig for kernel configuration $1
# (test, debug, test-O2 or arm64), one path a line.
config_fragments() {
	case $1 in
	test) printf '%s\n' "$ROOT/selftests/config" ;;
	debug) printf '%s\n' "$ROOT/selftests/config" "$ROOT/selftests/config.debug" ;;
	test-O2) printf '%s\n' "$ROOT/selftests/config" "$ROOT/bench/icount/O2.config" ;;
	arm64 | arm64-clang) printf '%s\n' "$ROOT/selftests/config" "$ROOT/selftests/config.arm64" ;;
	arm64-16k) printf '%s\n' "$ROOT/selftests/config" "$ROOT/selftests/config.arm64" \
		"$ROOT/selftests/config.arm64-16k" ;;
	*) die "unknown configuration '$1' (test, debug, test-O2, arm64, arm64-clang or arm64-16k)" ;;
	esac
}

# The architecture kernel configuration $1 is built for: arm64 for the
# configurations arm64 and arm64-16k, x86_64 for all the others.
config_arch() {
	case $1 in arm64 | arm64-*) echo arm64 ;; *) echo x86_64 ;; esac
}

# What a kernel of architecture $1 (x86_64 or arm64) is built with: sets
# karch (make's ARCH), kcross (CROSS_COMPILE, empty for the host's gcc),
# kimage_target (the make target of the boot image) and kimage (that
# image's path under the O= directory).
kernel_arch_env() {
	# shellcheck disable=SC2034 # for the caller
	case $1 in
	x86_64) karch=x86_64 kcross="" kimage_target=bzImage kimage=arch/x86/boot/bzImage ;;
	arm64) karch=arm64 kcross=aarch64-linux-gnu- kimage_target=Image kimage=arch/arm64/boot/Image ;;
	*) die "unknown architecture '$1' (x86_64 or arm64)" ;;
	esac
}

# Configure O= directory $2 of kernel source $1 as scripts/build does:
# make tinyconfig, merge the fragments $3..., make olddefconfig. The make
# arguments come from the array kmake (make -C SRC O=OUT ARCH=...); make's
# output goes to stdout, the caller redirects it.
configure_kernel() {
	local src=$1 out=$2
	shift 2
	# shellcheck disable=SC2154 # the caller's
	"${kmake[@]}" tinyconfig || return 1
	(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@") || return 2
	"${kmake[@]}" olddefconfig || return 3
}

# Where install_uapi_headers puts the uapi headers of architecture $1
# (x86_64 when not given).
uapi_headers_dir() {
	case ${1:-x86_64} in
	x86_64) echo "$WORKDIR/build/headers" ;;
	*) echo "$WORKDIR/build/headers-$1" ;;
	esac
}

# Install the worktree's uapi headers of architecture $2 (x86_64 when not
# given) under uapi_headers_dir (what the selftests and movebench compile
# against), logging to file $1.
install_uapi_headers() {
	local arch=${2:-x86_64} hdr
	hdr=$(uapi_headers_dir "$arch")
	mkdir -p "$hdr"
	log "installing $arch uapi headers of the worktree"
	make -s -C "$TREE" O="$hdr" ARCH="$arch" headers >"$1" 2>&1 ||
		{ tail -n 20 "$1" >&2; die "make headers failed"; }
}

# Debian's arm64 packages the arm64 guest and its tests take from the
# archive: the guest's static busybox, and the static libraries (with
# their headers) the selftests link.
ARM64_DEBS="busybox-static libnuma-dev liburing-dev"

# Unpack ARM64_DEBS into $WORKDIR/arm64/root and set ARM64_ROOT to it. The
# packages come from the Debian release of this machine (ARM64_SUITE sets
# another) on the mirror of debian_mirror, fetched with `apt-get download`
# through a private apt configuration for arm64 under $WORKDIR/arm64/apt:
# the machine's apt setup is never touched. Done once; a tree that is
# there with the same package list is kept. Nothing is left half-written:
# the packages are unpacked beside it and moved into place at the end.
arm64_root() {
	local dir=$WORKDIR/arm64 mirror suite stage deb
	ARM64_ROOT=$dir/root
	[ "$(cat "$ARM64_ROOT/.debs" 2>/dev/null)" != "$ARM64_DEBS" ] || return 0
	need dpkg-deb
	mirror=$(debian_mirror) || exit 1
	suite=${ARM64_SUITE:-$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")}
	[ -n "$suite" ] || die "cannot tell this machine's Debian release; set ARM64_SUITE=<suite, e.g. bookworm>"
	mkdir -p "$dir"
	stage=$(mktemp -d "$dir/.fetch.XXXXXX")
	# shellcheck disable=SC2064 # the path now: $stage is local
	trap "rm -rf '$stage'" EXIT
	log "fetching Debian $suite arm64 packages: $ARM64_DEBS (log: $dir/apt/apt.log)"
	private_apt -a arm64 "$dir/apt" "deb [arch=arm64 signed-by=$KEYRING] $mirror $suite main"
	# shellcheck disable=SC2086 # a list of package names
	apt_in "$stage" download $ARM64_DEBS
	for deb in "$stage"/*.deb; do
		dpkg-deb -x "$deb" "$stage/root" || die "cannot unpack $(basename "$deb")"
		basename "$deb" >>"$stage/packages"
	done
	mv "$stage/packages" "$stage/root/.packages"
	echo "$ARM64_DEBS" >"$stage/root/.debs"
	rm -rf "$ARM64_ROOT"
	mv "$stage/root" "$ARM64_ROOT"
	rm -rf "$stage"
	trap - EXIT
	log "unpacked $(tr '\n' ' ' <"$ARM64_ROOT/.packages")into $ARM64_ROOT"
}

# The cached answer of scripts/vm's KVM probe ($WORKDIR/kvm-probe): a "no"
# older than a day is dropped, so a machine that gains a working KVM (or a
# probe that timed out under load) is asked again.
KVM_PROBE_CACHE=$WORKDIR/kvm-probe
kvm_probe_cached() {
	[ -f "$KVM_PROBE_CACHE" ] || return 1
	if [ "$(cat "$KVM_PROBE_CACHE")" = no ] &&
		[ -n "$(find "$KVM_PROBE_CACHE" -mmin +1440 2>/dev/null)" ]; then
		rm -f "$KVM_PROBE_CACHE"
		return 1
	fi
	cat "$KVM_PROBE_CACHE"
}

# The accelerator for QEMU: $ACCEL if set (kvm or tcg), else what the
# cached probe of scripts/vm said (tcg when it has not run).
accel_choice() {
	case ${ACCEL:-} in
	kvm | tcg) echo "$ACCEL" ;;
	"") [ "$(kvm_probe_cached)" = yes ] && echo kvm || echo tcg ;;
	*) die "ACCEL must be kvm or tcg, not '$ACCEL'" ;;
	esac
}

# Build bench/copymodel into file $1 with the kernel's own copy routines:
# arch/x86/lib/copy_mc_64.S and memcpy_64.S of the kernel tree $KSRC
# (default $TREE, the patched worktree) are assembled with our shim headers
# bench/kshim/ alone on the include path; the tree is read, never copied.
# When they cannot be (no tree, a file the shim does not cover), copymodel
# is built with its own copies only, and says so when it runs.
build_copymodel() {
	local out=$1 ksrc=${KSRC:-$TREE} tmp f note="" desc objs=() flags=() rc=0
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/copymodel.XXXXXX")
	for f in copy_mc_64 memcpy_64; do
		if [ ! -f "$ksrc/arch/x86/lib/$f.S" ]; then
			note="no kernel tree at $ksrc (no arch/x86/lib/$f.S)"
			break
		fi
		# CONFIG_X86_MCE: copy_mc_fragile() exists only with it
		if ! gcc -c -nostdinc -I "$ROOT/bench/kshim" -DCONFIG_X86_MCE -Wa,--noexecstack \
			-o "$tmp/$f.o" "$ksrc/arch/x86/lib/$f.S" 2>"$tmp/$f.log"; then
			note="$ksrc/arch/x86/lib/$f.S does not assemble with bench/kshim: $(grep -m1 -i error "$tmp/$f.log")"
			break
		fi
		objs+=("$tmp/$f.o")
	done
	if [ -z "$note" ]; then
		# The tree by its commit, never by a path of this machine.
		desc="kernel tree at commit $(git -C "$ksrc" rev-parse --short=12 HEAD 2>/dev/null || echo '(not a git tree)')"
		flags=(-DHAVE_KCOPY "-DKSRC_DESC=\"${desc//[\"\\]/}\"")
		# The series' non-temporal routine, in a tree that has it
		if nm "$tmp/copy_mc_64.o" | grep -q ' T kernel_copy_mc_nocache$'; then
			flags+=(-DHAVE_KCOPY_NOCACHE)
		fi
	else
		note="kernel copy routines not built in ($note): timing copymodel's own copies only (rep_movsb stands in for copy_mc_enhanced_fast_string)"
		flags=("-DKCOPY_NOTE=\"${note//[\"\\]/}\"")
		objs=()
	fi
	gcc -O2 -Wall "${flags[@]}" -o "$out" "$ROOT/bench/copymodel.c" "${objs[@]}" -lm || rc=$?
	rm -rf "$tmp"
	return $rc
}

# The test binaries a selftests list ($1) names, one per line, sorted.
list_test_binaries() {
	grep -vE '^[[:space:]]*(#|allow-skip|kunit[[:space:]]|guest-write[[:space:]]|$)' "$1" |
		awk '{ print $1 }' | sort -u
}

# A hash of the series as patches/ has it (`series` and each of its
# patches, in order): what scripts/check --full records its pass under and
# scripts/send --send looks for.
series_hash() {
	local p
	{
		cat "$SERIES"
		series_patches | while IFS= read -r p; do cat "$PATCHDIR/$p"; done
	} | sha256sum | cut -c1-16
}
