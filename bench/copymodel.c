// SPDX-License-Identifier: GPL-2.0
/*
 * copymodel - the copy shapes of folio_mc_copy() before and after the
 * series, timed natively on the host, on the same buffers, in one run.
 *
 * Before the series a folio is copied one 4KB page per copy_mc_to_kernel()
 * call; after it, in one call:
 *   kind "2MB":   512 calls of 4KB ("per-page") vs 1 call ("one call")
 *   kind "whole": the whole buffer (1GB by default, a 1GB hugetlb folio)
 *                 in 4KB calls vs in 1 call
 * each with every routine below:
 *
 *   copy_mc_enhanced_fast_string  the kernel's, from arch/x86/lib/copy_mc_64.S
 *                                 (what copy_mc_to_kernel() runs with ERMS)
 *   copy_mc_fragile               the kernel's, same file (CPUs with the
 *                                 fragile-copy quirk)
 *   copy_mc_nocache               the kernel's, same file, where the tree
 *                                 has it (the series' non-temporal copy_mc
 *                                 routine for large spans)
 *   kernel_memcpy                 the kernel's memcpy from
 *                                 arch/x86/lib/memcpy_64.S without FSRM, i.e.
 *                                 memcpy_orig (copy_mc_to_kernel() without ERMS)
 *   rep_movsb, rep_movsq          ours: one string instruction per call
 *   nt_movnti, nt_movntdq         ours: non-temporal stores (8-byte movnti as
 *                                 the kernel's __copy_user_nocache(); 16-byte
 *                                 SSE2 movntdq as glibc for large sizes), one
 *                                 sfence per call
 *   glibc_memcpy                  the limit
 *
 * The kernel routines are assembled from a kernel tree at build time
 * (scripts/copymodel-build, KSRC=) with our shim headers in bench/kshim/;
 * they are called through a wrapper shaped like copy_mc_to_kernel(). Built
 * without them (no tree), only our own routines run and the info line says
 * so ("kernel_copy":false).
 *
 * Every chunk is copied once per pass over a buffer much larger than the
 * caches, so the source is cold, as when migrating a folio; the buffers
 * are THP-backed where the kernel allows (the kernel copies through its
 * huge-page direct map). Shapes are interleaved, their order rotated each
 * run, so that drift hits them all; the process is pinned to one CPU.
 * Every pass is checked against the source. Before timing, the kernel's
 * copy_mc routines are checked for what they return when a load faults:
 * every source alignment, a source that ends at an inaccessible page,
 * the fault taken in user space as SIGSEGV and sent to the fixup that the
 * routine's exception table names, as the kernel's would be
 * ("fault_check" lines; see fault_check()). Each figure is given by wall
 * time ("values", "median") and by the time the thread ran ("values_cpu",
 * "median_cpu"): on a busy host the two differ by the preemptions. One
 * JSON object per line, tagged "native".
 *
 *   copymodel [-s SIZE_MB] [-r RUNS] [-c CPU] [-H] [-q] [-S]
 *     -H  4KB pages only (no MADV_HUGEPAGE)
 *     -q  quick: 64 MB, 3 runs (a smoke test, not a measurement)
 *     -S  size sweep instead ("copy_sweep" lines): folios of 64KB, 256KB,
 *         1MB, 2MB, 8MB, 32MB, 256MB and 1GB (those up to SIZE), each in
 *         4KB calls and in one call, with a cold source (a pass over the
 *         whole buffer, folio after folio) and a warm one (the first folio
 *         copied over and over, at least 256MB in all), for the kernel's
 *         copy_mc routines, ours and glibc's: where one call gains over
 *         per-page calls, and where non-temporal stores win or lose
 */
#define _GNU_SOURCE
#ifndef __x86_64__
#error "copymodel times x86-64 copy routines"
#endif
#include <emmintrin.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define PG	4096UL
#define THP	(2UL << 20)

#ifndef KSRC_DESC
#define KSRC_DESC ""
#endif
#ifndef KCOPY_NOTE
#define KCOPY_NOTE ""
#endif

