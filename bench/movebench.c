// SPDX-License-Identifier: GPL-2.0
/*
 * movebench - time folio moves inside a (guest) kernel, base or patched.
 *
 * One JSON object per line on stdout, one line per measured figure:
 *   move_pages   move_pages() of SIZE bytes of THP, 64KB mTHP, 2MB and 1GB
 *                hugetlb between node 0 and node 1, GiB/s per direction
 *   uffd_move    UFFDIO_MOVE of SIZE bytes as 4KB pages and as 64KB mTHP
 *   window       how long a thread touching a 2MB THP is blocked while the
 *                folio migrates: per folio the longest access (values, in
 *                folio order), then the median, p99 and max over the
 *                folios; kind "thp": a thread
 *                writing a byte of the folio, "thp-reader": one reading a
 *                word of it (and checking what it read); faulting_*: the
 *                same of the longest access that took a page fault (0 for a
 *                folio where none did), as an access without one was held
 *                up only by the scheduler (under an emulator, the host's too)
 *   kernel_window  the same migrations seen inside the kernel: per folio the
 *                time from its first set_migration_pte/pmd trace event to
 *                its last remove_migration_pte/pmd one (tracefs, a trace
 *                clock of microsecond resolution), with no thread touching
 *                the folio ("thp-idle"), with the reader above
 *                ("thp-reader"), with the writer ("thp-writer"), and with a
 *                thread writing every line of the folio over and over
 *                ("thp-dirtier", so that a pre-copy finds it written); and
 *                call_*_us: the same up to the start of the move_pages()
 *                call that moved it (its mm_migrate_pages_start event), which
 *                takes in what comes before the migration entries (a
 *                pre-copy, with its write-protect)
 *   memcpy       single-thread memcpy node 0 -> node 1 of 2MB chunks and of
 *                SIZE bytes: the limit every move is compared with
 * move_pages and uffd_move run with a second thread of the mm busy on
 * another CPU than the mover (both pinned), so that every TLB flush they
 * cause is an IPI, and counted. The window figures pin the mover to CPU 0,
 * the thread touching the folio (the "toucher": reader, writer or dirtier;
 * none when idle) to CPU 1 and, where the guest has 3 CPUs or more, a
 * "spinner" to CPU 2: a thread of the mm that never touches the folio, in
 * every kind, idle too, so that a flush is an IPI even while the toucher
 * sleeps on the migration entry ("toucher", "mover_cpu", "toucher_cpu",
 * "spinner", "spinner_cpu", "online_cpus" in their JSON; -1: no such
 * thread). Both window
 * figures of a toucher carry its page faults, from getrusage(RUSAGE_THREAD)
 * taken by the toucher itself around each access: per folio in folio order
 * ("toucher_faults_per_folio"), their sum ("toucher_faults") and its
 * accesses ("toucher_accesses").
 * Every run checks the data it moved word by word, where the pages ended up
 * and whether large folios stayed large; a failed check prints an "error"
 * line and makes the exit status non-zero. Numbers, not verdicts: whether a
 * figure is good is for the report to say, never for this program.
 *
 * Every move_pages and uffd_move figure also carries "counts": per run, the
 * raw deltas of kernel event counters read right before and right after the
 * timed work (exact, also under an emulator), and the bytes that run moved:
 *   tlb_ipi        the "TLB" row of /proc/interrupts summed over the CPUs
 *                  (x86: TLB shootdowns received), or, without that row,
 *                  vmstat nr_tlb_remote_flush_received; "tlb_source" says
 *   nr_tlb_remote_flush, nr_tlb_remote_flush_received  (CONFIG_DEBUG_TLBFLUSH)
 *   thp_split_page, thp_split_pmd, thp_split_pte       /proc/vmstat
 *   mthp_split, mthp_split_failed  hugepages-<mthp_kb>kB/stats/ of the run's
 *                  own THP/mTHP size (not for 4KB pages or hugetlb)
 *   pgmigrate_success, pgmigrate_fail, thp_migration_success,
 *   thp_migration_split                                /proc/vmstat
 *   pgmigrate_precopy, pgmigrate_precopy_redo          /proc/vmstat, where the
 *                  kernel has migration precopy (folios copied before the
 *                  unmap; copied again inside the window, written meanwhile)
 *   rmap_unmap, rmap_remap, rmap_precopy_wrprotect, rmap_precopy_check,
 *   rmap_precopy_reopen   with -k, on a kernel with kprobe events
 *                  (CONFIG_KPROBE_EVENTS): the hits of a kprobe on each rmap
 *                  walk's per-VMA callback (try_to_migrate_one(),
 *                  remove_migration_pte(), the pre-copy's three), over the
 *                  whole system; one per walk where a folio has one mapping,
 *                  as here (a split adds a remap walk per folio it makes); a
 *                  counter whose probe missed a hit is left out. The probes'
 *                  traps land inside the timed runs: -k is for counting, not
 *                  for times
 * A counter this kernel lacks is left out (never 0), and the "counts" info
 * line at the start lists what is missing. Normalizing is the report's job.
 * The kernel_window figures carry counts per folio (one move_pages() each).
 *
 * Where the kernel has the migration pre-copy's knob (the sysctl
 * /proc/sys/vm/migrate_precopy, or in debugfs: migrate_precopy/enabled,
 * migrate_precopy or mm/migrate_precopy; the "precopy" info line says
 * which), the window figures run with it at 0 and then once more at 1,
 * tagged "TAG+precopy"; the knob is put back as it was at exit. Its
 * min_kb sibling, if any, is read, never changed.
 *
 * Needs root (sysfs THP knobs, /proc/kpageflags, tracefs, which it mounts on
 * /sys/kernel/tracing when nothing is there, and debugfs for the knob, on
 * /sys/kernel/debug likewise) and two NUMA nodes.
 *
 *   movebench [-s SIZE_MB] [-r RUNS] [-g RUNS_1G] [-t TAG] [-o BENCHES] [-q] [-k]
 *   -o   only these, comma-separated: memcpy,move_pages,uffd_move,window
 *   -k   count the rmap walks with kprobes (see above)
 *        (window: both window figures)
 *   -q   quick: small sizes, two runs; for a smoke test of the tool
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT	26
#endif
#define MAP_HUGE_2MB	(21 << MAP_HUGE_SHIFT)
#define MAP_HUGE_1GB	(30 << MAP_HUGE_SHIFT)
#define KPF_COMPOUND_HEAD	(1ULL << 15)
#define KPF_THP			(1ULL << 22)
#define THP_SYSFS	"/sys/kernel/mm/transparent_hugepage"
#define PMD_SZ		(2UL << 20)
#define MTHP_SZ		(64UL << 10)
#define MAX_RUNS	1000

static unsigned long page_size, size = 1024UL << 20;
static int runs = 10, runs_1g = 10, errors;
static const char *tag = "", *only;

static bool wanted(const char *bench)
{
	const char *p = only;
	size_t n = strlen(bench);

	while (p && *p) {
		if (!strncmp(p, bench, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return !only;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void error(const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("{\"tag\":\"%s\",\"error\":\"%s\"}\n", tag, msg);
	fflush(stdout);
	errors++;
}

static void skip(const char *bench, const char *kind, const char *why)
{
	printf("{\"tag\":\"%s\",\"bench\":\"%s\",\"kind\":\"%s\",\"skip\":\"%s\"}\n",
	       tag, bench, kind, why);
	fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One figure: mean and standard deviation (n - 1) of v[0..n), plus extras. */
static void emit(const char *bench, const char *kind, const char *dir,
		 const char *unit, const double *v, int n, const char *extra)
{
	double mean = 0, var = 0, lo = v[0], hi = v[0];
	int i;

	for (i = 0; i < n; i++) {
		mean += v[i] / n;
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (i = 0; i < n && n > 1; i++)
		var += (v[i] - mean) * (v[i] - mean) / (n - 1);
	printf("{\"tag\":\"%s\",\"bench\":\"%s\",\"kind\":\"%s\",\"dir\":\"%s\","
	       "\"bytes\":%lu,\"unit\":\"%s\",\"n\":%d,\"mean\":%.6g,\"std\":%.6g,"
	       "\"min\":%.6g,\"max\":%.6g%s%s,\"values\":[", tag, bench, kind, dir, size,
	       unit, n, mean, sqrt(var), lo, hi, extra ? "," : "", extra ? extra : "");
	for (i = 0; i < n; i++)
		printf("%s%.6g", i ? "," : "", v[i]);
	printf("]}\n");
	fflush(stdout);
}

/* ---- memory placement and checks ---- */

static long mbind_node(void *addr, unsigned long len, int node)
{
	unsigned long mask = 1UL << node;

	return syscall(SYS_mbind, addr, len, MPOL_BIND, &mask, 8 * sizeof(mask), 0);
}

static uint64_t word_of(unsigned long i, unsigned int seed)
{
	return (i * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)seed << 48) ^ 0x6d6f7665ULL;
}

static void fill(void *p, unsigned long len, unsigned int seed)
{
	uint64_t *w = p;
	unsigned long i;

	for (i = 0; i < len / 8; i++)
		w[i] = word_of(i, seed);
}

static bool check(const char *what, const void *p, unsigned long len, unsigned int seed)
{
	const uint64_t *w = p;
	unsigned long i;

	for (i = 0; i < len / 8; i++) {
		if (w[i] != word_of(i, seed)) {
			error("%s: word %lu is %#llx, want %#llx", what, i,
			      (unsigned long long)w[i],
			      (unsigned long long)word_of(i, seed));
			return false;
		}
	}
	return true;
}

