// SPDX-License-Identifier: GPL-2.0
/*
 * movetest: the series' moves timed on the running kernel, for a tester
 * with real hardware. No guest, no library but libc; built static.
 *
 *   movetest [-s MB] [-r RUNS] [-c CASE] [-1] > base.txt     (base kernel)
 *   movetest [-s MB] [-r RUNS] [-c CASE] [-1] > patched.txt  (patched one)
 *   movetest --compare base.txt patched.txt
 *
 * Cases (SIZE MB per run, RUNS runs; the median, min and max printed):
 *   uffd-4k          UFFDIO_MOVE of 4KB pages, one ioctl per page
 *   uffd-4k-batch    UFFDIO_MOVE of 4KB pages, one ioctl per 1MB
 *   uffd-64k         UFFDIO_MOVE of 64KB mTHP, one ioctl per 1MB
 *   numa-64k         move_pages() of 64KB mTHP to another node and back
 *   numa-thp         move_pages() of PMD-sized THP to another node and back
 * A case that cannot run says why on a "skip" line.
 *
 * Output: "result CASE UNIT MEDIAN MIN MAX runs N" (ns per page moved, or
 * per folio for move_pages()), then "delta CASE COUNTER N" over the case's
 * runs: THP, mTHP and migration counters of /proc/vmstat and the 64KB mTHP
 * stats, and TLB shootdown interrupts (/proc/interrupts, x86; a guest with
 * paravirtual flushes, or INVLPGB, sends none). A "warn" line says when
 * fewer folios were large than the case needs.
 *
 * Root lets it turn on the one folio size a case needs and turn the other
 * sizes off (sysfs transparent_hugepage); each change is printed on stderr
 * and undone at exit, also on SIGINT, SIGTERM, SIGHUP and SIGQUIT.
 * The mover runs on the first CPU it may use and, unless -1, a second
 * thread of the process spins on the last one, so that the TLB flushes of
 * a move reach another CPU, as in a process whose other threads run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The uAPI of Linux 6.8, for a build on headers older than it. */
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE (1 << 16)
struct uffdio_move {
	__u64 dst;
	__u64 src;
	__u64 len;
	__u64 mode;
	__s64 move;
};
#define UFFDIO_MOVE _IOWR(UFFDIO, 0x05, struct uffdio_move)
#endif

#define THP "/sys/kernel/mm/transparent_hugepage"
#define MB (1UL << 20)
#define MAX_RUNS 64
#define MAX_CTR 128
#define MAX_KNOBS 32

static size_t size_mb = 256;
static int runs = 5;
static const char *only;
static long page;
static size_t pmd = 2 * MB;
static int alone;
static volatile int stop;
static volatile int spin_cpu = -1;