static unsigned long size = 1024UL << 20;
static char *src, *dst;

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* Time this thread ran: a pass preempted by another process counts less */
static double cpu_now(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

#ifdef HAVE_KCOPY
/* From the kernel tree, exported as kernel_<name> by bench/kshim/kshim.h */
unsigned long kernel_copy_mc_enhanced_fast_string(void *dst, const void *src, unsigned int len);
unsigned long kernel_copy_mc_fragile(void *dst, const void *src, unsigned int len);
void *kernel___memcpy(void *dst, const void *src, size_t len);

/*
 * copy_mc_fragile() jumps here on a write fault, which the kernel's
 * exception table routes; no fault is recovered in user space.
 */
unsigned long copy_mc_fragile_handle_tail(char *to, char *from, unsigned int len);
unsigned long copy_mc_fragile_handle_tail(char *to, char *from, unsigned int len)
{
	(void)to, (void)from, (void)len;
	abort();
}

/* The exception table of the file, kept by kshim.h for fault_check() */
struct kshim_extable {
	uint64_t from, to;
	uint32_t type;
} __attribute__((packed));
extern const struct kshim_extable __start_kshim_extable[], __stop_kshim_extable[];

/* copy_mc_to_kernel() as each of its three branches runs it */
static unsigned long __attribute__((noinline))
mc_erms(void *d, const void *s, unsigned int n)
{
	return kernel_copy_mc_enhanced_fast_string(d, s, n);
}

static unsigned long __attribute__((noinline))
mc_fragile(void *d, const void *s, unsigned int n)
{
	return kernel_copy_mc_fragile(d, s, n);
}

static unsigned long __attribute__((noinline))
mc_memcpy(void *d, const void *s, unsigned int n)
{
	kernel___memcpy(d, s, n);
	return 0;
}
#endif

#ifdef HAVE_KCOPY_NOCACHE
unsigned long kernel_copy_mc_nocache(void *dst, const void *src, unsigned int len);

static unsigned long __attribute__((noinline))
mc_nocache(void *d, const void *s, unsigned int n)
{
	return kernel_copy_mc_nocache(d, s, n);
}
#endif

/* Ours. Page-aligned ranges, lengths a multiple of 64 bytes. */
static unsigned long __attribute__((noinline))
own_movsb(void *d, const void *s, unsigned int len)
{
	size_t n = len;

	asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return 0;
}

static unsigned long __attribute__((noinline))
own_movsq(void *d, const void *s, unsigned int len)
{
	size_t n = len / 8;

	asm volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return 0;
}

static unsigned long __attribute__((noinline))
own_movnti(void *d, const void *s, unsigned int len)
{
	long long *q = d;
	const long long *p = s;
	size_t i;

	for (i = 0; i < len / 8; i += 8) {
		long long a = p[i], b = p[i + 1], c = p[i + 2], e = p[i + 3];
		long long f = p[i + 4], g = p[i + 5], h = p[i + 6], k = p[i + 7];

		_mm_stream_si64(q + i, a);
		_mm_stream_si64(q + i + 1, b);
		_mm_stream_si64(q + i + 2, c);
		_mm_stream_si64(q + i + 3, e);
		_mm_stream_si64(q + i + 4, f);
		_mm_stream_si64(q + i + 5, g);
		_mm_stream_si64(q + i + 6, h);
		_mm_stream_si64(q + i + 7, k);
	}
	_mm_sfence();
	return 0;
}

static unsigned long __attribute__((noinline))
own_movntdq(void *d, const void *s, unsigned int len)
{
	__m128i *q = d;
	const __m128i *p = s;
	size_t i;

	for (i = 0; i < len / 16; i += 4) {
		__m128i a = _mm_load_si128(p + i), b = _mm_load_si128(p + i + 1);
		__m128i c = _mm_load_si128(p + i + 2), e = _mm_load_si128(p + i + 3);

		_mm_stream_si128(q + i, a);
		_mm_stream_si128(q + i + 1, b);
		_mm_stream_si128(q + i + 2, c);
		_mm_stream_si128(q + i + 3, e);
	}
	_mm_sfence();
	return 0;
}

static unsigned long __attribute__((noinline))
glibc(void *d, const void *s, unsigned int n)
{
	memcpy(d, s, n);
	return 0;
}

/*
 * One pass over the buffer: folios of folio bytes, in calls of call bytes.
 * One function per routine, so that each call is direct, as in the kernel.
 */
#define PASS(fn)							\
static unsigned long pass_##fn(unsigned long folio, unsigned long call) \
{									\
	unsigned long f, off, left = 0;					\
									\
	for (f = 0; f < size; f += folio)				\
		for (off = 0; off < folio; off += call)			\
			left |= fn(dst + f + off, src + f + off, call);	\
	return left;							\
}
/* The first folio copied again and again, @times times: a warm source */
#define WARM(fn)							\
static unsigned long warm_##fn(unsigned long folio, unsigned long call, \
			       unsigned long times)			\
{									\
	unsigned long t, off, left = 0;					\
									\
	for (t = 0; t < times; t++)					\
		for (off = 0; off < folio; off += call)			\
			left |= fn(dst + off, src + off, call);		\
	return left;							\
}
#define SHAPES(fn) PASS(fn) WARM(fn)
#ifdef HAVE_KCOPY
SHAPES(mc_erms)
SHAPES(mc_fragile)
SHAPES(mc_memcpy)
#endif
#ifdef HAVE_KCOPY_NOCACHE
SHAPES(mc_nocache)
#endif
SHAPES(own_movsb)
SHAPES(own_movsq)
SHAPES(own_movnti)
SHAPES(own_movntdq)
SHAPES(glibc)

