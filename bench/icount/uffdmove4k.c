// SPDX-License-Identifier: GPL-2.0
/*
 * uffdmove4k - UFFDIO_MOVE an area of 4 KB pages from one anonymous mapping
 * to another and back, ROUNDS times, then check every word. The load for
 * scripts/icount, which counts the guest instructions the kernel's
 * mm/userfaultfd.o executes meanwhile: the program does nothing else with
 * userfaultfd, so a run with 0 rounds measures the fixed cost (setup,
 * registration, teardown) to subtract.
 *
 *   uffdmove4k [ROUNDS [SIZE_MB]]     ROUNDS 4 (0 allowed), SIZE_MB 64
 *
 * One ioctl per direction moves the whole area (the kernel walks it PTE by
 * PTE; a partial move with EAGAIN is continued). Both mappings are
 * MADV_NOHUGEPAGE, so every folio is a 4 KB page. Prints one line:
 *   uffdmove4k: moved PAGES pages of 4096 bytes (ROUNDS round trips of
 *   SIZE_MB MB, IOCTLS ioctls), every word checked
 * and exits 0; any failure prints one "uffdmove4k: error: ..." line and
 * exits 1. Statically linked, it runs in a guest with no libraries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#define PROG "uffdmove4k"
#include "guest.h"

/* Older uapi headers (the build host's) lack UFFDIO_MOVE: its ABI. */
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE	(1 << 16)
#endif
#ifndef UFFDIO_MOVE
#define _UFFDIO_MOVE		(0x05)
struct uffdio_move {
	__u64 dst;
	__u64 src;
	__u64 len;
	__u64 mode;
	__s64 move;
};
#define UFFDIO_MOVE		_IOWR(UFFDIO, _UFFDIO_MOVE, struct uffdio_move)
#endif

#define PAGE	4096UL

static unsigned long ioctls;

/* The word at index i of the area: depends on the index, so a page that
 * lands at the wrong address is caught as well as a lost one. */
static uint64_t word_of(unsigned long i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL ^ 0x5555aaaa5555aaaaULL;
}

static char *map_area(unsigned long len, const char *what)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap of the %s area (%lu bytes): %s", what, len, strerror(errno));
	if (madvise(p, len, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE) of the %s area: %s", what, strerror(errno));
	return p;
}

static void move_all(int uffd, char *dst, char *src, unsigned long len)
{
	unsigned long done = 0;

	while (done < len) {
		struct uffdio_move mv = {
			.dst = (uintptr_t)(dst + done),
			.src = (uintptr_t)(src + done),
			.len = len - done,
			.mode = 0,
		};
		int rc = ioctl(uffd, UFFDIO_MOVE, &mv);

		ioctls++;
		/* Success moves it all; EAGAIN reports a partial move. */
		if ((rc == 0 || errno == EAGAIN) && mv.move > 0) {
			done += mv.move;
			continue;
		}
		die("UFFDIO_MOVE of %lu bytes at offset %lu: %s (moved %lld)",
		    len - done, done, strerror(errno), (long long)mv.move);
	}
}

int main(int argc, char **argv)
{
	unsigned long rounds = 4, size_mb = 64, len, words, i, r, bad = 0;
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MOVE };
	struct uffdio_register reg;
	uint64_t *w;
	char *src, *dst;
	int uffd;

	if (argc > 3)
		die("usage: uffdmove4k [ROUNDS [SIZE_MB]]");
	if (argc > 1)
		rounds = parse_count(argv[1], "ROUNDS", 1UL << 20);
	if (argc > 2)
		size_mb = parse_count(argv[2], "SIZE_MB", 1UL << 20);
	if (!size_mb)
		die("SIZE_MB must be at least 1");
	len = size_mb << 20;
	words = len / sizeof(uint64_t);

	src = map_area(len, "source");
	dst = map_area(len, "destination");
	w = (uint64_t *)src;
	for (i = 0; i < words; i++)
		w[i] = word_of(i);

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		die("userfaultfd(): %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API with UFFD_FEATURE_MOVE: %s", strerror(errno));
	if (!(api.features & UFFD_FEATURE_MOVE))
		die("the kernel has no UFFD_FEATURE_MOVE");
	/* The destination of a move must be registered; both are, in turn. */
	for (i = 0; i < 2; i++) {
		memset(&reg, 0, sizeof(reg));
		reg.range.start = (uintptr_t)(i ? src : dst);
		reg.range.len = len;
		reg.mode = UFFDIO_REGISTER_MODE_MISSING;
		if (ioctl(uffd, UFFDIO_REGISTER, &reg))
			die("UFFDIO_REGISTER (missing) of the %s area: %s",
			    i ? "source" : "destination", strerror(errno));
	}

	for (r = 0; r < rounds; r++) {
		move_all(uffd, dst, src, len);
		move_all(uffd, src, dst, len);
	}

	/* Every page is back in src: check it word by word. dst is empty
	 * (and registered: touching it would wait for a fault handler). */
	for (i = 0; i < words; i++)
		if (w[i] != word_of(i) && !bad++)
			fprintf(stderr, "uffdmove4k: error: word %lu is %#llx, want %#llx\n",
				i, (unsigned long long)w[i], (unsigned long long)word_of(i));
	if (bad)
		die("%lu of %lu words differ after %lu round trips", bad, words, rounds);
	close(uffd);
	printf("uffdmove4k: moved %lu pages of %lu bytes (%lu round trips of %lu MB, %lu ioctls), every word checked\n",
	       2 * rounds * (len / PAGE), PAGE, rounds, size_mb, ioctls);
	return 0;
}
