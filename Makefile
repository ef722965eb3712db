# Front door of the project: every target is a script under scripts/.
# WORKDIR (default ./work) holds the kernel tree, builds and downloads.
SHELL := /bin/bash
S := scripts

.PHONY: help check check-full test-postings run deps base apply export checkpatch build build-debug \
	build-series selftests selftests-debug selftests-arm64 kunit kunit-um kunit-x86_64 kunit-powerpc test-harness \
	bench bench-smoke movetest matrix sparse cover-letter figures send-dry-run copymodel icount

help: ## this list
	@grep -hE '^[a-z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk -F':.*## ' '{ printf "  make %-16s %s\n", $$1, $$2 }'

check: ## the test command (CI, about 30 min): figures, base, apply, checkpatch, HEAD built + each commit's objects, harness tests, the series' tests + KUnit in the guest, KUnit on UML
	@$(S)/check

check-full: ## before sending: check with every commit built in full, the kernel's own suites (selftests/list.full) and each posting on its own stack; records the pass scripts/send --send needs
	@$(S)/check --full

test-postings: ## each posting on its own stack (base + what it needs + itself), built and run with its own tests
	@$(S)/test-postings

run: ## the main job: apply, build, selftests, then the benchmark (base vs patched), printing its report
	@$(S)/deps && $(S)/base && $(S)/apply && $(S)/build test && $(S)/selftests test && \
		DEPS_EXTRA=python3-matplotlib $(S)/deps && $(S)/bench

bench: ## base vs patched in one run: work/bench/<date>T<time>-<sha>/ (JSON, report.md, plot.png); scripts/bench --save keeps it in results/
	@DEPS_EXTRA=python3-matplotlib $(S)/deps && $(S)/bench

bench-smoke: build ## movebench -q in the guest + copymodel -q: data and figures sane
	@$(S)/bench --smoke

movetest: ## bench/movetest, the static binary a tester runs on real hardware, base kernel then patched (docs/benchmark.md): work/movetest/movetest
	@mkdir -p $(or $(WORKDIR),work)/movetest && gcc -O2 -Wall -Wextra -static -pthread -o $(or $(WORKDIR),work)/movetest/movetest bench/movetest.c && echo "movetest: $(or $(WORKDIR),work)/movetest/movetest"

copymodel: ## the host-native copy model alone (the kernel tree's copy routines vs ours vs glibc), pinned: work/copymodel/<date>-<sha>/; KSRC=tree, -q via COPYMODEL_QUICK=1
	@$(S)/copymodel $(if $(COPYMODEL_QUICK),-q)

deps: ## install the Debian packages the scripts need
	@$(S)/deps

base: ## fetch and commit the base tree (KERNEL_TREE=... BASE=... for your own)
	@$(S)/base

apply: ## worktree work/linux = base + series (git am)
	@$(S)/apply

export: ## worktree commits -> patches/ + series
	@$(S)/export

checkpatch: ## checkpatch.pl --strict on every patch
	@$(S)/checkpatch

build: ## x86_64 test kernel (tinyconfig + selftests/config)
	@$(S)/build test

build-debug: ## x86_64 debug kernel (+ KASAN, lockdep, DEBUG_VM)
	@$(S)/build debug

build-series: ## HEAD's kernel in full, then each commit compiles the objects its change touches (BUILD_SERIES_FULL=1: every commit in full)
	@$(S)/build-series $(if $(BUILD_SERIES_FULL),--full) test

selftests: build ## boot the test kernel and run selftests/list (and boot-time KUnit)
	@$(S)/selftests test

selftests-debug: build-debug ## selftests/list.full on the debug kernel; any splat fails
	@SELFTESTS_LIST=$(CURDIR)/selftests/list.full $(S)/selftests debug

# ARM64_PAGE_KB=16 for the arm64 kernel with 16 KB pages (configuration arm64-16k)
ARM64_CONFIG = arm64$(if $(filter 16,$(ARM64_PAGE_KB)),-16k)

selftests-arm64: ## selftests/list.full + boot-time KUnit in an arm64 guest (cross-built, QEMU virt, TCG): contpte under the series; ARM64_PAGE_KB=16 for 16 KB pages
	@case "$(or $(ARM64_PAGE_KB),4)" in 4|16) ;; *) echo "make: ARM64_PAGE_KB must be 4 or 16, not '$(ARM64_PAGE_KB)'" >&2; exit 1 ;; esac
	@DEPS_EXTRA="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm" $(S)/deps && \
		$(S)/build $(ARM64_CONFIG) && SELFTESTS_LIST=$(CURDIR)/selftests/list.full $(S)/selftests $(ARM64_CONFIG)

kunit: kunit-x86_64 kunit-um ## the KUnit suite through kunit.py, x86_64 (QEMU) and UML

kunit-x86_64: ## kunit.py run --arch=x86_64 (KVM hidden: TCG here)
	@$(S)/kunit x86_64

kunit-um: ## kunit.py run --arch=um
	@$(S)/kunit um

kunit-powerpc: ## kunit.py run --arch=powerpc (pseries, ppc64 big-endian, TCG; cross-built): the single-call path
	@DEPS_EXTRA="gcc-powerpc64-linux-gnu qemu-system-ppc" $(S)/deps && $(S)/kunit powerpc

test-harness: ## the harness's own tests
	@$(S)/test-harness

icount: ## exact instruction counts of mm/userfaultfd.o per 4 KB UFFDIO_MOVE, base and each step, -Os and -O2 (TCG plugin): work/icount/<date>T<time>/
	@$(S)/icount

matrix: ## every commit on x86_64, i386 HIGHMEM, arm64, ppc64le, um, arm-nommu; W=1, no new warnings; then make sparse (MATRIX_ARCHES="arm-nommu" for some)
	@DEPS_EXTRA="gcc-aarch64-linux-gnu gcc-powerpc64le-linux-gnu gcc-i686-linux-gnu gcc-arm-linux-gnueabi" $(S)/deps && \
		$(S)/matrix $(MATRIX_ARCHES) && \
		$(S)/sparse

sparse: ## sparse (Debian unstable's, built in work/tools) on the series' .c files, x86_64 test config: no new warning vs base
	@$(S)/deps && $(S)/sparse

cover-letter: ## cover-letter.txt from cover-letter.in + the latest results/*/report.md
	@$(S)/cover-letter

figures: ## every figure of the messages, letters, README.md and docs/ in a committed results/ file or the sources list; no local path (--list: what backs each)
	@$(S)/figures

send-dry-run: ## every posting of `postings` with b4 (cover, revision, RFC prefix, change-id, To/Cc), checkpatch, b4 send -o work/send/<name>/, checks, git am round trip; scripts/send --send NAME sends one
	@$(S)/send