static void die(const char *what)
{
	fprintf(stderr, "movetest: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void fail(const char *cs, const char *what)
{
	fprintf(stderr, "movetest: %s: %s\n", cs, what);
	exit(1);
}

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

/* ---- THP knobs: the top-level one and one per folio size ---- */

struct knob { char path[128]; unsigned long kb; char old[16]; int set; };
static struct knob knobs[MAX_KNOBS];
static int nknobs;

static void find_knobs(void)
{
	struct dirent *e;
	DIR *d = opendir(THP);

	snprintf(knobs[nknobs++].path, sizeof(knobs[0].path), THP "/enabled");
	while (d && (e = readdir(d)) && nknobs < MAX_KNOBS) {
		unsigned long kb;

		if (sscanf(e->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		knobs[nknobs].kb = kb;
		snprintf(knobs[nknobs].path, sizeof(knobs[0].path), THP "/%.64s/enabled", e->d_name);
		if (!access(knobs[nknobs].path, F_OK))	/* some sizes have no anon knob */
			nknobs++;
	}
	if (d)
		closedir(d);
}

static struct knob *knob_of(unsigned long kb)
{
	for (int i = 1; i < nknobs; i++)
		if (knobs[i].kb == kb)
			return &knobs[i];
	return NULL;
}

static void restore(void)
{
	for (int i = 0; i < nknobs; i++)
		if (knobs[i].set) {
			write_str(knobs[i].path, knobs[i].old);
			knobs[i].set = 0;
		}
}

static void on_signal(int sig)
{
	restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The knob's selection ("never", "inherit", ...) in buf, or NULL. */
static const char *knob_get(const struct knob *k, char *buf, size_t len)
{
	char *sel, *end;

	if (read_str(k->path, buf, len))
		return NULL;
	sel = strchr(buf, '[');
	end = sel ? strchr(sel, ']') : NULL;
	if (!end)
		return NULL;
	*end = 0;
	return sel + 1;
}

/* Set the knob, keeping its first value for restore(); 0 on success. */
static int knob_set(struct knob *k, const char *val)
{
	char buf[128];
	const char *cur = knob_get(k, buf, sizeof(buf));

	if (!cur)
		return -1;
	if (!strcmp(cur, val))
		return 0;
	if (!k->set) {
		snprintf(k->old, sizeof(k->old), "%s", cur);
		k->set = 1;	/* before the write: a signal now restores it */
		fprintf(stderr, "movetest: %s: %s -> %s (restored at exit)\n", k->path, cur, val);
	}
	return write_str(k->path, val);
}

/* Folios of kb only, under MADV_HUGEPAGE: 0, or -1 if that cannot be. */
static int only_size(unsigned long kb)
{
	struct knob *k = knob_of(kb);
	char buf[128];
	const char *cur;
	int rc = 0;

	if (!k || !(cur = knob_get(k, buf, sizeof(buf))))
		return -1;
	if (!strcmp(cur, "inherit")) {
		const char *top = knob_get(&knobs[0], buf, sizeof(buf));

		if (!top || !strcmp(top, "never"))
			rc |= knob_set(&knobs[0], "madvise");
	} else if (strcmp(cur, "always") && strcmp(cur, "madvise")) {
		rc |= knob_set(k, "madvise");
	}
	for (int i = 1; i < nknobs; i++)
		if (&knobs[i] != k)
			rc |= knob_set(&knobs[i], "never");
	return rc ? -1 : 0;
}

/* ---- counters ---- */

struct ctrs { int n; char name[MAX_CTR][48]; long long val[MAX_CTR]; };

/* Printed even when they did not move: the ones the series changes. */
static const char *const always[] = {
	"thp_fault_alloc", "thp_split_page", "thp_split_pmd", "thp_migration_success",
	"thp_migration_split", "pgmigrate_success", "pgmigrate_fail", "mthp64k_anon_fault_alloc",
	"mthp64k_split", "tlb_shootdown_irqs",
};

static void add(struct ctrs *c, const char *name, long long v)
{
	if (c->n == MAX_CTR)
		return;
	snprintf(c->name[c->n], sizeof(c->name[0]), "%s", name);
	c->val[c->n++] = v;
}

static long long get(const struct ctrs *c, const char *name, int *found)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->name[i], name)) {
			*found = 1;
			return c->val[i];
		}
	*found = 0;
	return 0;
}

static void snapshot(struct ctrs *c)
{
	static const char *const stats[] = { "split", "split_failed", "split_deferred", "anon_fault_alloc" };
	char *line = NULL, path[256], buf[64], name[48];
	size_t cap = 0;
	long long v;
	FILE *f;

	c->n = 0;
	f = fopen("/proc/vmstat", "r");
	while (f && getline(&line, &cap, f) > 0)
		if (sscanf(line, "%47s %lld", name, &v) == 2 &&
		    (!strncmp(name, "thp_", 4) || !strncmp(name, "pgmigrate_", 10)))
			add(c, name, v);
	if (f)
		fclose(f);
	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		snprintf(path, sizeof(path), THP "/hugepages-64kB/stats/%s", stats[i]);
		if (!read_str(path, buf, sizeof(buf))) {
			snprintf(name, sizeof(name), "mthp64k_%s", stats[i]);
			add(c, name, atoll(buf));
		}
	}
	f = fopen("/proc/interrupts", "r");
	while (f && getline(&line, &cap, f) > 0) {
		char *p = line, *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, "TLB:", 4))
			continue;
		for (v = 0, p += 4;; p = end) {
			long long x = strtoll(p, &end, 10);

			if (end == p)
				break;
			v += x;
		}
		add(c, "tlb_shootdown_irqs", v);
	}
	if (f)
		fclose(f);
	free(line);
}