struct routine {
	const char *name, *source;
	unsigned long (*pass)(unsigned long folio, unsigned long call);
	unsigned long (*warm)(unsigned long folio, unsigned long call, unsigned long times);
	/* the routine itself, for the victim figures */
	unsigned long (*pass_one)(void *d, const void *s, unsigned int n);
};

static const struct routine routines[] = {
#ifdef HAVE_KCOPY
	{ "copy_mc_enhanced_fast_string", "kernel arch/x86/lib/copy_mc_64.S",
	  pass_mc_erms, warm_mc_erms, mc_erms },
	{ "copy_mc_fragile", "kernel arch/x86/lib/copy_mc_64.S", pass_mc_fragile, warm_mc_fragile, mc_fragile },
	{ "kernel_memcpy", "kernel arch/x86/lib/memcpy_64.S (memcpy_orig, no FSRM)",
	  pass_mc_memcpy, warm_mc_memcpy, mc_memcpy },
#endif
#ifdef HAVE_KCOPY_NOCACHE
	{ "copy_mc_nocache", "kernel arch/x86/lib/copy_mc_64.S", pass_mc_nocache, warm_mc_nocache, mc_nocache },
#endif
	{ "rep_movsb", "copymodel", pass_own_movsb, warm_own_movsb, own_movsb },
	{ "rep_movsq", "copymodel", pass_own_movsq, warm_own_movsq, own_movsq },
	{ "nt_movnti", "copymodel", pass_own_movnti, warm_own_movnti, own_movnti },
	{ "nt_movntdq", "copymodel", pass_own_movntdq, warm_own_movntdq, own_movntdq },
	{ "glibc_memcpy", "glibc", pass_glibc, warm_glibc, glibc },
};
#define NROUTINES (sizeof(routines) / sizeof(routines[0]))

struct shape {
	const struct routine *rt;
	const char *kind, *name;
	unsigned long folio, call;
	unsigned long warm;	/* sweep: times the first folio is copied; 0: cold */
	double *gibs, *gibs_cpu;
};

static void loadavg(double l[3])
{
	FILE *f = fopen("/proc/loadavg", "r");

	l[0] = l[1] = l[2] = -1;
	if (!f)
		return;
	if (fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]) != 3)
		l[0] = l[1] = l[2] = -1;
	fclose(f);
}

/* The CPU model and whether a flag is set, from /proc/cpuinfo */
static char model[128] = "?", flagline[8192];
static int family = -1, model_nr = -1;

static void cpuinfo(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v += 1 + (v[1] == ' ');
		v[strcspn(v, "\n")] = 0;
		if (!strncmp(line, "model name", 10) && !strcmp(model, "?"))
			snprintf(model, sizeof(model), "%s", v);
		else if (!strncmp(line, "cpu family", 10) && family < 0)
			family = atoi(v);
		else if (!strncmp(line, "model\t", 6) && model_nr < 0)
			model_nr = atoi(v);
		else if (!strncmp(line, "flags", 5) && !flagline[0])
			snprintf(flagline, sizeof(flagline), " %s ", v);
	}
	fclose(f);
}

static const char *flag(const char *name)
{
	char key[64];

	snprintf(key, sizeof(key), " %s ", name);
	return strstr(flagline, key) ? "true" : "false";
}

/* JSON string: the few characters that need escaping in what we print */
static void jstr(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar((unsigned char)*s < 0x20 ? ' ' : *s);
	}
	putchar('"');
}

