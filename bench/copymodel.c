// SPDX-License-Identifier: GPL-2.0
/*
 * copymodel - the copy shapes of folio_mc_copy() before and after the
 * series, timed natively on the host, on the same buffers, in one run.
 *
 * On x86-64 with ERMS, copy_mc_to_kernel() is a `rep movsb`. Before the
 * series a folio is copied one 4KB page per call; after it, in one call:
 *   kind "2MB":   512 calls of 4KB ("per-page") vs 1 call ("one call")
 *   kind "whole": the whole buffer (1GB by default, a 1GB hugetlb folio)
 *                 in 4KB calls vs in 1 call
 * with glibc memcpy() of the same chunks as the limit. Every chunk is
 * copied once per pass over a buffer much larger than the caches, so the
 * source is cold, as when migrating a folio. The shapes are interleaved,
 * rotating their order each run, so that drift hits them all, and the
 * process is pinned to one CPU. One JSON object per line, tagged "native".
 *
 *   copymodel [-s SIZE_MB] [-r RUNS] [-c CPU] [-q]
 */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PG	4096UL
#define THP	(2UL << 20)

static unsigned long size = 1024UL << 20;
static char *src, *dst;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One copy_mc_to_kernel() call: a call boundary and one rep movsb. */
static void __attribute__((noinline)) copy_call(void *d, const void *s, size_t n)
{
#ifdef __x86_64__
	asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
#else
	memcpy(d, s, n);
#endif
}

/* Copy the whole buffer as folios of folio bytes, in calls of call bytes. */
static void pass_calls(unsigned long folio, unsigned long call)
{
	unsigned long f, off;

	for (f = 0; f < size; f += folio)
		for (off = 0; off < folio; off += call)
			copy_call(dst + f + off, src + f + off, call);
}

static void pass_memcpy(unsigned long folio)
{
	unsigned long f;

	for (f = 0; f < size; f += folio)
		memcpy(dst + f, src + f, folio);
}

struct shape {
	const char *name, *group;
	unsigned long folio, call;	/* call 0: glibc memcpy */
	double *gibs;
};

int main(int argc, char **argv)
{
	struct shape shapes[] = {
		{ "per-page", "2MB", THP, PG, NULL },
		{ "one call", "2MB", THP, THP, NULL },
		{ "memcpy", "2MB", THP, 0, NULL },
		{ "per-page", "whole", 0, PG, NULL },
		{ "one call", "whole", 0, 0, NULL },
		{ "memcpy", "whole", 0, 0, NULL },
	};
	const int nshapes = sizeof(shapes) / sizeof(shapes[0]);
	int runs = 10, cpu = 0, opt, r, i;
	double load[3] = { -1, -1, -1 };
	cpu_set_t set;
	FILE *f;

	while ((opt = getopt(argc, argv, "s:r:c:q")) != -1) {
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
		case 'q':
			size = 64UL << 20;
			runs = 3;
			break;
		default:
			fprintf(stderr, "usage: copymodel [-s SIZE_MB] [-r RUNS] [-c CPU] [-q]\n");
			return 2;
		}
	}
	if (size < THP || size % THP || runs < 2) {
		fprintf(stderr, "copymodel: SIZE must be a multiple of 2 MB and RUNS at least 2\n");
		return 2;
	}
	/* The "whole" shapes copy the buffer as one folio */
	shapes[3].folio = shapes[4].folio = shapes[4].call = shapes[5].folio = size;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "copymodel: cannot pin to CPU %d, running unpinned\n", cpu);
	src = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || dst == MAP_FAILED) {
		fprintf(stderr, "copymodel: cannot map 2 x %lu MB\n", size >> 20);
		return 1;
	}
	for (i = 0; i < (int)(size / 8); i++)
		((uint64_t *)src)[i] = i * 0x9e3779b97f4a7c15ULL;
	memset(dst, 0, size);
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
			load[0] = -1;
		fclose(f);
	}
	printf("{\"tag\":\"native\",\"info\":\"copymodel\",\"bytes\":%lu,\"runs\":%d,"
	       "\"cpu\":%d,\"loadavg_1m\":%.2f,\"x86_rep_movsb\":%s}\n", size, runs, cpu,
	       load[0],
#ifdef __x86_64__
	       "true"
#else
	       "false"
#endif
	       );
	for (i = 0; i < nshapes; i++)
		shapes[i].gibs = calloc(runs, sizeof(double));

	for (r = 0; r < runs; r++) {
		for (i = 0; i < nshapes; i++) {
			struct shape *s = &shapes[(i + r) % nshapes];
			double t = now();

			if (s->call)
				pass_calls(s->folio, s->call);
			else
				pass_memcpy(s->folio);
			t = now() - t;
			s->gibs[r] = size / t / (1UL << 30);
			if (memcmp(src, dst, size)) {
				printf("{\"tag\":\"native\",\"error\":\"%s: copy differs\"}\n", s->name);
				return 1;
			}
			memset(dst, 0, PG);	/* a stale copy must not pass the check */
		}
	}
	for (i = 0; i < nshapes; i++) {
		double mean = 0, var = 0;

		for (r = 0; r < runs; r++)
			mean += shapes[i].gibs[r] / runs;
		for (r = 0; r < runs; r++)
			var += (shapes[i].gibs[r] - mean) * (shapes[i].gibs[r] - mean) / (runs - 1);
		printf("{\"tag\":\"native\",\"bench\":\"copy_model\",\"kind\":\"%s\",\"shape\":\"%s\","
		       "\"bytes\":%lu,\"unit\":\"GiB/s\",\"n\":%d,\"mean\":%.6g,\"std\":%.6g,"
		       "\"folio_bytes\":%lu,\"call_bytes\":%lu,\"values\":[", shapes[i].group,
		       shapes[i].name, size, runs, mean, sqrt(var), shapes[i].folio, shapes[i].call);
		for (r = 0; r < runs; r++)
			printf("%s%.6g", r ? "," : "", shapes[i].gibs[r]);
		printf("]}\n");
	}
	return 0;
}