static void print_deltas(const char *cs, const struct ctrs *a, const struct ctrs *b)
{
	for (int i = 0; i < b->n; i++) {
		int found, keep = 0;
		long long d = b->val[i] - get(a, b->name[i], &found);

		for (size_t j = 0; j < sizeof(always) / sizeof(always[0]); j++)
			keep |= !strcmp(always[j], b->name[i]);
		if (found && (d || keep))
			printf("delta %s %s %lld\n", cs, b->name[i], d);
	}
}

/* Say so when fewer folios of the case's size were faulted in than it moves. */
static void check_large(const char *cs, const struct ctrs *a, const struct ctrs *b,
			const char *ctr, size_t want)
{
	int f1, f2;
	long long got = get(b, ctr, &f2) - get(a, ctr, &f1);

	if (f1 && f2 && got < (long long)want)
		printf("warn %s %lld of %zu folios faulted in large (%s): the result is partly of small pages\n",
		       cs, got, want, ctr);
}

/* ---- timing ---- */

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *cs, const char *unit, double *ns, int n)
{
	qsort(ns, n, sizeof(*ns), cmp_d);
	printf("result %s %s %.1f %.1f %.1f runs %d\n", cs, unit, ns[n / 2], ns[0], ns[n - 1], n);
	fflush(stdout);
}

static void skip(const char *cs, const char *why)
{
	printf("skip %s %s\n", cs, why);
	fflush(stdout);
}

static int want(const char *cs)
{
	return !only || !strncmp(cs, only, strlen(only));
}

/* len bytes, PMD-aligned; hint: an MADV_* for the range. */
static char *area(size_t len, int hint)
{
	char *raw = mmap(NULL, len + pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED)
		die("mmap");
	p = (char *)(((uintptr_t)raw + pmd - 1) & ~(pmd - 1));
	if (madvise(p, len, hint))
		die("madvise");
	return p;
}

static void fill(char *p, size_t len)
{
	for (size_t off = 0; off < len; off += page)
		*(uint64_t *)(p + off) = off ^ 0x5a5a5a5aUL;
}

static int check(const char *p, size_t len)
{
	for (size_t off = 0; off < len; off += page)
		if (*(const uint64_t *)(p + off) != (off ^ 0x5a5a5a5aUL))
			return -1;
	return 0;
}

/* ---- UFFDIO_MOVE ---- */

static void uffd_case(const char *cs, int hint, size_t chunk, size_t folio)
{
	size_t len = size_mb * MB;
	double ns[MAX_RUNS];
	struct ctrs c0, c1;

	if (!want(cs))
		return;
	snapshot(&c0);
	for (int r = 0; r < runs; r++) {
		struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MOVE };
		struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
		char *src, *dst;
		int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
		double t0;

		if (uffd < 0)
			return skip(cs, "userfaultfd() failed (vm.unprivileged_userfaultfd=0, not root?)");
		if (ioctl(uffd, UFFDIO_API, &api) || !(api.features & UFFD_FEATURE_MOVE)) {
			close(uffd);
			return skip(cs, "no UFFD_FEATURE_MOVE in this kernel");
		}
		src = area(len, hint);
		dst = area(len, MADV_NOHUGEPAGE);
		reg.range.start = (uintptr_t)dst;
		reg.range.len = len;
		if (ioctl(uffd, UFFDIO_REGISTER, &reg))
			die("UFFDIO_REGISTER");
		fill(src, len);
		t0 = now_ns();
		for (size_t off = 0; off < len; off += chunk) {
			struct uffdio_move mv = { .dst = (uintptr_t)dst + off, .src = (uintptr_t)src + off,
						  .len = chunk };

			if (ioctl(uffd, UFFDIO_MOVE, &mv))
				die("UFFDIO_MOVE");
			if ((size_t)mv.move != chunk)
				fail(cs, "UFFDIO_MOVE moved less than asked");
		}
		ns[r] = (now_ns() - t0) / (len / page);
		if (check(dst, len))
			fail(cs, "wrong data after the move");
		close(uffd);
		munmap(src, len);
		munmap(dst, len);
	}
	snapshot(&c1);
	report(cs, "ns/page", ns, runs);
	print_deltas(cs, &c0, &c1);
	if (folio == 64 << 10)
		check_large(cs, &c0, &c1, "mthp64k_anon_fault_alloc", runs * (len / folio));
}