/* A figure, or null where it is not a finite number (report.py --check fails) */
static void jnum(double v)
{
	if (isfinite(v))
		printf("%.6g", v);
	else
		printf("null");
}

/* ,"key":v (a JSON member after others) */
static void jfield(const char *key, double v)
{
	printf(",\"%s\":", key);
	jnum(v);
}

/* ,"key":[v0,v1,...] */
static void jarray(const char *key, const double *v, int n)
{
	int i;

	printf(",\"%s\":[", key);
	for (i = 0; i < n; i++) {
		printf("%s", i ? "," : "");
		jnum(v[i]);
	}
	printf("]");
}

static long anon_huge_kb(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts v */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *map_buffer(int huge)
{
	char *p = mmap(NULL, size + THP, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)p + THP - 1) & ~(THP - 1));
	if (huge)
		madvise(p, size, MADV_HUGEPAGE);
	return p;
}

#ifdef HAVE_KCOPY
/*
 * A load that faults in a kernel copy routine goes to the fixup its
 * exception table names; here the fault is a SIGSEGV, and the handler does
 * what the kernel's fixup_exception() does for these entries.
 */
static void fault_to_fixup(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	const struct kshim_extable *e;
	uint64_t ip = uc->uc_mcontext.gregs[REG_RIP];

	(void)si;
	for (e = __start_kshim_extable; e < __stop_kshim_extable; e++)
		if (e->from == ip) {
			uc->uc_mcontext.gregs[REG_RIP] = e->to;
			return;
		}
	signal(sig, SIG_DFL);	/* no entry: crash on the way back */
}

/*
 * What a copy_mc routine returns when a load faults, and what it left in
 * the destination: the source is the last k bytes before an inaccessible
 * page and the copy asks for more. The count returned must say that k
 * bytes were copied (exact: copy_mc_nocache and copy_mc_fragile; at most
 * k: the fast-string copy may report an earlier point to resume at), the
 * bytes it says it copied must be the source's, and for the exact ones
 * nothing after them may be written. Then every length up to 320 at every
 * source and destination alignment up to 64, without a fault: all copied,
 * nothing written past the end. One "fault_check" line per routine;
 * returns the number of failures.
 */
static int fault_check(void)
{
	static const struct {
		const char *name;
		unsigned long (*fn)(void *d, const void *s, unsigned int n);
		int exact;
	} rt[] = {
		{ "copy_mc_enhanced_fast_string", kernel_copy_mc_enhanced_fast_string, 0 },
		{ "copy_mc_fragile", kernel_copy_mc_fragile, 1 },
#ifdef HAVE_KCOPY_NOCACHE
		{ "copy_mc_nocache", kernel_copy_mc_nocache, 1 },
#endif
	};
	static const unsigned int extra[] = { 1, 7, 8, 63, 64, 65, 4096 };
	struct sigaction sa = { .sa_sigaction = fault_to_fixup, .sa_flags = SA_SIGINFO | SA_NODEFER };
	struct sigaction old;
	unsigned long pg = PG, i, k, x, sa_, da, n;
	char *area, *guard, *d;
	int failures = 0;

	area = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	guard = area + 3 * pg;			/* source: area .. guard */
	d = area + 4 * pg;			/* destination: 4 pages after it */
	if (mprotect(guard, pg, PROT_NONE))
		return 1;
	for (i = 0; i < 3 * pg; i++)
		area[i] = (char)(i * 131 + 7);
	sigaction(SIGSEGV, &sa, &old);
	for (i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
		unsigned long cases = 0, bad = 0, short_ = 0;

		/* k: 0 to 200, then pg - 70 to 2 * pg + 64, one by one */
		for (k = 0; k <= 2 * pg + 64; k = k == 200 ? pg - 70 : k + 1) {
			for (x = 0; x < sizeof(extra) / sizeof(extra[0]); x++) {
				unsigned long len = k + extra[x], left, got;

				for (da = 0; da < 8; da += 3) {
					memset(d, 0xa5, 4 * pg);
					left = rt[i].fn(d + da, guard - k, len);
					got = len - left;
					cases++;
					if (left > len || got > k || (rt[i].exact && got != k) ||
					    memcmp(d + da, guard - k, got)) {
						bad++;
						continue;
					}
					short_ += got < k;
					for (n = 0; rt[i].exact && n < extra[x] + 64; n++)
						if (d[da + got + n] != (char)0xa5) {
							bad++;
							break;
						}
				}
			}
		}
		for (n = 0; n <= 320; n++)
			for (sa_ = 0; sa_ < 64; sa_ += 1 + (sa_ >= 8) * 7)
				for (da = 0; da < 64; da += 1 + (da >= 8) * 7) {
					memset(d, 0xa5, n + 200);
					cases++;
					if (rt[i].fn(d + da, area + sa_, n) ||
					    memcmp(d + da, area + sa_, n) ||
					    d[da + n] != (char)0xa5 || (da && d[da - 1] != (char)0xa5))
						bad++;
				}
		printf("{\"tag\":\"native\",\"info\":\"fault_check\",\"routine\":\"%s\","
		       "\"exact\":%s,\"cases\":%lu,\"short\":%lu,\"bad\":%lu}\n",
		       rt[i].name, rt[i].exact ? "true" : "false", cases, short_, bad);
		failures += !!bad;
	}
	sigaction(SIGSEGV, &old, NULL);
	munmap(area, 8 * pg);
	return failures;
}
#endif