/* How many of the folio_sz chunks of [p, p + len) are one large folio each. */
static long count_large(void *p, unsigned long len, unsigned long folio_sz)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int kf = open("/proc/kpageflags", O_RDONLY);
	unsigned long off;
	long n = 0;

	if (pm < 0 || kf < 0) {
		n = -1;
		goto out;
	}
	for (off = 0; off < len; off += folio_sz) {
		uint64_t ent, flags, first;
		unsigned long va = (unsigned long)p + off;

		if (pread(pm, &ent, 8, va / page_size * 8) != 8 || !(ent & (1ULL << 63)))
			continue;
		first = ent & ((1ULL << 55) - 1);
		if (pread(kf, &flags, 8, first * 8) != 8)
			continue;
		if ((flags & (KPF_COMPOUND_HEAD | KPF_THP)) != (KPF_COMPOUND_HEAD | KPF_THP))
			continue;
		va += folio_sz - page_size;
		if (pread(pm, &ent, 8, va / page_size * 8) == 8 &&
		    (ent & ((1ULL << 55) - 1)) == first + folio_sz / page_size - 1)
			n++;
	}
out:
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	return n;
}

/* ---- kernel event counters, read around every timed run ---- */

enum {
	C_TLB_IPI, C_TLB_FLUSH, C_TLB_RECEIVED,
	C_SPLIT_PAGE, C_SPLIT_PMD, C_SPLIT_PTE, C_MTHP_SPLIT, C_MTHP_SPLIT_FAILED,
	C_MIGRATE_OK, C_MIGRATE_FAIL, C_THP_MIGRATE_OK, C_THP_MIGRATE_SPLIT,
	C_PRECOPY, C_PRECOPY_REDO,
	C_RMAP_UNMAP, C_RMAP_REMAP, C_RMAP_WRPROTECT, C_RMAP_CHECK, C_RMAP_REOPEN,
	NR_COUNTERS
};
#define C_RMAP_FIRST	C_RMAP_UNMAP	/* from here on: kprobe hits, not vmstat */

/* The JSON names; those from C_TLB_FLUSH on, bar the mTHP ones, are vmstat's */
static const char *const counter_name[NR_COUNTERS] = {
	"tlb_ipi", "nr_tlb_remote_flush", "nr_tlb_remote_flush_received",
	"thp_split_page", "thp_split_pmd", "thp_split_pte", "mthp_split",
	"mthp_split_failed", "pgmigrate_success", "pgmigrate_fail",
	"thp_migration_success", "thp_migration_split", "pgmigrate_precopy",
	"pgmigrate_precopy_redo", "rmap_unmap", "rmap_remap", "rmap_precopy_wrprotect",
	"rmap_precopy_check", "rmap_precopy_reopen",
};

/* The function each rmap_* counter's kprobe is on: a walk's rmap_one callback */
static const char *const rmap_func[NR_COUNTERS - C_RMAP_FIRST] = {
	"try_to_migrate_one", "remove_migration_pte", "precopy_wrprotect_one",
	"precopy_changed_one", "precopy_reopen_one",
};

static bool tlb_from_interrupts;	/* else from vmstat, if there */

/* The sum of the per-CPU columns of /proc/interrupts' "TLB:" row, or -1. */
static long tlb_interrupts(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[4096];
	long sum = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *tok, *save;

		tok = strtok_r(line, " \t\n", &save);
		if (!tok || strcmp(tok, "TLB:"))
			continue;
		sum = 0;
		while ((tok = strtok_r(NULL, " \t\n", &save))) {
			char *end;
			long v = strtol(tok, &end, 10);

			if (*end)	/* the description: the CPU columns ended */
				break;
			sum += v;
		}
		break;
	}
	fclose(f);
	return sum;
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* ---- kprobe events on the rmap walks, where the kernel has them ---- */

#define TRACEFS		"/sys/kernel/tracing"
#define KP_GROUP	"movebench"
/* An instance of its own, tracing off: the probes count hits, record nothing */
#define KP_INSTANCE	"instances/movebench-rmap"

static bool kp_wanted;			/* -k */
static char kp_dir[64];			/* tracefs, with the instance made */
static bool kp_made[NR_COUNTERS - C_RMAP_FIRST];

/*
 * tracefs' directory into dir (mounted on /sys/kernel/tracing when nothing
 * is there); false when there is none.
 */
static bool tracefs_find(char *dir, size_t len)
{
	const char *dirs[] = { TRACEFS, "/sys/kernel/debug/tracing" };
	char path[160];
	size_t k;

	if (access(TRACEFS "/trace", F_OK))
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	for (k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++) {
		snprintf(path, sizeof(path), "%s/trace", dirs[k]);
		if (!access(path, R_OK)) {
			snprintf(dir, len, "%s", dirs[k]);
			return true;
		}
	}
	dir[0] = '\0';
	return false;
}

/* Write line to tracefs file file of kp_dir, appending (kprobe_events) */
static bool kp_write(const char *file, const char *line, bool append)
{
	char path[192];
	size_t len = strlen(line);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", kp_dir, file);
	fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return false;
	n = write(fd, line, len);
	return !close(fd) && n == (ssize_t)len;
}

/* Probe i off and gone (also one a killed run left behind) */
static void kp_remove(int i)
{
	char f[160], line[96];

	snprintf(f, sizeof(f), KP_INSTANCE "/events/" KP_GROUP "/%s/enable",
		 counter_name[C_RMAP_FIRST + i]);
	kp_write(f, "0", false);
	snprintf(line, sizeof(line), "-:" KP_GROUP "/%s\n", counter_name[C_RMAP_FIRST + i]);
	kp_write("kprobe_events", line, true);
	kp_made[i] = false;
}

/*
 * A kprobe event on each rmap_func[], enabled in an instance whose tracing
 * is off: its hits count in kprobe_profile. A function this kernel lacks (or
 * a kernel without kprobe events) gets none, and its counter is missing.
 */
static void kp_init(void)
{
	char f[160], line[160];
	int i;

	if (!kp_wanted || !tracefs_find(kp_dir, sizeof(kp_dir)))
		goto none;
	snprintf(f, sizeof(f), "%s/kprobe_events", kp_dir);
	if (access(f, W_OK))
		goto none;
	snprintf(f, sizeof(f), "%s/" KP_INSTANCE, kp_dir);
	if (mkdir(f, 0755) && errno != EEXIST)
		goto none;
	/* Nothing is recorded: the smallest buffer will do */
	kp_write(KP_INSTANCE "/buffer_size_kb", "4", false);
	if (!kp_write(KP_INSTANCE "/tracing_on", "0", false)) {
		rmdir(f);
		goto none;
	}
	for (i = 0; i < NR_COUNTERS - C_RMAP_FIRST; i++) {
		kp_remove(i);
		snprintf(line, sizeof(line), "p:" KP_GROUP "/%s %s\n",
			 counter_name[C_RMAP_FIRST + i], rmap_func[i]);
		if (!kp_write("kprobe_events", line, true))
			continue;
		snprintf(f, sizeof(f), KP_INSTANCE "/events/" KP_GROUP "/%s/enable",
			 counter_name[C_RMAP_FIRST + i]);
		kp_made[i] = true;
		if (!kp_write(f, "1", false))
			kp_remove(i);
	}
	return;
none:
	kp_dir[0] = '\0';
}

/* The probes gone, and their instance (at exit) */
static void kp_restore(void)
{
	char f[160];
	int i;

	if (!kp_dir[0])
		return;
	for (i = 0; i < NR_COUNTERS - C_RMAP_FIRST; i++)
		if (kp_made[i])
			kp_remove(i);
	snprintf(f, sizeof(f), "%s/" KP_INSTANCE, kp_dir);
	rmdir(f);
	kp_dir[0] = '\0';
}

/*
 * The hits of each probe made into c[C_RMAP_FIRST...] from kprobe_profile
 * ("NAME HITS MISSED"); -1 where there is no probe, or it missed a hit (a
 * count that would not be exact).
 */
static void kp_read(long *c)
{
	char path[160], line[256], name[128];
	long hits, missed;
	FILE *f;
	int i;

	if (!kp_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/kprobe_profile", kp_dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %ld %ld", name, &hits, &missed) != 3)
			continue;
		for (i = 0; i < NR_COUNTERS - C_RMAP_FIRST; i++) {
			if (kp_made[i] && !strcmp(name, counter_name[C_RMAP_FIRST + i]))
				c[C_RMAP_FIRST + i] = missed ? -1 : hits;
		}
	}
	if (f)
		fclose(f);
}

/*
 * Every counter now, -1 where the kernel has none. mthp_kb: the THP size
 * whose hugepages-<size>kB/stats/ to read, 0 for none.
 */
static void counters_read(long *c, unsigned long mthp_kb)
{
	char line[256], path[200];
	FILE *f = fopen("/proc/vmstat", "r");
	int i;

	for (i = 0; i < NR_COUNTERS; i++)
		c[i] = -1;
	while (f && fgets(line, sizeof(line), f)) {
		char name[128];
		long v;

		if (sscanf(line, "%127s %ld", name, &v) != 2)
			continue;
		for (i = C_TLB_FLUSH; i < C_RMAP_FIRST; i++) {
			if (i != C_MTHP_SPLIT && i != C_MTHP_SPLIT_FAILED &&
			    !strcmp(name, counter_name[i]))
				c[i] = v;
		}
	}
	if (f)
		fclose(f);
	c[C_TLB_IPI] = tlb_from_interrupts ? tlb_interrupts() : c[C_TLB_RECEIVED];
	kp_read(c);
	if (mthp_kb) {
		snprintf(path, sizeof(path), THP_SYSFS "/hugepages-%lukB/stats/split", mthp_kb);
		c[C_MTHP_SPLIT] = read_long(path);
		snprintf(path, sizeof(path), THP_SYSFS "/hugepages-%lukB/stats/split_failed", mthp_kb);
		c[C_MTHP_SPLIT_FAILED] = read_long(path);
	}
}