/* ---- move_pages() between two nodes ---- */

static int nodes[2] = { -1, -1 };

static void find_nodes(void)
{
	char path[128], buf[512];
	int k = 0;

	for (int i = 0; i < 1024 && k < 2; i++) {
		unsigned long kb = 0;
		char *m;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", i);
		if (read_str(path, buf, sizeof(buf)))
			continue;
		m = strstr(buf, "MemTotal:");
		if (m && sscanf(m, "MemTotal: %lu", &kb) == 1 && kb)
			nodes[k++] = i;
	}
}

/*
 * Move every folio of [p, p + len) to node, naming only its first page (a
 * later page of a folio being moved would fail with -EBUSY); ns per folio.
 * Then every page must be on node.
 */
static double move_all(const char *cs, char *p, size_t len, size_t folio, int node)
{
	unsigned long nf = len / folio, np = len / page;
	void **pages = malloc(np * sizeof(*pages));
	int *to = malloc(nf * sizeof(*to)), *st = malloc(np * sizeof(*st));
	double t0, t;
	long ret;
	char msg[128];

	if (!pages || !to || !st)
		die("malloc");
	for (unsigned long i = 0; i < nf; i++) {
		pages[i] = p + i * folio;
		to[i] = node;
	}
	t0 = now_ns();
	ret = syscall(SYS_move_pages, 0, nf, pages, to, st, MPOL_MF_MOVE);
	t = now_ns() - t0;
	if (ret < 0)
		die("move_pages");
	if (ret > 0) {
		snprintf(msg, sizeof(msg), "move_pages() left %ld folios unmigrated", ret);
		fail(cs, msg);
	}
	for (unsigned long i = 0; i < np; i++)
		pages[i] = p + i * page;
	if (syscall(SYS_move_pages, 0, np, pages, NULL, st, 0))
		die("move_pages (query)");
	for (unsigned long i = 0; i < np; i++)
		if (st[i] != node) {
			snprintf(msg, sizeof(msg), "page %lu: status %d, want node %d", i, st[i], node);
			fail(cs, msg);
		}
	free(pages);
	free(to);
	free(st);
	return t / nf;
}

static void numa_case(const char *cs, size_t folio)
{
	size_t len = size_mb * MB;
	double there[MAX_RUNS], back[MAX_RUNS];
	char name[64];
	struct ctrs c0, c1;

	if (!want(cs))
		return;
	if (nodes[1] < 0)
		return skip(cs, "fewer than two NUMA nodes with memory");
	snapshot(&c0);
	for (int r = 0; r < runs; r++) {
		char *p = area(len, MADV_HUGEPAGE);

		fill(p, len);
		move_all(cs, p, len, folio, nodes[0]);
		there[r] = move_all(cs, p, len, folio, nodes[1]);
		back[r] = move_all(cs, p, len, folio, nodes[0]);
		if (check(p, len))
			fail(cs, "wrong data after the moves");
		munmap(p, len);
	}
	snapshot(&c1);
	snprintf(name, sizeof(name), "%s-there", cs);
	report(name, "ns/folio", there, runs);
	snprintf(name, sizeof(name), "%s-back", cs);
	report(name, "ns/folio", back, runs);
	print_deltas(cs, &c0, &c1);
	check_large(cs, &c0, &c1, folio == pmd ? "thp_fault_alloc" : "mthp64k_anon_fault_alloc",
		    runs * (len / folio));
}

/* ---- --compare ---- */

struct row { char cs[64]; char kind[8]; char what[48]; char unit[16]; double v; };
struct out { char head[8][160]; int nhead; struct row rows[4096]; int n; };