/*
 * What copying a 2MB folio costs the data the CPU had in its caches, the
 * reason for non-temporal stores: a victim buffer of @vb bytes is read
 * (into the caches), one folio of the 1GB buffer is copied (a cold source,
 * the next folio each time) and the victim is read again, timed; "none"
 * copies nothing in between. Stores through the caches bring the
 * destination in and push victim lines out; non-temporal ones leave only
 * the source's lines behind. @reps rounds per run; the per-run figure is
 * the median re-read in microseconds. Sweep mode only.
 */
static volatile uint64_t victim_sink;

static uint64_t victim_read(const uint64_t *v, unsigned long bytes)
{
	uint64_t sum = 0;
	unsigned long i;

	for (i = 0; i < bytes / 8; i += 8)
		sum += v[i];	/* one word per 64-byte line */
	return sum;
}

static void victim(const struct routine *rts, int nrt, int runs, int reps)
{
	static const unsigned long vbs[] = { 1UL << 20, 8UL << 20, 24UL << 20 };
	const int nvb = sizeof(vbs) / sizeof(vbs[0]);
	double *t = calloc(reps, sizeof(double));
	double *med = calloc((size_t)runs * (nrt + 1) * nvb, sizeof(double));
	uint64_t *v = (uint64_t *)map_buffer(1);
	unsigned long folio = 0;
	int r, k, b, i;

	if (!t || !med || !v)
		return;
	memset(v, 1, vbs[nvb - 1]);
	for (r = 0; r < runs; r++)
		for (k = 0; k <= nrt; k++)
			for (b = 0; b < nvb; b++) {
				int kk = (k + r) % (nrt + 1);	/* rotate, as the sweep does */

				for (i = 0; i < reps; i++) {
					double c;

					victim_sink += victim_read(v, vbs[b]);
					if (kk < nrt) {
						victim_sink += rts[kk].pass_one(dst + folio, src + folio, THP);
						folio = (folio + THP) % size;
					}
					c = now();
					victim_sink += victim_read(v, vbs[b]);
					t[i] = (now() - c) * 1e6;
				}
				med[((size_t)r * (nrt + 1) + kk) * nvb + b] = median(t, reps);
			}
	for (k = 0; k <= nrt; k++)
		for (b = 0; b < nvb; b++) {
			double vals[64], m, mean = 0;

			for (r = 0; r < runs && r < 64; r++) {
				vals[r] = med[((size_t)r * (nrt + 1) + k) * nvb + b];
				mean += vals[r] / runs;
			}
			printf("{\"tag\":\"native\",\"bench\":\"copy_victim\",\"routine\":\"%s\","
			       "\"kind\":\"%luMB\",\"victim_bytes\":%lu,\"folio_bytes\":%lu,"
			       "\"reps\":%d,\"unit\":\"us\",\"n\":%d,\"values\":[",
			       k < nrt ? rts[k].name : "none", vbs[b] >> 20, vbs[b], THP, reps, runs);
			for (r = 0; r < runs; r++)
				printf("%s%.3f", r ? "," : "", vals[r]);
			printf("]");
			jfield("mean", mean);
			m = median(vals, runs);	/* vals sorted: [0] min, [runs - 1] max */
			jfield("median", m);
			jfield("min", vals[0]);
			jfield("max", vals[runs - 1]);
			printf("}\n");
		}
	free(t);
	free(med);
}