/* One info line: where tlb_ipi comes from and which counters are missing. */
static void counters_info(void)
{
	long c[NR_COUNTERS];
	bool first = true;
	int i;

	tlb_from_interrupts = tlb_interrupts() >= 0;
	kp_init();
	counters_read(c, MTHP_SZ >> 10);
	printf("{\"tag\":\"%s\",\"info\":\"counts\",\"tlb_source\":\"%s\",\"missing\":[",
	       tag, tlb_from_interrupts ? "/proc/interrupts TLB" :
	       c[C_TLB_IPI] >= 0 ? "vmstat nr_tlb_remote_flush_received" : "none");
	for (i = 0; i < NR_COUNTERS; i++) {
		if (c[i] >= 0 || (i >= C_RMAP_FIRST && !kp_wanted))
			continue;
		printf("%s\"%s\"", first ? "" : ",", counter_name[i]);
		first = false;
	}
	printf("],\"mthp_stats\":\"hugepages-<size>kB/stats/split and split_failed of the "
	       "run's THP or mTHP size; none for 4KB pages and hugetlb\"}\n");
	fflush(stdout);
}

/* The deltas of every run of one figure. */
struct tally {
	unsigned long mthp_kb;
	int n;
	long before[NR_COUNTERS];
	long delta[NR_COUNTERS][MAX_RUNS];
	bool have[NR_COUNTERS];
	unsigned long moved[MAX_RUNS];
};

/* folio_sz: the run's folio size; THP and mTHP runs read their size's stats */
static struct tally *tally_new(unsigned long folio_sz, bool hugetlb)
{
	struct tally *t = calloc(1, sizeof(*t));
	int i;

	if (!t)
		return NULL;
	t->mthp_kb = hugetlb || folio_sz <= page_size ? 0 : folio_sz >> 10;
	for (i = 0; i < NR_COUNTERS; i++)
		t->have[i] = true;
	return t;
}

static void tally_begin(struct tally *t)
{
	if (t)
		counters_read(t->before, t->mthp_kb);
}

/* Run r moved bytes; a counter missing before or after is left out. */
static void tally_end(struct tally *t, int r, unsigned long bytes)
{
	long now_c[NR_COUNTERS];
	int i;

	if (!t || r >= MAX_RUNS)
		return;
	counters_read(now_c, t->mthp_kb);
	for (i = 0; i < NR_COUNTERS; i++) {
		if (t->before[i] < 0 || now_c[i] < 0)
			t->have[i] = false;
		else
			t->delta[i][r] = now_c[i] - t->before[i];
	}
	t->moved[r] = bytes;
	if (r + 1 > t->n)
		t->n = r + 1;
}

/* The "counts" member of a figure's JSON line, malloc'ed ("" without runs). */
static char *tally_json(const struct tally *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int i, r;

	if (!t || !t->n)
		return strdup("");
	f = open_memstream(&buf, &len);
	if (!f)
		return strdup("");
	fprintf(f, "\"counts\":{\"tlb_source\":\"%s\",\"mthp_kb\":%lu,\"moved_bytes\":[",
		tlb_from_interrupts ? "/proc/interrupts TLB" : "vmstat nr_tlb_remote_flush_received",
		t->mthp_kb);
	for (r = 0; r < t->n; r++)
		fprintf(f, "%s%lu", r ? "," : "", t->moved[r]);
	fprintf(f, "]");
	for (i = 0; i < NR_COUNTERS; i++) {
		bool mthp = i == C_MTHP_SPLIT || i == C_MTHP_SPLIT_FAILED;

		if (!t->have[i] || (mthp && !t->mthp_kb))
			continue;
		fprintf(f, ",\"%s\":[", counter_name[i]);
		for (r = 0; r < t->n; r++)
			fprintf(f, "%s%ld", r ? "," : "", t->delta[i][r]);
		fprintf(f, "]");
	}
	fprintf(f, "}");
	fclose(f);
	return buf;
}

/* ---- THP sysfs knobs, restored at exit ---- */

struct knob {
	char path[160], old[32];
	bool saved;
};
static struct knob knob_pmd, knob_64k;

static bool knob_write(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs(val, f) >= 0;
	return (fclose(f) == 0) && ok;
}

static bool knob_set(struct knob *k, const char *val)
{
	if (!k->saved) {
		char buf[128], *a, *b;
		FILE *f = fopen(k->path, "r");

		if (!f || !fgets(buf, sizeof(buf), f)) {
			if (f)
				fclose(f);
			return false;
		}
		fclose(f);
		a = strchr(buf, '[');
		b = a ? strchr(a, ']') : NULL;
		if (!b || b - a > (long)sizeof(k->old))
			return false;
		memcpy(k->old, a + 1, b - a - 1);
		k->old[b - a - 1] = '\0';
		k->saved = true;
	}
	return knob_write(k->path, val);
}

static void precopy_restore(void);
static void tr_restore(void);

static void knobs_restore(void)
{
	precopy_restore();
	tr_restore();
	kp_restore();
	if (knob_pmd.saved)
		knob_write(knob_pmd.path, knob_pmd.old);
	if (knob_64k.saved)
		knob_write(knob_64k.path, knob_64k.old);
}

static long stat_64k(const char *name)
{
	char path[200];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), THP_SYSFS "/hugepages-64kB/stats/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Which anonymous folio size the next faults get: 0 (4KB), PMD_SZ or MTHP_SZ. */
static bool thp_mode(unsigned long folio_sz)
{
	return knob_set(&knob_pmd, folio_sz == PMD_SZ ? "always" : "never") &&
	       knob_set(&knob_64k, folio_sz == MTHP_SZ ? "always" : "never");
}

/* ---- mappings ---- */

struct kind {
	const char *name;
	unsigned long folio_sz;
	int mmap_flags;		/* hugetlb flags, 0 for anonymous THP */
};

static void *map_aligned(unsigned long len, unsigned long align)
{
	char *p = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((unsigned long)p + align - 1) & ~(align - 1));
	if (a > p)
		munmap(p, a - p);
	munmap(a + len, p + align - a);
	return a;
}

/* len bytes of kind k, faulted in on node 0 and filled; NULL if impossible. */
static void *map_kind(const struct kind *k, unsigned long len, unsigned int seed)
{
	void *p;

	if (k->mmap_flags) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | k->mmap_flags, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
	} else {
		if (!thp_mode(k->folio_sz))
			return NULL;
		p = map_aligned(len, k->folio_sz > page_size ? k->folio_sz : page_size);
		if (!p)
			return NULL;
		madvise(p, len, k->folio_sz == page_size ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
	}
	if (mbind_node(p, len, 0)) {
		munmap(p, len);
		return NULL;
	}
	fill(p, len, seed);
	return p;
}

/*
 * The share of large folios still whole, for "%.3f": below 1.000 whenever
 * one was not, so that 1.000 means every one (the report checks it against
 * the split counters).
 */
static double whole_share(long whole, long all)
{
	double v = all ? (double)whole / all : 0;

	return whole < all && v > 0.999 ? 0.999 : v;
}

/* ---- a second thread of the mm, busy on another CPU than the mover ---- */

/*
 * While a thread of the mm runs on another CPU, every TLB flush of the
 * mover's changes must reach that CPU: an IPI, which the counts then show.
 * Without it the mm is live on the mover's CPU only and a flush is local.
 * The move_pages() and UFFDIO_MOVE figures all run with it: the mover pinned
 * to MOVER_CPU, the busy thread to BUSY_CPU ("busy_threads", "mover_cpu" and
 * "busy_cpu" in their JSON lines).
 */
#define MOVER_CPU	0
#define BUSY_CPU	1

static volatile int busy_stop, busy_on, busy_cpu;
static pthread_t busy_th;
static cpu_set_t mover_mask;	/* the mover's affinity before mover_pin() */

/* Bind the calling thread to @cpu: whether it now runs there */
static bool pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !sched_setaffinity(0, sizeof(set), &set) && sched_getcpu() == cpu;
}

static void *busy_loop(void *arg)
{
	static volatile unsigned long word;

	(void)arg;
	if (!pin_self(busy_cpu)) {
		busy_on = -1;
		return NULL;
	}
	busy_on = 1;
	while (!busy_stop)
		word++;
	return NULL;
}

/* Pin the mover to MOVER_CPU; false (and an error line) if not. */
static bool mover_pin(const char *what)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(mover_mask), &mover_mask)) {
		error("%s: cannot read the mover's CPU affinity (errno %d)", what, errno);
		return false;
	}
	CPU_ZERO(&set);
	CPU_SET(MOVER_CPU, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		error("%s: cannot pin the mover to CPU %d (errno %d)", what, MOVER_CPU, errno);
		return false;
	}
	return true;
}

static void mover_unpin(void)
{
	sched_setaffinity(0, sizeof(mover_mask), &mover_mask);
}

