// SPDX-License-Identifier: GPL-2.0
/*
 * migratefolios - move_pages() of PTE-mapped large anonymous folios between
 * NUMA nodes 0 and 1: 64 KB mTHP, or 2 MB THPs whose PMD mapping was split
 * (PTE-mapped THP). The load of scripts/icount's migration workloads,
 * which count the guest instructions the kernel executes in mm/rmap.o,
 * mm/migrate.o and in the move_pages() system call meanwhile: the program
 * calls move_pages() for the moves only, so a run with 0 moves measures the
 * fixed cost (mapping, faulting, the checks, exit) to subtract.
 *
 *   migratefolios KIND MOVES SIZE_MB [spin]
 *
 * KIND is 64k or thp. SIZE_MB of memory (a multiple of the folio size) is
 * faulted in on node 0 as folios of that kind; then every folio is moved
 * MOVES times (0 allowed), to node 1, back to node 0, and so on, with one
 * move_pages() call per move naming the first page of every folio (as
 * tools/testing/selftests/mm/migrate_folios.c does). Before the first move
 * and after the last, every folio is checked to be one whole folio of its
 * size (/proc/self/pagemap and /proc/kpageflags: contiguous, aligned page
 * frames, a compound head and tails, the THP flag); after the last, also
 * on the last target node (get_mempolicy()) at other page frames than
 * before, and every word in place. A split is an error: the per-folio
 * figures would be wrong. Each move must report every folio on its target
 * node, and the mTHP "split" counter of the size must not grow.
 *
 * 64k: hugepages-64kB/enabled is set to always (the other sizes stay as
 * they are: the guest boots with THP on madvise, and the area is not
 * madvised). thp: MADV_HUGEPAGE, checked PMD-mapped, then mprotect() of
 * one page of each THP to read-only and back splits its PMD mapping (not
 * the folio), and the area's smaps must show no AnonHugePages. Both then
 * take MADV_NOHUGEPAGE, so that khugepaged leaves the area alone.
 *
 * spin: a second thread of the process spins in user mode on CPU 1 while
 * the mover runs on CPU 0 (pinned), so that a TLB flush of the mover's mm
 * must reach CPU 1 (needs two vCPUs). The deltas of /proc/interrupts'
 * system lines (x86: TLB shootdowns, function call interrupts, ...; arm64:
 * its IPI lines) over the moves are printed: a count of the IPIs.
 *
 * Prints, on success:
 *   migratefolios: moved N folios of K KB (MOVES moves of F folios, SIZE_MB MB), ...
 *   migratefolios: counters over the moves: pgmigrate_success +P, ...
 *   migratefolios: interrupts over the moves: NAME +D ... (with spin)
 * and exits 0; any failure prints one "migratefolios: error: ..." line and
 * exits 1. Statically linked, it runs in a guest with no libraries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROG "migratefolios"
#include "guest.h"

#define PAGE		4096UL
#define PMD_SIZE	(2UL << 20)
#define MPOL_DEFAULT	0
#define MPOL_BIND	2
#define MPOL_F_NODE	(1 << 0)
#define MPOL_F_ADDR	(1 << 1)
#define MPOL_MF_MOVE_ALL (1 << 2)
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_THP		22
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN		((1ULL << 55) - 1)
#define THP_DIR		"/sys/kernel/mm/transparent_hugepage"

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die("writing '%s' to %s: %s", text, path, strerror(errno));
	close(fd);
}

/* The number in a file (a sysfs counter); -1 if it cannot be read. */
static long long read_number(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The word at index i of the area (the index decides it: a page that lands
 * at another address is caught as well as a lost one). */
static uint64_t word_of(unsigned long i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL ^ 0xa5a5c3c35a5a3c3cULL;
}

/* ---- counters read before and after the moves ---- */

static const char *const vmstat_names[] = {
	"pgmigrate_success", "pgmigrate_fail", "thp_migration_success",
	"thp_migration_fail", "thp_migration_split", "thp_split_page",
	"thp_deferred_split_page",
};
#define NVMSTAT (sizeof(vmstat_names) / sizeof(vmstat_names[0]))
static const char *const mthp_names[] = { "split", "split_deferred", "nr_anon_partially_mapped" };
#define NMTHP (sizeof(mthp_names) / sizeof(mthp_names[0]))

struct counters {
	long long vm[NVMSTAT];
	long long mthp[NMTHP];
};

static void read_counters(struct counters *c, unsigned long folio_kb)
{
	char key[64], path[160];
	unsigned long long val;
	unsigned int i;
	FILE *f = fopen("/proc/vmstat", "r");

	for (i = 0; i < NVMSTAT; i++)
		c->vm[i] = -1;
	if (!f)
		die("/proc/vmstat: %s", strerror(errno));
	while (fscanf(f, "%63s %llu", key, &val) == 2)
		for (i = 0; i < NVMSTAT; i++)
			if (!strcmp(key, vmstat_names[i]))
				c->vm[i] = val;
	fclose(f);
	for (i = 0; i < NMTHP; i++) {
		snprintf(path, sizeof(path), THP_DIR "/hugepages-%lukB/stats/%s", folio_kb, mthp_names[i]);
		c->mthp[i] = read_number(path);
	}
}

/* /proc/interrupts: the sum over the CPUs of each line not named by a
 * number (the system lines: TLB, CAL, RES, LOC, IPI0...). */
#define MAX_LINES 64
struct irq_lines {
	int n;
	char name[MAX_LINES][16];
	unsigned long long sum[MAX_LINES];
};

static void read_interrupts(struct irq_lines *l)
{
	char line[4096];
	FILE *f = fopen("/proc/interrupts", "r");

	l->n = 0;
	if (!f)
		die("/proc/interrupts: %s", strerror(errno));
	if (!fgets(line, sizeof(line), f))	/* the CPU header */
		die("/proc/interrupts is empty");
	while (fgets(line, sizeof(line), f) && l->n < MAX_LINES) {
		char *p = line, *colon = strchr(line, ':'), *end;
		unsigned long long sum = 0, v;

		while (*p == ' ')
			p++;
		if (!colon || (*p >= '0' && *p <= '9') || colon - p >= 16)
			continue;
		snprintf(l->name[l->n], sizeof(l->name[0]), "%.*s", (int)(colon - p), p);
		for (p = colon + 1;; p = end) {
			errno = 0;
			v = strtoull(p, &end, 10);
			if (end == p || errno)
				break;
			sum += v;
		}
		l->sum[l->n++] = sum;
	}
	fclose(f);
}

/* ---- the folio check ---- */

/*
 * Whether every folio of [buf, buf + len) is one whole large folio of
 * @folio bytes: present pages at contiguous page frames aligned to the
 * folio size, a compound head and then tails, all flagged THP. The head's
 * page frame of each folio goes to @pfns. Dies with what is wrong.
 */
static void check_folios(const char *buf, unsigned long len, unsigned long folio,
			 uint64_t *pfns, const char *when)
{
	unsigned long npages = len / PAGE, per = folio / PAGE, i, j;
	uint64_t *pm = malloc(npages * sizeof(*pm)), *kf = malloc(per * sizeof(*kf));
	int pfd = open("/proc/self/pagemap", O_RDONLY), kfd = open("/proc/kpageflags", O_RDONLY);

	if (!pm || !kf)
		die("out of memory");
	if (pfd < 0 || kfd < 0)
		die("/proc/self/pagemap or /proc/kpageflags: %s (CONFIG_PROC_PAGE_MONITOR, root)",
		    strerror(errno));
	if (pread(pfd, pm, npages * sizeof(*pm), (uintptr_t)buf / PAGE * sizeof(*pm)) !=
	    (ssize_t)(npages * sizeof(*pm)))
		die("reading /proc/self/pagemap: %s", strerror(errno));
	for (i = 0; i < npages; i += per) {
		uint64_t pfn = pm[i] & PM_PFN;

		if (!(pm[i] & PM_PRESENT) || !pfn)
			die("%s: page %lu is not present (or no page frame: not root?)", when, i);
		if (pfn % per)
			die("%s: folio %lu starts at page frame %#llx, not aligned to %lu pages",
			    when, i / per, (unsigned long long)pfn, per);
		if (pread(kfd, kf, per * sizeof(*kf), pfn * sizeof(*kf)) != (ssize_t)(per * sizeof(*kf)))
			die("reading /proc/kpageflags: %s", strerror(errno));
		for (j = 0; j < per; j++) {
			uint64_t want = 1ULL << (j ? KPF_COMPOUND_TAIL : KPF_COMPOUND_HEAD);

			if (!(pm[i + j] & PM_PRESENT) || (pm[i + j] & PM_PFN) != pfn + j)
				die("%s: folio %lu is not one run of page frames (page %lu)", when, i / per, j);
			if (!(kf[j] & want) || !(kf[j] & (1ULL << KPF_THP)))
				die("%s: folio %lu is not one %lu KB folio (page %lu: kpageflags %#llx); split?",
				    when, i / per, folio >> 10, j, (unsigned long long)kf[j]);
		}
		pfns[i / per] = pfn;
	}
	close(pfd);
	close(kfd);
	free(pm);
	free(kf);
}

/* The size of the AnonHugePages (PMD-mapped THP) of the mapping at @buf, KB. */
static long anon_huge_kb(const char *buf)
{
	char line[256];
	unsigned long start, end;
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		die("/proc/self/smaps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = start <= (uintptr_t)buf && (uintptr_t)buf < end;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* ---- the spinning thread ---- */

static volatile int spin_stop;
static volatile int spin_started;

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("pinning to CPU %d: %s (needs two vCPUs)", cpu, strerror(errno));
}

static void *spinner(void *arg)
{
	(void)arg;
	pin_to(1);
	spin_started = 1;
	while (!spin_stop)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long moves, size_mb, len, folio, nf, words, i, m;
	unsigned long node_mask;
	struct counters before, after;
	struct irq_lines ib, ia;
	uint64_t *pfn0, *pfn1, *w;
	void **firsts;
	int *nodes, *status, last_node = 0, spin = 0;
	pthread_t thr;
	char *map, *buf;

	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "spin")))
		die("usage: migratefolios 64k|thp MOVES SIZE_MB [spin]");
	if (!strcmp(argv[1], "64k"))
		folio = 64UL << 10;
	else if (!strcmp(argv[1], "thp"))
		folio = PMD_SIZE;
	else
		die("KIND must be 64k or thp, not '%s'", argv[1]);
	moves = parse_count(argv[2], "MOVES", 1UL << 20);
	size_mb = parse_count(argv[3], "SIZE_MB", 1UL << 16);
	spin = argc == 5;
	len = size_mb << 20;
	if (!len || len % folio)
		die("SIZE_MB must be a positive multiple of the folio size (%lu KB)", folio >> 10);
	nf = len / folio;
	words = len / sizeof(uint64_t);
	if (access("/sys/devices/system/node/node1", F_OK))
		die("no NUMA node 1 (the guest needs two nodes)");

	/* Only this size of anonymous large folio where it applies. */
	if (folio == PMD_SIZE)
		write_file(THP_DIR "/hugepages-64kB/enabled", "never");
	else
		write_file(THP_DIR "/hugepages-64kB/enabled", "always");

	map = mmap(NULL, len + PMD_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		die("mmap of %lu bytes: %s", len + PMD_SIZE, strerror(errno));
	buf = (char *)(((uintptr_t)map + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
	if (folio == PMD_SIZE && madvise(buf, len, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE): %s", strerror(errno));

	/* Fault it in on node 0. */
	node_mask = 1;
	if (syscall(__NR_set_mempolicy, MPOL_BIND, &node_mask, 8 * sizeof(node_mask)))
		die("set_mempolicy(MPOL_BIND, node 0): %s", strerror(errno));
	w = (uint64_t *)buf;
	for (i = 0; i < words; i++)
		w[i] = word_of(i);
	if (syscall(__NR_set_mempolicy, MPOL_DEFAULT, NULL, 0))
		die("set_mempolicy(MPOL_DEFAULT): %s", strerror(errno));

	pfn0 = calloc(nf, sizeof(*pfn0));
	pfn1 = calloc(nf, sizeof(*pfn1));
	firsts = calloc(nf, sizeof(*firsts));
	nodes = calloc(nf, sizeof(*nodes));
	status = calloc(nf, sizeof(*status));
	if (!pfn0 || !pfn1 || !firsts || !nodes || !status)
		die("out of memory");
	check_folios(buf, len, folio, pfn0, "after faulting in");
	if (folio == PMD_SIZE) {
		if (anon_huge_kb(buf) != (long)(len >> 10))
			die("the THPs are not mapped by PMDs after faulting in (AnonHugePages %ld kB of %lu)",
			    anon_huge_kb(buf), len >> 10);
		/* Split each PMD mapping, not the folio. */
		for (i = 0; i < nf; i++)
			if (mprotect(buf + i * folio, PAGE, PROT_READ) ||
			    mprotect(buf + i * folio, PAGE, PROT_READ | PROT_WRITE))
				die("mprotect of THP %lu: %s", i, strerror(errno));
		if (anon_huge_kb(buf) != 0)
			die("the THPs are still mapped by PMDs (AnonHugePages %ld kB)", anon_huge_kb(buf));
	}
	if (madvise(buf, len, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE): %s", strerror(errno));
	check_folios(buf, len, folio, pfn0, "before the moves");
	for (i = 0; i < nf; i++)
		firsts[i] = buf + i * folio;

	if (spin) {
		pin_to(0);
		if (pthread_create(&thr, NULL, spinner, NULL))
			die("pthread_create failed");
		while (!spin_started)
			;
		read_interrupts(&ib);
	}
	read_counters(&before, folio >> 10);
	for (m = 1; m <= moves; m++) {
		long ret;

		last_node = m % 2;
		for (i = 0; i < nf; i++) {
			nodes[i] = last_node;
			status[i] = -1000;
		}
		ret = syscall(__NR_move_pages, 0, nf, firsts, nodes, status, MPOL_MF_MOVE_ALL);
		if (ret)
			die("move %lu to node %d: move_pages() returned %ld (%s)", m, last_node, ret,
			    ret < 0 ? strerror(errno) : "folios not moved");
		for (i = 0; i < nf; i++)
			if (status[i] != last_node)
				die("move %lu: folio %lu has status %d, not node %d", m, i, status[i], last_node);
	}
	read_counters(&after, folio >> 10);
	if (spin) {
		read_interrupts(&ia);
		spin_stop = 1;
		pthread_join(thr, NULL);
	}

	check_folios(buf, len, folio, pfn1, "after the moves");
	for (i = 0; i < nf; i++) {
		int node = -1;

		if (syscall(__NR_get_mempolicy, &node, NULL, 0, buf + i * folio, MPOL_F_NODE | MPOL_F_ADDR))
			die("get_mempolicy of folio %lu: %s", i, strerror(errno));
		if (node != last_node)
			die("folio %lu is on node %d after the moves, not %d", i, node, last_node);
		if (moves && pfn1[i] == pfn0[i])
			die("folio %lu is at the page frame it had before the moves", i);
	}
	for (i = 0; i < words; i++)
		if (w[i] != word_of(i))
			die("word %lu is %#llx, want %#llx, after %lu moves", i,
			    (unsigned long long)w[i], (unsigned long long)word_of(i), moves);
	if (before.mthp[0] >= 0 && after.mthp[0] != before.mthp[0])
		die("the %lu KB split counter grew by %lld over the moves", folio >> 10,
		    after.mthp[0] - before.mthp[0]);

	printf("migratefolios: moved %lu folios of %lu KB (%lu moves of %lu folios, %lu MB), "
	       "every folio whole on node %d after the last, every word checked\n",
	       moves * nf, folio >> 10, moves, nf, size_mb, last_node);
	printf("migratefolios: counters over the moves:");
	for (i = 0; i < NVMSTAT; i++)
		if (before.vm[i] >= 0)
			printf(" %s +%lld", vmstat_names[i], after.vm[i] - before.vm[i]);
	for (i = 0; i < NMTHP; i++)
		if (before.mthp[i] >= 0)
			printf(" %lukB/%s %+lld", folio >> 10, mthp_names[i], after.mthp[i] - before.mthp[i]);
	printf("\n");
	if (spin) {
		int j;

		printf("migratefolios: interrupts over the moves (all CPUs):");
		for (i = 0; i < (unsigned long)ia.n; i++)
			for (j = 0; j < ib.n; j++)
				if (!strcmp(ia.name[i], ib.name[j]))
					printf(" %s +%llu", ia.name[i], ia.sum[i] - ib.sum[j]);
		printf("\n");
	}
	munmap(map, len + PMD_SIZE);
	return 0;
}