int main(int argc, char **argv)
{
	static const char *kinds[] = { "2MB", "whole" }, *names[] = { "per-page", "one call" };
	static const char *const sweep_kinds[] = {
		"64KB", "256KB", "1MB", "2MB", "8MB", "32MB", "256MB", "1GB",
	};
	static const unsigned long sweep_sizes[] = {
		64UL << 10, 256UL << 10, 1UL << 20, 2UL << 20, 8UL << 20, 32UL << 20,
		256UL << 20, 1UL << 30,
	};
	int runs = 10, cpu = 0, huge = 1, quick = 0, sweep = 0, opt, r, i, nshapes;
	double l0[3], l1[3], t0;
	struct shape *shapes;
	unsigned long k, j, n;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "s:r:c:HqS")) != -1) {
		switch (opt) {
		case 's':
			size = strtoul(optarg, NULL, 0) << 20;
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'H':
			huge = 0;
			break;
		case 'q':
			size = 64UL << 20;
			runs = 3;
			quick = 1;
			break;
		case 'S':
			sweep = 1;
			break;
		default:
			fprintf(stderr, "usage: copymodel [-s SIZE_MB] [-r RUNS] [-c CPU] [-H] [-q] [-S]\n");
			return 2;
		}
	}
	/* copy_mc_to_kernel() takes an unsigned int length */
	if (size < THP || size % THP || size > (1UL << 31) || runs < 2) {
		fprintf(stderr, "copymodel: SIZE must be a multiple of 2 MB up to 2048 and RUNS at least 2\n");
		return 2;
	}
	if (KCOPY_NOTE[0])
		fprintf(stderr, "copymodel: %s\n", KCOPY_NOTE);

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "copymodel: cannot pin to CPU %d, running unpinned\n", cpu);
		cpu = -1;
	}
	src = map_buffer(huge);
	dst = map_buffer(huge);
	if (!src || !dst) {
		fprintf(stderr, "copymodel: cannot map 2 x %lu MB\n", size >> 20);
		return 1;
	}
	for (j = 0; j < size / 8; j++)
		((uint64_t *)src)[j] = j * 0x9e3779b97f4a7c15ULL;
	memset(dst, 0, size);
	cpuinfo();
	loadavg(l0);

	printf("{\"tag\":\"native\",\"info\":\"copymodel\",\"bytes\":%lu,\"runs\":%d,"
	       "\"cpu\":%d,\"loadavg_1m\":%.2f,\"loadavg_start\":[%.2f,%.2f,%.2f],"
	       "\"x86_rep_movsb\":true,\"cpu_model\":", size, runs, cpu, l0[0], l0[0], l0[1], l0[2]);
	jstr(model);
	printf(",\"cpu_family\":%d,\"cpu_model_nr\":%d", family, model_nr);
	printf(",\"erms\":%s,\"fsrm\":%s,\"avx512f\":%s,\"hypervisor\":%s,\"quick\":%s,"
	       "\"sweep\":%s,\"thp\":%s,\"anon_huge_kb\":%ld,\"llc_bytes\":%ld,"
	       "\"kernel_copy\":%s,\"ksrc\":",
	       flag("erms"), flag("fsrm"), flag("avx512f"), flag("hypervisor"),
	       quick ? "true" : "false", sweep ? "true" : "false", huge ? "true" : "false",
	       anon_huge_kb(),
	       sysconf(_SC_LEVEL3_CACHE_SIZE),
#ifdef HAVE_KCOPY
	       "true"
#else
	       "false"
#endif
	       );
	jstr(KSRC_DESC);
	printf(",\"note\":");
	jstr(KCOPY_NOTE);
	printf("}\n");
	fflush(stdout);
#ifdef HAVE_KCOPY
	if (fault_check()) {
		printf("{\"tag\":\"native\",\"error\":\"a kernel copy_mc routine failed its fault check\"}\n");
		return 1;
	}
	fflush(stdout);