/* Pin the mover, start the busy thread on cpu; false (and an error line) if not. */
static bool busy_start(const char *what, int cpu)
{
	if (!mover_pin(what))
		return false;
	busy_stop = 0;
	busy_on = 0;
	busy_cpu = cpu;
	if (pthread_create(&busy_th, NULL, busy_loop, NULL)) {
		error("%s: cannot start the busy thread", what);
		mover_unpin();
		return false;
	}
	while (!busy_on)	/* until it runs on its CPU, in this mm */
		;
	if (busy_on < 0) {
		pthread_join(busy_th, NULL);
		error("%s: cannot run the busy thread on CPU %d", what, cpu);
		mover_unpin();
		return false;
	}
	return true;
}

static void busy_end(void)
{
	busy_stop = 1;
	pthread_join(busy_th, NULL);
	mover_unpin();
}

#define BUSY_JSON	"\"busy_threads\":1,\"mover_cpu\":%d,\"busy_cpu\":%d"

/* ---- move_pages() ---- */

/* The counters around the timed call go to run r of tally tc. */
static double move_to(void *p, unsigned long len, unsigned long step, int node,
		      const char *what, struct tally *tc, int r)
{
	unsigned long i, n = len / step;
	void **pages = malloc(n * sizeof(*pages));
	int *nodes = malloc(n * sizeof(*nodes)), *status = malloc(n * sizeof(*status));
	double t;
	long ret;

	for (i = 0; i < n; i++) {
		pages[i] = (char *)p + i * step;
		nodes[i] = node;
		status[i] = -1;
	}
	tally_begin(tc);
	t = now();
	ret = syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE);
	t = now() - t;
	tally_end(tc, r, len);
	if (ret)
		error("%s: move_pages() to node %d returned %ld (errno %d)", what, node, ret, errno);
	/* Ask where every base page is now, not only the folios' first pages */
	if (!ret) {
		unsigned long np = len / page_size;
		void **all = malloc(np * sizeof(*all));
		int *where = malloc(np * sizeof(*where));

		for (i = 0; i < np; i++)
			all[i] = (char *)p + i * page_size;
		if (syscall(SYS_move_pages, 0, np, all, NULL, where, 0))
			error("%s: cannot query the nodes of the pages", what);
		for (i = 0; i < np; i++) {
			if (where[i] != node) {
				error("%s: page %lu on node %d after a move to node %d",
				      what, i, where[i], node);
				break;
			}
		}
		free(all);
		free(where);
	}
	free(pages);
	free(nodes);
	free(status);
	return ret ? -1 : t;
}

static void bench_move_pages(const struct kind *k, int nruns)
{
	double *t01 = calloc(nruns, sizeof(double)), *t10 = calloc(nruns, sizeof(double));
	long large01 = 0, large10 = 0, nfolios = size / k->folio_sz;
	struct tally *c01 = tally_new(k->folio_sz, k->mmap_flags),
		     *c10 = tally_new(k->folio_sz, k->mmap_flags);
	char *extra = NULL, *j01 = NULL, *j10 = NULL;
	int r;

	if (!busy_start(k->name, BUSY_CPU))
		goto out_free;
	for (r = 0; r < nruns; r++) {
		void *p = map_kind(k, size, r);

		if (!p) {
			skip("move_pages", k->name, k->mmap_flags ?
			     "no free hugetlb pages of this size on node 0" :
			     "cannot set the THP size in sysfs");
			goto out;
		}
		if (!k->mmap_flags && count_large(p, size, k->folio_sz) != nfolios) {
			skip("move_pages", k->name, "the kernel did not back the buffer with folios of this size");
			munmap(p, size);
			goto out;
		}
		t01[r] = move_to(p, size, k->folio_sz, 1, k->name, c01, r);
		check(k->name, p, size, r);
		if (!k->mmap_flags)
			large01 += count_large(p, size, k->folio_sz);
		t10[r] = move_to(p, size, k->folio_sz, 0, k->name, c10, r);
		check(k->name, p, size, r);
		if (!k->mmap_flags)
			large10 += count_large(p, size, k->folio_sz);
		munmap(p, size);
		if (t01[r] <= 0 || t10[r] <= 0)
			goto out;
		t01[r] = size / t01[r] / (1UL << 30);
		t10[r] = size / t10[r] / (1UL << 30);
	}
	/* Large folios still whole after the move: 1.0 unless the kernel split them */
	j01 = tally_json(c01);
	j10 = tally_json(c10);
	if (asprintf(&extra, "\"folio_bytes\":%lu,\"whole_after\":%.3f," BUSY_JSON "%s%s",
		     k->folio_sz, k->mmap_flags ? 1.0 : whole_share(large01, nfolios * nruns),
		     MOVER_CPU, BUSY_CPU, j01 && *j01 ? "," : "", j01 ? j01 : "") < 0)
		extra = NULL;
	emit("move_pages", k->name, "0->1", "GiB/s", t01, nruns, extra);
	free(extra);
	if (asprintf(&extra, "\"folio_bytes\":%lu,\"whole_after\":%.3f," BUSY_JSON "%s%s",
		     k->folio_sz, k->mmap_flags ? 1.0 : whole_share(large10, nfolios * nruns),
		     MOVER_CPU, BUSY_CPU, j10 && *j10 ? "," : "", j10 ? j10 : "") < 0)
		extra = NULL;
	emit("move_pages", k->name, "1->0", "GiB/s", t10, nruns, extra);
	free(extra);
out:
	busy_end();
out_free:
	free(j01);
	free(j10);
	free(c01);
	free(c10);
	free(t01);
	free(t10);
}

/* ---- UFFDIO_MOVE ---- */

static void bench_uffd_move(const struct kind *k)
{
	double *v = calloc(runs, sizeof(double));
	long nfolios = size / k->folio_sz, whole = 0, splits = 0;
	struct tally *tc = tally_new(k->folio_sz, false);
	char *extra = NULL, *counts = NULL;
	int r, uffd;

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0) {
		skip("uffd_move", k->name, "userfaultfd() failed");
		free(v);
		free(tc);
		return;
	}
	{
		struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MOVE };

		if (ioctl(uffd, UFFDIO_API, &api)) {
			skip("uffd_move", k->name, "no UFFD_FEATURE_MOVE");
			close(uffd);
			free(v);
			free(tc);
			return;
		}
	}
	if (!busy_start(k->name, BUSY_CPU)) {
		close(uffd);
		free(v);
		free(tc);
		return;
	}
	for (r = 0; r < runs; r++) {
		char *src = map_kind(k, size, 100 + r), *dst;
		struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
		struct uffdio_move mv = { 0 };
		long split0 = stat_64k("split");
		unsigned long done = 0;
		double t;

		if (!src) {
			skip("uffd_move", k->name, "cannot set the THP size in sysfs");
			goto out;
		}
		if (k->folio_sz > page_size && count_large(src, size, k->folio_sz) != nfolios) {
			skip("uffd_move", k->name, "the kernel did not back the buffer with folios of this size");
			munmap(src, size);
			goto out;
		}
		dst = map_aligned(size, PMD_SZ);
		reg.range.start = (unsigned long)dst;
		reg.range.len = size;
		if (!dst || ioctl(uffd, UFFDIO_REGISTER, &reg)) {
			error("%s: cannot register the destination", k->name);
			munmap(src, size);
			goto out;
		}
		tally_begin(tc);
		t = now();
		while (done < size) {
			mv.dst = (unsigned long)dst + done;
			mv.src = (unsigned long)src + done;
			mv.len = size - done;
			mv.mode = 0;
			mv.move = 0;
			if (ioctl(uffd, UFFDIO_MOVE, &mv) && errno != EAGAIN) {
				error("%s: UFFDIO_MOVE failed at byte %lu (errno %d)", k->name, done, errno);
				break;
			}
			if (mv.move > 0)
				done += mv.move;
		}
		t = now() - t;
		tally_end(tc, r, done);
		if (done == size) {
			check(k->name, dst, size, 100 + r);
			v[r] = size / t / (1UL << 30);
			if (k->folio_sz > page_size)
				whole += count_large(dst, size, k->folio_sz);
			splits += stat_64k("split") - split0;
		}
		munmap(src, size);
		munmap(dst, size);
		if (done != size)
			goto out;
	}
	counts = tally_json(tc);
	if (asprintf(&extra, "\"folio_bytes\":%lu,\"whole_after\":%.3f,\"splits_per_run\":%.1f,"
		     BUSY_JSON "%s%s", k->folio_sz,
		     k->folio_sz > page_size ? whole_share(whole, nfolios * runs) : 1.0,
		     (double)splits / runs, MOVER_CPU, BUSY_CPU,
		     counts && *counts ? "," : "", counts ? counts : "") < 0)
		extra = NULL;
	emit("uffd_move", k->name, "same node", "GiB/s", v, runs, extra);
	free(extra);
	free(counts);
out:
	busy_end();
	close(uffd);
	free(tc);
	free(v);
}

/* ---- trace events: each folio's migration window seen inside the kernel ---- */


/*
 * A folio's migration entries: set when it is unmapped, removed when it is
 * mapped again (PTE-mapped: one event per page; PMD-mapped: one per folio).
 * And the start of each migrate_pages() (no address: the bench moves one
 * folio per move_pages() call, so the call that moved a folio is the last
 * one to start before its first set event), which comes before anything the
 * migration does to the folio, the pre-copy's write-protect included.
 */
static const char *const trace_event[] = {
	"migrate/set_migration_pte", "thp/set_migration_pmd",
	"migrate/remove_migration_pte", "thp/remove_migration_pmd",
	"migrate/mm_migrate_pages_start",
};
#define NR_TRACE_EVENTS	5
#define NR_SET_EVENTS	2	/* trace_event[0..2) set, */
#define NR_ENTRY_EVENTS	4	/* [2..4) remove */
#define EV_CALL_START	4	/* of a move_pages() call: reason MR_SYSCALL */