static void load(const char *path, struct out *o)
{
	FILE *f = fopen(path, "r");
	char line[512];

	if (!f)
		die(path);
	o->n = o->nhead = 0;
	while (fgets(line, sizeof(line), f) && o->n < 4096) {
		struct row *r = &o->rows[o->n];

		if (sscanf(line, "result %63s %15s %lf", r->cs, r->unit, &r->v) == 3) {
			strcpy(r->kind, "result");
			o->n++;
		} else if (sscanf(line, "delta %63s %47s %lf", r->cs, r->what, &r->v) == 3) {
			strcpy(r->kind, "delta");
			o->n++;
		} else if ((!strncmp(line, "kernel ", 7) || !strncmp(line, "cpu ", 4) ||
			    !strncmp(line, "size_mb ", 8) || !strncmp(line, "threads ", 8) ||
			    !strncmp(line, "note no second", 14)) && o->nhead < 8) {
			line[strcspn(line, "\n")] = 0;
			snprintf(o->head[o->nhead++], sizeof(o->head[0]), "%.159s", line);
		}
	}
	fclose(f);
}

static const struct row *find(const struct out *o, const struct row *r)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->rows[i].kind, r->kind) && !strcmp(o->rows[i].cs, r->cs) &&
		    !strcmp(o->rows[i].what, r->what))
			return &o->rows[i];
	return NULL;
}

static int compare(const char *a, const char *b)
{
	static struct out A, B;

	load(a, &A);
	load(b, &B);
	for (int i = 0; i < A.nhead; i++)
		printf("first:  %s\n", A.head[i]);
	for (int i = 0; i < B.nhead; i++)
		printf("second: %s\n", B.head[i]);
	for (int i = 0; i < A.nhead; i++)
		if (!strncmp(A.head[i], "size_mb ", 8) && (i >= B.nhead || strcmp(A.head[i], B.head[i])))
			printf("warning: the two runs were not made with the same size, runs and page size\n");
	printf("\n%-22s %-9s %12s %12s %14s\n", "case", "median", "first", "second", "second/first");
	for (int i = 0; i < A.n; i++) {
		const struct row *r = &A.rows[i], *s = find(&B, r);

		if (strcmp(r->kind, "result"))
			continue;
		if (s)
			printf("%-22s %-9s %12.1f %12.1f %13.2fx\n", r->cs, r->unit, r->v, s->v, s->v / r->v);
		else
			printf("%-22s %-9s %12.1f %12s\n", r->cs, r->unit, r->v, "(none)");
	}
	for (int i = 0; i < B.n; i++)
		if (!strcmp(B.rows[i].kind, "result") && !find(&A, &B.rows[i]))
			printf("%-22s %-9s %12s %12.1f\n", B.rows[i].cs, B.rows[i].unit, "(none)", B.rows[i].v);
	printf("\n%-14s %-28s %10s %10s\n", "counter", "", "first", "second");
	for (int i = 0; i < A.n; i++) {
		const struct row *r = &A.rows[i], *s = find(&B, r);

		if (!strcmp(r->kind, "delta"))
			printf("%-14s %-28s %10.0f %10.0f\n", r->cs, r->what, r->v, s ? s->v : 0);
	}
	for (int i = 0; i < B.n; i++)
		if (!strcmp(B.rows[i].kind, "delta") && !find(&A, &B.rows[i]))
			printf("%-14s %-28s %10.0f %10.0f\n", B.rows[i].cs, B.rows[i].what, 0.0, B.rows[i].v);
	return 0;
}

/* ---- main ---- */

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* The other thread of the mm, spinning in user mode until the end. */
static void *spin(void *arg)
{
	pin((int)(long)arg);
	spin_cpu = sched_getcpu();
	while (!stop)
		__asm__ __volatile__("" ::: "memory");
	return NULL;
}