#endif

	nshapes = NROUTINES * (sweep ? 8 * 2 * 2 : 4);
	shapes = calloc(nshapes, sizeof(*shapes));
	for (i = 0, k = 0; !sweep && k < NROUTINES; k++)
		for (j = 0; j < 2; j++)
			for (n = 0; n < 2; n++, i++) {
				shapes[i].rt = &routines[k];
				shapes[i].kind = kinds[j];
				shapes[i].name = names[n];
				shapes[i].folio = j ? size : THP;
				shapes[i].call = n ? shapes[i].folio : PG;
			}
	for (k = 0; sweep && k < NROUTINES; k++)
		for (j = 0; j < 8 && sweep_sizes[j] <= size; j++)
			for (n = 0; n < 4; n++, i++) {
				shapes[i].rt = &routines[k];
				shapes[i].kind = sweep_kinds[j];
				shapes[i].name = names[n % 2];
				shapes[i].folio = sweep_sizes[j];
				shapes[i].call = n % 2 ? shapes[i].folio : PG;
				/* warm: at least 256MB copied, a folio at a time */
				shapes[i].warm = n < 2 ? 0 : (sweep_sizes[j] < (256UL << 20) ?
							 (256UL << 20) / sweep_sizes[j] : 1);
			}
	nshapes = i;
	for (i = 0; i < nshapes; i++) {
		shapes[i].gibs = calloc(runs, sizeof(double));
		shapes[i].gibs_cpu = calloc(runs, sizeof(double));
	}

	t0 = now();
	for (r = 0; r < runs; r++) {
		for (i = 0; i < nshapes; i++) {
			struct shape *s = &shapes[(i + r) % nshapes];
			unsigned long left, bytes = s->warm ? s->folio * s->warm : size;
			double c = cpu_now(), t = now();

			left = s->warm ? s->rt->warm(s->folio, s->call, s->warm) :
					 s->rt->pass(s->folio, s->call);
			t = now() - t;
			c = cpu_now() - c;
			s->gibs[r] = bytes / t / (1UL << 30);
			s->gibs_cpu[r] = bytes / c / (1UL << 30);
			if (left || memcmp(src, dst, s->warm ? s->folio : size)) {
				printf("{\"tag\":\"native\",\"error\":\"%s %s %s: copy %s\"}\n",
				       s->rt->name, s->kind, s->name, left ? "reported bytes left" : "differs");
				return 1;
			}
			memset(dst, 0, PG);	/* a stale copy must not pass the check */
		}
	}
	if (sweep)
		victim(routines, NROUTINES, runs, 64);
	t0 = now() - t0;
	loadavg(l1);

	for (i = 0; i < nshapes; i++) {
		double mean = 0, var = 0, *v = calloc(runs, sizeof(double)), med, medc;

		for (r = 0; r < runs; r++)
			mean += shapes[i].gibs[r] / runs;
		for (r = 0; r < runs; r++)
			var += (shapes[i].gibs[r] - mean) * (shapes[i].gibs[r] - mean) / (runs - 1);
		memcpy(v, shapes[i].gibs_cpu, runs * sizeof(double));
		medc = median(v, runs);
		memcpy(v, shapes[i].gibs, runs * sizeof(double));
		med = median(v, runs);	/* v sorted: v[0] min, v[runs - 1] max */
		printf("{\"tag\":\"native\",\"bench\":\"%s\",\"routine\":\"%s\","
		       "\"source\":", sweep ? "copy_sweep" : "copy_native", shapes[i].rt->name);
		jstr(shapes[i].rt->source);
		if (sweep)
			printf(",\"cache\":\"%s\"", shapes[i].warm ? "warm" : "cold");
		printf(",\"kind\":\"%s\",\"shape\":\"%s\",\"bytes\":%lu,\"unit\":\"GiB/s\",\"n\":%d",
		       shapes[i].kind, shapes[i].name,
		       shapes[i].warm ? shapes[i].folio * shapes[i].warm : size, runs);
		jfield("mean", mean);
		jfield("std", sqrt(var));
		jfield("median", med);
		jfield("min", v[0]);
		jfield("max", v[runs - 1]);
		jfield("median_cpu", medc);
		printf(",\"folio_bytes\":%lu,\"call_bytes\":%lu", shapes[i].folio, shapes[i].call);
		jarray("values", shapes[i].gibs, runs);
		jarray("values_cpu", shapes[i].gibs_cpu, runs);
		printf("}\n");
		free(v);
	}
	printf("{\"tag\":\"native\",\"info\":\"copymodel_end\",\"seconds\":%.1f,"
	       "\"loadavg_end\":[%.2f,%.2f,%.2f]}\n", t0, l1[0], l1[1], l1[2]);
	return 0;
}