/*
 * Clocks tried in this order, the first one whose steps are fine enough is
 * used: clocks that agree across CPUs first (the mover may change CPU inside
 * move_pages()). A clock counting jiffies, or one resting on a clocksource
 * that does, steps by milliseconds.
 */
static const char *const trace_clock_pref[] = { "mono", "global", "boot", "local", "perf" };
#define TRACE_STEP_MAX_US	50	/* a jiffy is 1000 us or more */
#define TRACE_PROBES		200

static struct {
	char dir[64], clock[16], tried[200], why_buf[320];
	const char *why;		/* no trace, and why; NULL when usable */
	double step_us;			/* smallest step seen between probe markers */
	char old_clock[16], old_on[16];
	long old_kb;
	bool saved;
} tr = { .why = "not set up" };

static bool tr_write(const char *file, const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", tr.dir, file);
	return knob_write(path, val);
}

/* The whole of tracefs file file, malloc'ed and NUL-terminated, or NULL. */
static char *tr_read(const char *file)
{
	char path[160], *buf = NULL, *bigger;
	size_t n = 0, cap = 0;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tr.dir, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 1UL << 20;
			bigger = realloc(buf, cap);
			if (!bigger)
				goto fail;
			buf = bigger;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (!r)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

/*
 * The time stamp of trace line line in microseconds (the text of "trace"
 * gives a clock counting in ns as SECONDS.MICROSECONDS), and in *rest what
 * follows it ("EVENT: FIELDS"); -1 when the line has none.
 */
static long long tr_stamp(const char *line, const char **rest)
{
	const char *q = line, *s, *d;

	while ((q = strstr(q, ": "))) {
		for (s = q; s > line && s[-1] >= '0' && s[-1] <= '9'; s--)
			;
		if (q - s == 6 && s - line >= 2 && s[-1] == '.' && s[-2] >= '0' && s[-2] <= '9') {
			for (d = s - 1; d > line && d[-1] >= '0' && d[-1] <= '9'; d--)
				;
			*rest = q + 2;
			return strtoll(d, NULL, 10) * 1000000LL + strtoll(s, NULL, 10);
		}
		q += 2;
	}
	return -1;
}

/* Events the ring buffer dropped since the last clear ("trace"'s header). */
static long tr_lost(const char *buf)
{
	const char *h = strstr(buf, "# entries-in-buffer/entries-written:");
	unsigned long in, written;

	if (!h || sscanf(h, "# entries-in-buffer/entries-written: %lu/%lu", &in, &written) != 2)
		return -1;
	return written - in;
}

/*
 * Clock clock's smallest step, in microseconds, between TRACE_PROBES markers
 * written back to back: at most the clock's resolution as "trace" prints it
 * (1 us). -1 when no two markers differed.
 */
static double tr_probe(const char *clock)
{
	long long t, prev = -1, step = -1;
	char path[160], *buf, *line, *save;
	const char *rest;
	int fd, i;

	if (!tr_write("trace_clock", clock) || !tr_write("trace", "") ||
	    !tr_write("tracing_on", "1"))
		return -1;
	snprintf(path, sizeof(path), "%s/trace_marker", tr.dir);
	fd = open(path, O_WRONLY);
	for (i = 0; fd >= 0 && i < TRACE_PROBES; i++)
		if (write(fd, "movebench-clock", 15) != 15)
			break;
	if (fd >= 0)
		close(fd);
	tr_write("tracing_on", "0");
	buf = tr_read("trace");
	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || !strstr(line, "movebench-clock"))
			continue;
		t = tr_stamp(line, &rest);
		if (t < 0)
			continue;
		if (prev >= 0 && t > prev && (step < 0 || t - prev < step))
			step = t - prev;
		prev = t;
	}
	free(buf);
	tr_write("trace", "");
	return step;
}

/* Put tracefs back as it was (at exit). */
static void tr_restore(void)
{
	char val[24];
	int i;

	if (!tr.saved)
		return;
	for (i = 0; i < NR_TRACE_EVENTS; i++) {
		char f[96];

		snprintf(f, sizeof(f), "events/%s/enable", trace_event[i]);
		tr_write(f, "0");
	}
	tr_write("trace", "");
	if (tr.old_clock[0])
		tr_write("trace_clock", tr.old_clock);
	if (tr.old_kb > 0) {
		snprintf(val, sizeof(val), "%ld", tr.old_kb);
		tr_write("buffer_size_kb", val);
	}
	if (tr.old_on[0])
		tr_write("tracing_on", tr.old_on);
	tr.saved = false;
}

/*
 * Find tracefs (mount it on /sys/kernel/tracing when nothing is there), check
 * the events, pick the trace clock; tr.why says why not when it fails.
 * Prints a "trace" info line either way.
 */
static void tr_init(void)
{
	char buf[256], path[160], *a, *b;
	size_t k, used = 0;
	FILE *f;
	int i;

	tr.why = NULL;
	if (!tracefs_find(tr.dir, sizeof(tr.dir))) {
		tr.why = "no tracefs at " TRACEFS " and none could be mounted there "
			 "(a kernel without CONFIG_FTRACE?)";
		goto out;
	}
	for (i = 0; i < NR_TRACE_EVENTS; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/enable", tr.dir, trace_event[i]);
		if (access(path, W_OK)) {
			snprintf(tr.why_buf, sizeof(tr.why_buf), "no trace event %s in %s/events",
				 trace_event[i], tr.dir);
			tr.why = tr.why_buf;
			goto out;
		}
	}
	/* What to put back at exit */
	snprintf(path, sizeof(path), "%s/trace_clock", tr.dir);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		tr.why = "cannot read trace_clock";
		goto out;
	}
	fclose(f);
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b && b - a - 1 < (long)sizeof(tr.old_clock))
		snprintf(tr.old_clock, sizeof(tr.old_clock), "%.*s", (int)(b - a - 1), a + 1);
	snprintf(path, sizeof(path), "%s/tracing_on", tr.dir);
	snprintf(tr.old_on, sizeof(tr.old_on), "%ld", read_long(path));
	snprintf(path, sizeof(path), "%s/buffer_size_kb", tr.dir);
	tr.old_kb = read_long(path);
	tr.saved = true;
	/* Two events per PMD-mapped folio; room for 512 each were it PTE-mapped */
	if (tr.old_kb < 8192 && !tr_write("buffer_size_kb", "8192"))
		tr.old_kb = -1;
	/* The clock: the first of the preferred ones this kernel has that steps finely */
	for (k = 0; k < sizeof(trace_clock_pref) / sizeof(trace_clock_pref[0]); k++) {
		const char *c = trace_clock_pref[k];
		size_t n = strlen(c);
		char *at = buf;
		double step;

		/* listed as a word: "[local] global counter ..." */
		while ((at = strstr(at, c)) && ((at > buf && at[-1] != ' ' && at[-1] != '[') ||
						(at[n] && at[n] != ' ' && at[n] != ']' && at[n] != '\n')))
			at += n;
		if (!at)
			continue;
		step = tr_probe(c);
		if (step < 0)
			used += snprintf(tr.tried + used, sizeof(tr.tried) - used,
					 "%s%s: no step seen", used ? "; " : "", c);
		else
			used += snprintf(tr.tried + used, sizeof(tr.tried) - used,
					 "%s%s: %.0f us", used ? "; " : "", c, step);
		if (used >= sizeof(tr.tried))
			used = sizeof(tr.tried) - 1;
		if (step > 0 && step <= TRACE_STEP_MAX_US) {
			snprintf(tr.clock, sizeof(tr.clock), "%s", c);
			tr.step_us = step;
			break;
		}
	}
	if (!tr.clock[0]) {
		snprintf(tr.why_buf, sizeof(tr.why_buf),
			 "no trace clock steps by %d us or less (smallest step between markers: %s)",
			 TRACE_STEP_MAX_US, tr.tried[0] ? tr.tried : "no clock of ours listed");
		tr.why = tr.why_buf;
		goto out;
	}
	if (!tr_write("trace_clock", tr.clock)) {
		tr.why = "cannot set trace_clock";
		goto out;
	}
out:
	printf("{\"tag\":\"%s\",\"info\":\"trace\",\"dir\":\"%s\",\"clock\":\"%s\","
	       "\"clock_step_us\":%.3g,\"clocks_tried\":\"%s\",\"usable\":%s%s%s%s}\n",
	       tag, tr.dir, tr.clock, tr.step_us, tr.tried, tr.why ? "false" : "true",
	       tr.why ? ",\"why\":\"" : "", tr.why ? tr.why : "", tr.why ? "\"" : "");
	fflush(stdout);
}

/* An empty buffer, the events on, tracing on. */
static bool tr_begin(void)
{
	int i;

	if (tr.why || !tr_write("trace", ""))
		return false;
	for (i = 0; i < NR_TRACE_EVENTS; i++) {
		char f[96];

		snprintf(f, sizeof(f), "events/%s/enable", trace_event[i]);
		if (!tr_write(f, "1"))
			return false;
	}
	return tr_write("tracing_on", "1");
}

/* Tracing off, the events off; the trace's text (malloc'ed) or NULL. */
static char *tr_end(void)
{
	int i;

	tr_write("tracing_on", "0");
	for (i = 0; i < NR_TRACE_EVENTS; i++) {
		char f[96];

		snprintf(f, sizeof(f), "events/%s/enable", trace_event[i]);
		tr_write(f, "0");
	}
	return tr_read("trace");
}