static void threads(void)
{
	cpu_set_t set;
	int first = -1, last = -1;
	pthread_t t;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (first < 0)
				first = c;
			last = c;
		}
	pin(first);
	if (alone || first == last) {
		printf("note no second thread (%s): TLB flushes stay on the mover's CPU\n",
		       alone ? "-1" : "one CPU allowed");
		return;
	}
	if (pthread_create(&t, NULL, spin, (void *)(long)last))
		die("pthread_create");
	while (spin_cpu < 0)
		usleep(1000);
	printf("threads mover on CPU %d, a spinning thread of the mm on CPU %d\n", sched_getcpu(), spin_cpu);
}

static void bad(const char *arg)
{
	fprintf(stderr, "movetest: bad argument '%s' (see movetest --help)\n", arg);
	exit(2);
}

static void usage(void)
{
	printf("usage: movetest [-s MB] [-r RUNS] [-c CASE] [-1]   MB per run (256), runs (5, at most %d),\n"
	       "                                                    a case or a prefix, -1: no second thread\n"
	       "       movetest --compare FIRST SECOND            two saved outputs side by side\n"
	       "cases: uffd-4k uffd-4k-batch uffd-64k numa-64k numa-thp\n", MAX_RUNS);
	exit(0);
}

int main(int argc, char **argv)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	char cpu[512] = "unknown", buf[64], *line = NULL;
	size_t cap = 0;
	struct utsname u;
	FILE *f;

	if (argc > 1 && !strcmp(argv[1], "--compare")) {
		if (argc != 4)
			bad(argc > 4 ? argv[4] : "--compare needs two files");
		return compare(argv[2], argv[3]);
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			usage();
		else if (!strcmp(argv[i], "-s") && i + 1 < argc && atol(argv[i + 1]) > 0)
			size_mb = atol(argv[++i]);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
			 atoi(argv[i + 1]) <= MAX_RUNS)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "-1"))
			alone = 1;
		else
			bad(argv[i]);
	}
	page = sysconf(_SC_PAGESIZE);
	if (!read_str(THP "/hpage_pmd_size", buf, sizeof(buf)) && atol(buf) > 0)
		pmd = atol(buf);
	size_mb = (size_mb * MB + pmd - 1) / pmd * pmd / MB;	/* whole PMDs */
	uname(&u);
	f = fopen("/proc/cpuinfo", "r");
	while (f && getline(&line, &cap, f) > 0)
		if (!strncmp(line, "model name", 10) || !strncmp(line, "cpu\t", 4)) {
			snprintf(cpu, sizeof(cpu), "%s", strchr(line, ':') ? strchr(line, ':') + 2 : line);
			cpu[strcspn(cpu, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	free(line);
	find_nodes();
	find_knobs();
	printf("movetest 1\nkernel %s %s\ncpu %s (%ld online)\nnodes %d %d\nsize_mb %zu runs %d page %ld pmd %zu\n",
	       u.release, u.machine, cpu, sysconf(_SC_NPROCESSORS_ONLN), nodes[0], nodes[1],
	       size_mb, runs, page, pmd);
	threads();
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
	signal(SIGPIPE, SIG_IGN);
	atexit(restore);

	uffd_case("uffd-4k", MADV_NOHUGEPAGE, page, page);
	uffd_case("uffd-4k-batch", MADV_NOHUGEPAGE, MB, page);

	if (!want("uffd-64k") && !want("numa-64k"))
		;
	else if (!only_size(64)) {
		uffd_case("uffd-64k", MADV_HUGEPAGE, MB, 64 << 10);
		numa_case("numa-64k", 64 << 10);
	} else {
		const char *why = !knob_of(64) ? "no 64KB mTHP size in this kernel" :
				  "cannot set the folio sizes (not root?)";

		if (want("uffd-64k"))
			skip("uffd-64k", why);
		if (want("numa-64k"))
			skip("numa-64k", why);
	}
	restore();

	if (!want("numa-thp"))
		;
	else if (!only_size(pmd >> 10))
		numa_case("numa-thp", pmd);
	else if (want("numa-thp"))
		skip("numa-thp", !knob_of(pmd >> 10) ? "no PMD-sized THP in this kernel" :
			"cannot set the folio sizes (not root?)");
	restore();
	stop = 1;
	return 0;
}