/*
 * Per folio of the n PMD_SZ folios from address start, the time in us from
 * its first set_migration_* event to its last remove_migration_* one, into
 * win[], and from the start of the migrate_pages() call that moved it to that
 * remove into call[] (-1 for each when the trace has no such start); ev[]
 * counts the events of the range by kind (trace_event order; call starts of
 * move_pages() anywhere). Every folio must have a set and a remove, the
 * remove last, and no event may have been lost: else an error line and
 * false. buf is the trace's text (cut up).
 */
static bool tr_windows(char *buf, unsigned long start, unsigned long n, double *win,
		       double *call, long *ev)
{
	long long *first = malloc(n * sizeof(*first)), *last = malloc(n * sizeof(*last));
	long long *calls = NULL, *bigger;
	unsigned long i, nr_calls = 0, cap = 0, c = 0;
	char *line, *save;
	bool ok = false;
	long lost = tr_lost(buf);

	if (!first || !last)
		goto out;
	if (lost) {
		error("kernel_window: the trace lost %ld events (buffer_size_kb too small?)", lost);
		goto out;
	}
	for (i = 0; i < n; i++)
		first[i] = last[i] = -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *rest, *addr;
		long long t;
		unsigned long a;
		int e;

		if (line[0] == '#')
			continue;
		t = tr_stamp(line, &rest);
		if (t < 0)
			continue;
		for (e = 0; e < NR_TRACE_EVENTS; e++) {
			const char *name = strchr(trace_event[e], '/') + 1;
			size_t len = strlen(name);

			if (!strncmp(rest, name, len) && rest[len] == ':')
				break;
		}
		if (e == EV_CALL_START) {
			/* The trace is in time order: so is calls[] */
			if (!strstr(rest, "reason=syscall_or_cpuset"))
				continue;
			if (nr_calls == cap) {
				cap = cap ? 2 * cap : 1024;
				bigger = realloc(calls, cap * sizeof(*calls));
				if (!bigger)
					goto out;
				calls = bigger;
			}
			calls[nr_calls++] = t;
			ev[e]++;
			continue;
		}
		addr = e < NR_ENTRY_EVENTS ? strstr(rest, "addr=") : NULL;
		if (!addr)
			continue;
		a = strtoul(addr + 5, NULL, 16);
		if (a < start || a >= start + n * PMD_SZ)
			continue;
		ev[e]++;
		i = (a - start) / PMD_SZ;
		if (e < NR_SET_EVENTS && (first[i] < 0 || t < first[i]))
			first[i] = t;
		if (e >= NR_SET_EVENTS && t > last[i])
			last[i] = t;
	}
	for (i = 0; i < n; i++) {
		if (first[i] < 0 || last[i] < 0 || last[i] < first[i]) {
			error("kernel_window: folio %lu (of %lu) has %s in the trace", i, n,
			      first[i] < 0 && last[i] < 0 ? "no migration event" :
			      first[i] < 0 ? "no set_migration event" :
			      last[i] < 0 ? "no remove_migration event" :
			      "its last removal before its first set");
			goto out;
		}
		win[i] = last[i] - first[i];
		/* The last call to start before the folio's first set event */
		while (c < nr_calls && calls[c] <= first[i])
			c++;
		call[i] = c ? last[i] - calls[c - 1] : -1;
	}
	ok = true;
out:
	free(calls);
	free(first);
	free(last);
	return ok;
}

/* ---- the window: how long a 2MB THP is out of reach while it migrates ---- */

/*
 * The window figures' kinds: who touches the folio while it moves (the
 * "toucher", pinned to TOUCH_CPU): nobody, a reader, a writer, a dirtier.
 * In every kind, where the guest has a third CPU, a spinner of the mm runs
 * on SPIN_CPU without touching the folio: with the mm live there, every TLB
 * flush of the migration (and of a pre-copy's write-protect) is an IPI, and
 * counted, also while the toucher sleeps on the migration entry and its CPU,
 * idle, is left out of flushes (x86's lazy TLB mode). The mover is pinned
 * to MOVER_CPU.
 */
enum { WIN_IDLE, WIN_READER, WIN_WRITER, WIN_DIRTIER };
static const char *const win_toucher[] = { "none", "reader", "writer", "dirtier" };
#define TOUCH_CPU	1
#define SPIN_CPU	2

/* The toucher touches folio win_seq of the buffer at win_base */
static char *win_base;
static volatile unsigned long win_seq, win_seen;
static volatile int win_stop, win_on;
static int win_mode;
static unsigned int win_seed;		/* the buffer's fill() */
static double *win_worst;		/* per folio: the longest access, in s */
static double *win_worst_faulting;	/* and the longest of those that faulted */
static long *win_faults;		/* per folio: the toucher's page faults */
static unsigned long win_touches, win_bad;	/* accesses; reads of a wrong word */

/* The calling thread's page faults so far, minor and major */
static long thread_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return ru.ru_minflt + ru.ru_majflt;
}

/*
 * Touches folio win_seq over and over, each access timed and its own page
 * faults counted around it (outside the timing), per folio. A read goes on
 * through a pre-copy's write-protect and waits on the migration entry only;
 * a write faults on both. An access that took no fault was not held up by
 * the migration: only by the scheduler (under an emulator, the host's too),
 * so the longest access that faulted is kept apart.
 */
static void *toucher(void *arg)
{
	(void)arg;
	if (!pin_self(TOUCH_CPU)) {
		win_on = -1;
		return NULL;
	}
	win_on = 1;
	while (!win_stop) {
		unsigned long seq = win_seq, w = seq % (PMD_SZ / 8), off;
		/* volatile: two XORs of a plain char would compile to nothing */
		volatile char *p = win_base + seq * PMD_SZ;
		long faults = thread_faults();
		uint64_t v = 0;
		double t = now();

		if (win_mode == WIN_DIRTIER) {
			/* Every line written (and put back); no figure times it */
			for (off = 0; off < PMD_SZ; off += 64) {
				p[off] ^= 1;
				p[off] ^= 1;
			}
		} else if (win_mode == WIN_READER) {
			v = ((volatile uint64_t *)p)[w];
		} else {
			p[seq % PMD_SZ] ^= 1;
			p[seq % PMD_SZ] ^= 1;
		}
		t = now() - t;
		faults = thread_faults() - faults;
		win_faults[seq] += faults;
		if (t > win_worst[seq])
			win_worst[seq] = t;
		if (faults && t > win_worst_faulting[seq])
			win_worst_faulting[seq] = t;
		/* Nobody writes in reader runs: a read sees the filled word, moving or not */
		if (win_mode == WIN_READER && v != word_of(seq * (PMD_SZ / 8) + w, win_seed))
			win_bad++;
		win_touches++;
		/* What this access found is written before the mover sees it done */
		__atomic_thread_fence(__ATOMIC_RELEASE);
		win_seen = seq + 1;
	}
	return NULL;
}

/*
 * The mover pinned, the spinner (spin) and the toucher of kind mode (none
 * for WIN_IDLE) running on their CPUs, the toucher on folio 0; false (an
 * error line, and all undone) if not.
 */
static bool win_threads_start(pthread_t *th, int mode, bool spin)
{
	if (!(spin ? busy_start("window", SPIN_CPU) : mover_pin("window")))
		return false;
	if (mode == WIN_IDLE)
		return true;
	win_stop = 0;
	win_seq = 0;
	win_seen = 0;
	win_on = 0;
	win_mode = mode;
	if (pthread_create(th, NULL, toucher, NULL)) {
		error("window: cannot start the %s thread", win_toucher[mode]);
		goto undo;
	}
	while (!win_on)		/* until it runs on its CPU */
		;
	if (win_on > 0)
		return true;
	pthread_join(*th, NULL);
	error("window: cannot run the %s thread on CPU %d", win_toucher[mode], TOUCH_CPU);
undo:
	if (spin)
		busy_end();
	else
		mover_unpin();
	return false;
}

static void win_threads_end(pthread_t *th, int mode, bool spin)
{
	if (mode != WIN_IDLE) {
		win_stop = 1;
		pthread_join(*th, NULL);
	}
	if (spin)
		busy_end();
	else
		mover_unpin();
}

/*
 * The members both window figures of a run carry (malloc'ed, NULL if out
 * of memory): which thread ran on which CPU (-1: no such thread) and, with
 * a toucher, its page faults on each of the first n folios, in folio order.
 */
static char *win_json(int mode, bool spin, unsigned long n)
{
	char *buf = NULL;
	size_t len = 0;
	unsigned long i;
	long sum = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "\"toucher\":\"%s\",\"mover_cpu\":%d,\"toucher_cpu\":%d,\"spinner\":%s,"
		"\"spinner_cpu\":%d,\"online_cpus\":%ld", win_toucher[mode], MOVER_CPU,
		mode == WIN_IDLE ? -1 : TOUCH_CPU, spin ? "true" : "false", spin ? SPIN_CPU : -1,
		sysconf(_SC_NPROCESSORS_ONLN));
	if (mode != WIN_IDLE) {
		for (i = 0; i < n; i++)
			sum += win_faults[i];
		fprintf(f, ",\"toucher_accesses\":%lu,\"toucher_faults\":%ld,"
			"\"toucher_faults_per_folio\":[", win_touches, sum);
		for (i = 0; i < n; i++)
			fprintf(f, "%s%ld", i ? "," : "", win_faults[i]);
		fprintf(f, "]");
	}
	fclose(f);
	return buf;
}

/*
 * ",\"PREFIXmedian_us\":...,p99,max" of the n seconds in v (left as they are)
 * into buf, in us; false if out of memory.
 */
static bool summary_json(char *buf, size_t len, const char *prefix, const double *v,
			 unsigned long n)
{
	double *s = malloc(n * sizeof(*s));

	if (!s)
		return false;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	snprintf(buf, len, ",\"%smedian_us\":%.3f,\"%sp99_us\":%.3f,\"%smax_us\":%.3f",
		 prefix, s[n / 2] * 1e6, prefix, s[(n * 99) / 100] * 1e6, prefix, s[n - 1] * 1e6);
	free(s);
	return true;
}

/*
 * The toucher's "window" figure of kind kind: per folio, in folio order,
 * its longest access (values) and its longest access that faulted
 * ("faulting_us", 0 where none did), in us, over n folios; lat and latf are
 * in seconds, and turned into us. members: win_json()'s.
 */
static void window_emit(const char *kind, double *lat, double *latf, unsigned long n,
			bool traced, const char *members)
{
	char all[160], flt[160], *extra = NULL, *list = NULL;
	size_t len = 0;
	unsigned long i;
	FILE *f;

	if (!summary_json(all, sizeof(all), "", lat, n) ||
	    !summary_json(flt, sizeof(flt), "faulting_", latf, n)) {
		error("window: out of memory");
		return;
	}
	f = open_memstream(&list, &len);
	for (i = 0; f && i < n; i++)
		fprintf(f, "%s%.6g", i ? "," : "", latf[i] * 1e6);
	if (f)
		fclose(f);
	if (asprintf(&extra, "%s%s,\"faulting_us\":[%s],\"folios\":%lu,\"traced\":%s%s%s",
		     all + 1, flt, list ? list : "", n, traced ? "true" : "false",
		     members ? "," : "", members ? members : "") < 0)
		extra = NULL;
	for (i = 0; i < n; i++)
		lat[i] *= 1e6;
	emit("window", kind, "0->1", "us", lat, n, extra);
	free(extra);
	free(list);
}

/*
 * 2MB THP moved node 0 -> 1 one folio per move_pages() call, traced: with
 * WIN_READER or WIN_WRITER, a thread reads a word of each folio (or writes a
 * byte) while it moves, and the longest access per folio is the "window"
 * figure (kind thp-reader, or thp for the writer); with WIN_DIRTIER, a
 * thread writes every line of the folio over and over while it moves (so
 * that the pre-copy, where the kernel has it, finds it written), untimed.
 * The trace gives each folio's window in the kernel ("kernel_window", kind
 * thp-idle, thp-reader, thp-writer or thp-dirtier), with the counters of
 * every folio's move.
 */
static void bench_window(int mode)
{
	static const char *const kkinds[] = {
		"thp-idle", "thp-reader", "thp-writer", "thp-dirtier"
	};
	static const unsigned int seeds[] = { 8, 10, 7, 9 };
	struct kind thp = { "thp", PMD_SZ, 0 };
	unsigned long n = size / PMD_SZ, i, moved = 0, start;
	const char *kkind = kkinds[mode], *wkind = mode == WIN_READER ? "thp-reader" : "thp";
	bool timed = mode == WIN_READER || mode == WIN_WRITER, thread = mode != WIN_IDLE;
	bool spin = sysconf(_SC_NPROCESSORS_ONLN) > SPIN_CPU;
	long ev[NR_TRACE_EVENTS] = { 0 }, whole;
	struct tally *tc = tally_new(PMD_SZ, false);
	double *lat = NULL, *latf = NULL, *klat = NULL, *kcall = NULL, *sorted = NULL;
	char *trace = NULL, *counts = NULL, *extra = NULL, *wjson = NULL, callx[160] = "";
	bool traced;
	pthread_t th;
	char *p;

	if (n > 256)
		n = 256;
	win_seed = seeds[mode];
	p = map_kind(&thp, n * PMD_SZ, win_seed);
	if (!p || count_large(p, n * PMD_SZ, PMD_SZ) != (long)n) {
		if (timed)
			skip("window", wkind, "no 2MB THP for the buffer");
		skip("kernel_window", kkind, "no 2MB THP for the buffer");
		if (p)
			munmap(p, n * PMD_SZ);
		free(tc);
		return;
	}
	start = (unsigned long)p;
	win_base = p;
	win_worst = calloc(n, sizeof(double));
	win_worst_faulting = calloc(n, sizeof(double));
	win_faults = calloc(n, sizeof(long));
	win_touches = 0;
	win_bad = 0;
	lat = calloc(n, sizeof(double));
	latf = calloc(n, sizeof(double));
	if (!win_worst || !win_worst_faulting || !win_faults || !lat || !latf ||
	    !win_threads_start(&th, mode, spin)) {
		munmap(p, n * PMD_SZ);
		goto out;
	}
	traced = tr_begin();
	for (i = 0; i < n; i++) {
		void *pg = p + i * PMD_SZ;
		int node = 1, st = -1;
		long ret;

		if (thread) {
			win_seq = i;
			while (win_seen <= i)	/* the toucher is on this folio */
				;
		}
		tally_begin(tc);
		ret = syscall(SYS_move_pages, 0, 1, &pg, &node, &st, MPOL_MF_MOVE);
		tally_end(tc, i, PMD_SZ);
		if (ret || st != 1) {
			error("window: folio %lu not moved (status %d)", i, st);
			break;
		}
		if (thread) {
			win_seen = 0;
			while (win_seen <= i)	/* and came back after the move */
				;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			lat[moved] = win_worst[i];
			latf[moved] = win_worst_faulting[i];
		}
		moved++;
	}
	if (traced)
		trace = tr_end();
	win_threads_end(&th, mode, spin);
	if (win_bad)
		error("window: the reader read a wrong word %lu times in %lu reads", win_bad,
		      win_touches);
	check("window", p, n * PMD_SZ, win_seed);
	whole = count_large(p, n * PMD_SZ, PMD_SZ);
	munmap(p, n * PMD_SZ);
	wjson = win_json(mode, spin, moved);
	if (timed && moved)
		window_emit(wkind, lat, latf, moved, traced, wjson);
	if (!traced) {
		skip("kernel_window", kkind, tr.why ? tr.why : "cannot start tracing");
		goto out;
	}
	if (moved != n)
		goto out;
	if (!trace) {
		error("kernel_window: cannot read %s/trace", tr.dir);
		goto out;
	}
	klat = calloc(n, sizeof(double));
	kcall = calloc(n, sizeof(double));
	sorted = calloc(n, sizeof(double));
	if (!klat || !kcall || !sorted || !tr_windows(trace, start, n, klat, kcall, ev))
		goto out;
	/* From the call's start: a summary only, where every folio has one */
	memcpy(sorted, kcall, n * sizeof(double));
	qsort(sorted, n, sizeof(double), cmp_double);
	if (sorted[0] >= 0)
		snprintf(callx, sizeof(callx), ",\"call_median_us\":%.3f,\"call_p99_us\":%.3f,"
			 "\"call_max_us\":%.3f,\"migrate_pages_start\":%ld",
			 sorted[n / 2], sorted[(n * 99) / 100], sorted[n - 1], ev[EV_CALL_START]);
	/* values in folio order, as the counts; the summary from a sorted copy */
	memcpy(sorted, klat, n * sizeof(double));
	qsort(sorted, n, sizeof(double), cmp_double);
	counts = tally_json(tc);
	if (asprintf(&extra, "\"median_us\":%.3f,\"p99_us\":%.3f,\"max_us\":%.3f,"
		     "\"folios\":%lu,\"buffer_folios\":%lu,\"folio_bytes\":%lu,"
		     "\"writer_threads\":%d,\"whole_after\":%.3f,\"trace_clock\":\"%s\","
		     "\"clock_step_us\":%.3g,\"set_migration_pte\":%ld,\"set_migration_pmd\":%ld,"
		     "\"remove_migration_pte\":%ld,\"remove_migration_pmd\":%ld%s%s%s%s%s",
		     sorted[n / 2], sorted[(n * 99) / 100], sorted[n - 1], n, n, PMD_SZ,
		     thread ? 1 : 0, whole_share(whole, n), tr.clock, tr.step_us,
		     ev[0], ev[1], ev[2], ev[3], callx, wjson ? "," : "", wjson ? wjson : "",
		     counts && *counts ? "," : "", counts ? counts : "") < 0)
		extra = NULL;
	emit("kernel_window", kkind, "0->1", "us", klat, n, extra);
out:
	free(extra);
	free(wjson);
	free(counts);
	free(trace);
	free(klat);
	free(kcall);
	free(sorted);
	free(lat);
	free(latf);
	free(win_worst);
	free(win_worst_faulting);
	free(win_faults);
	win_worst = win_worst_faulting = NULL;
	win_faults = NULL;
	free(tc);
}

/* ---- migration precopy (an RFC): its knob, a sysctl or in debugfs ---- */

/*
 * The RFC's knob began as a sysctl and moves to debugfs (a directory of its
 * own, a file of its own, or under mm/): the first of these that is a file
 * is used, and its min_kb sibling, if any, is only read.
 */
#define PRECOPY_SYSCTL	"/proc/sys/vm/migrate_precopy"
#define DEBUGFS		"/sys/kernel/debug"
static const char *const precopy_debugfs[] = {
	"migrate_precopy/enabled", "migrate_precopy", "mm/migrate_precopy",
};
#define PRECOPY_TRIED	PRECOPY_SYSCTL ", " DEBUGFS "/migrate_precopy/enabled, " \
			DEBUGFS "/migrate_precopy, " DEBUGFS "/mm/migrate_precopy"

static char precopy_knob[96];	/* the knob found, "" for none */
static long precopy_old = -1;	/* its value at start; -1: no knob */

/*
 * A knob's value: a number (sysctl, a debugfs integer) or Y/N (a debugfs
 * bool, which takes "1" and "0" as well); -1 when unreadable.
 */
static long precopy_read(const char *path)
{
	char buf[32], *end;
	FILE *f = fopen(path, "r");
	long v;

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	if (buf[0] == 'Y' || buf[0] == 'y')
		return 1;
	if (buf[0] == 'N' || buf[0] == 'n')
		return 0;
	v = strtol(buf, &end, 10);
	return end == buf ? -1 : v;
}

static bool is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* Is nothing mounted on dir (it is on its parent's filesystem)? */
static bool bare_dir(const char *dir)
{
	char parent[160];
	struct stat a, b;

	snprintf(parent, sizeof(parent), "%s/..", dir);
	return !stat(dir, &a) && !stat(parent, &b) && a.st_dev == b.st_dev;
}

/*
 * The knob into precopy_knob; debugfs mounted on DEBUGFS first (*mounted)
 * when the sysctl is not there and nothing is mounted on DEBUGFS.
 */
static bool precopy_find(bool *mounted)
{
	size_t k;

	if (is_file(PRECOPY_SYSCTL)) {
		snprintf(precopy_knob, sizeof(precopy_knob), "%s", PRECOPY_SYSCTL);
		return true;
	}
	if (bare_dir(DEBUGFS))
		*mounted = !mount("nodev", DEBUGFS, "debugfs", 0, NULL);
	for (k = 0; k < sizeof(precopy_debugfs) / sizeof(precopy_debugfs[0]); k++) {
		snprintf(precopy_knob, sizeof(precopy_knob), DEBUGFS "/%s", precopy_debugfs[k]);
		if (is_file(precopy_knob))
			return true;
	}
	precopy_knob[0] = '\0';
	return false;
}

/* The min_kb beside the knob: DIR/min_kb of DIR/enabled, else KNOB_min_kb */
static bool precopy_min_kb(char *path, size_t len)
{
	size_t n = strlen(precopy_knob), e = strlen("/enabled");

	if (n > e && !strcmp(precopy_knob + n - e, "/enabled"))
		snprintf(path, len, "%.*s/min_kb", (int)(n - e), precopy_knob);
	else
		snprintf(path, len, "%s_min_kb", precopy_knob);
	return is_file(path);
}

/* Find the knob and turn it off for the main runs; an info line either way. */
static void precopy_init(void)
{
	char min_kb[112] = "";
	bool mounted = false;

	if (precopy_find(&mounted))
		precopy_old = precopy_read(precopy_knob);
	if (precopy_old > 0 && !knob_write(precopy_knob, "0"))
		error("cannot set %s to 0", precopy_knob);
	printf("{\"tag\":\"%s\",\"info\":\"precopy\",\"knob\":\"%s\",\"present\":%s",
	       tag, precopy_knob[0] ? precopy_knob : "none", precopy_old >= 0 ? "true" : "false");
	if (precopy_old >= 0)
		printf(",\"value_at_start\":%ld", precopy_old);
	if (precopy_old >= 0 && precopy_min_kb(min_kb, sizeof(min_kb)))
		printf(",\"min_kb_knob\":\"%s\",\"min_kb\":%ld", min_kb, precopy_read(min_kb));
	else if (precopy_old < 0)
		printf(",\"tried\":\"%s\"", PRECOPY_TRIED);
	printf(",\"debugfs_mounted_here\":%s}\n", mounted ? "true" : "false");
	fflush(stdout);
}

static void precopy_restore(void)
{
	char val[24];

	if (precopy_old < 0)
		return;
	snprintf(val, sizeof(val), "%ld", precopy_old);
	knob_write(precopy_knob, val);
}

/* The window figures, and again with precopy on (tag TAG+precopy) if there. */
static void bench_windows(void)
{
	const char *keep = tag;
	char *ptag;
	int mode;

	for (mode = WIN_IDLE; mode <= WIN_DIRTIER; mode++)
		bench_window(mode);
	if (precopy_old < 0)
		return;
	if (!knob_write(precopy_knob, "1") || precopy_read(precopy_knob) != 1) {
		error("cannot set %s to 1", precopy_knob);
		return;
	}
	if (asprintf(&ptag, "%s+precopy", keep) >= 0) {
		tag = ptag;
		for (mode = WIN_IDLE; mode <= WIN_DIRTIER; mode++)
			bench_window(mode);
		tag = keep;
		free(ptag);
	}
	if (!knob_write(precopy_knob, "0"))
		error("cannot set %s back to 0", precopy_knob);
}

/* ---- the limit: memcpy node 0 -> node 1 ---- */

static void bench_memcpy(void)
{
	double *big = calloc(runs, sizeof(double)), *small = calloc(runs, sizeof(double));
	unsigned long chunks = size / PMD_SZ, c;
	char *src = map_aligned(size, PMD_SZ), *dst = map_aligned(size, PMD_SZ);
	char extra[120];
	int r;

	if (!src || !dst || mbind_node(src, size, 0) || mbind_node(dst, size, 1)) {
		skip("memcpy", "-", "cannot place buffers on nodes 0 and 1");
		goto out;
	}
	fill(src, size, 3);
	memset(dst, 0, size);
	for (r = 0; r < runs; r++) {
		double t = now();

		/* 2MB at a time, every chunk once per run: a cold source */
		for (c = 0; c < chunks; c++)
			memcpy(dst + c * PMD_SZ, src + c * PMD_SZ, PMD_SZ);
		t = now() - t;
		small[r] = size / t / (1UL << 30);
		t = now();
		memcpy(dst, src, size);
		t = now() - t;
		big[r] = size / t / (1UL << 30);
	}
	check("memcpy", dst, size, 3);
	snprintf(extra, sizeof(extra), "\"chunk_bytes\":%lu", PMD_SZ);
	emit("memcpy", "2MB", "0->1", "GiB/s", small, runs, extra);
	snprintf(extra, sizeof(extra), "\"chunk_bytes\":%lu", size);
	emit("memcpy", "whole", "0->1", "GiB/s", big, runs, extra);
out:
	if (src)
		munmap(src, size);
	if (dst)
		munmap(dst, size);
	free(big);
	free(small);
}

int main(int argc, char **argv)
{
	const struct kind thp = { "thp", PMD_SZ, 0 }, mthp = { "mthp64k", MTHP_SZ, 0 };
	const struct kind h2m = { "hugetlb2m", PMD_SZ, MAP_HUGE_2MB };
	const struct kind h1g = { "hugetlb1g", 1UL << 30, MAP_HUGE_1GB };
	const struct kind small = { "4k", 0, 0 };
	struct kind k4 = small;
	int opt;

	page_size = sysconf(_SC_PAGESIZE);
	while ((opt = getopt(argc, argv, "s:r:g:t:o:qk")) != -1) {
		switch (opt) {
		case 's':
			size = strtoul(optarg, NULL, 0) << 20;
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 'g':
			runs_1g = atoi(optarg);
			break;
		case 't':
			tag = optarg;
			break;
		case 'o':
			only = optarg;
			break;
		case 'q':
			size = 16UL << 20;
			runs = 2;
			runs_1g = 0;
			break;
		case 'k':
			kp_wanted = true;
			break;
		default:
			fprintf(stderr, "usage: movebench [-s SIZE_MB] [-r RUNS] [-g RUNS_1G] [-t TAG] [-o BENCHES] [-q] [-k]\n");
			return 2;
		}
	}
	if (size < PMD_SZ || size % PMD_SZ || runs < 2 || runs > MAX_RUNS || runs_1g > MAX_RUNS) {
		fprintf(stderr, "movebench: SIZE must be a multiple of 2 MB and RUNS at least 2, "
			"at most %d\n", MAX_RUNS);
		return 2;
	}
	k4.folio_sz = page_size;
	snprintf(knob_pmd.path, sizeof(knob_pmd.path), THP_SYSFS "/hugepages-%lukB/enabled",
		 PMD_SZ >> 10);
	snprintf(knob_64k.path, sizeof(knob_64k.path), THP_SYSFS "/hugepages-64kB/enabled");
	atexit(knobs_restore);
	printf("{\"tag\":\"%s\",\"info\":\"movebench\",\"bytes\":%lu,\"runs\":%d,\"runs_1g\":%d,"
	       "\"cpus\":%ld}\n", tag, size, runs, runs_1g, sysconf(_SC_NPROCESSORS_ONLN));
	counters_info();
	precopy_init();

	if (wanted("memcpy"))
		bench_memcpy();
	if (wanted("move_pages")) {
		bench_move_pages(&thp, runs);
		bench_move_pages(&mthp, runs);
		bench_move_pages(&h2m, runs);
		if (runs_1g >= 2) {
			unsigned long keep = size;

			size = 1UL << 30;	/* one 1GB page per run */
			bench_move_pages(&h1g, runs_1g);
			size = keep;
		} else {
			skip("move_pages", h1g.name, "1GB runs not requested (-g)");
		}
	}
	if (wanted("uffd_move")) {
		bench_uffd_move(&k4);
		bench_uffd_move(&mthp);
	}
	if (wanted("window")) {
		tr_init();
		bench_windows();
	}
	knobs_restore();
	return errors ? 1 : 0;
}
