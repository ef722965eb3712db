// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * icount-plugin: a QEMU TCG plugin that counts the guest instructions
 * executed inside given guest virtual address ranges (for a kernel: the
 * functions of one object file), and writes one line per range at exit.
 *
 * Built against include/qemu/qemu-plugin.h of the installed QEMU's source
 * (plugin API version 1, QEMU 7.2); see scripts/icount.
 *
 * Arguments (QEMU 7.2: -plugin icount-plugin.so,KEY=VALUE,...):
 *   ranges=FILE     lines "NAME START END" (hex or decimal, END exclusive);
 *                   blank lines and lines starting with '#' are skipped
 *   range=[NAME:]START-END   one range, may be repeated
 *   out=FILE        where the counts go (default: QEMU's log, via
 *                   qemu_plugin_outs)
 *   mode=inline|cb  inline: one inline add per instruction into a shared
 *                   counter (exact and cheapest, only with one vCPU);
 *                   cb: a TB-execution callback per translated block that
 *                   adds its per-range instruction tally to per-vCPU
 *                   counters, summed at exit. Default: inline with one
 *                   vCPU, cb otherwise.
 *
 * Output: "# icount mode=M vcpus=N ranges=R", then per range (in the order
 * given) "NAME<TAB>START<TAB>END<TAB>INSNS<TAB>ENTRIES", where ENTRIES is
 * how often the range's first instruction ran (calls, for a function).
 * A range may overlap others: an instruction counts in each range holding it.
 *
 * Exactness: inline mode counts an instruction each time it starts, so an
 * instruction that faults and is restarted counts twice; cb mode counts a
 * whole block at its start, so an exception in the middle of a block
 * counts the block's rest too. Kernel code outside uaccess does not fault.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct range {
	char *name;
	uint64_t start, end;	/* [start, end) */
};

static struct range *ranges;
static size_t nranges;
static uint64_t lo = UINT64_MAX, hi;	/* the union's bounds, a fast reject */

/*
 * Lookup at translation time: ranges up to BIG_RANGE bytes (functions)
 * sorted by start, with the largest end over each prefix, searched by
 * bisection; bigger ones (a whole kernel text) checked one by one.
 */
#define BIG_RANGE	(1ULL << 20)
static size_t *by_start, nsmall, *big, nbig;
static uint64_t *prefix_end;

static bool inline_mode;
static int nvcpus = 1;
/* inline mode: insns[r], entries[r]; cb mode: [vcpu * nranges + r] */
static uint64_t *insns, *entries;
static char *out_path;

/* cb mode: what one translated block adds when it runs. */
struct tb_tally {
	size_t n;
	struct {
		uint32_t range;
		uint32_t insns;
		uint32_t entries;
	} t[];
};

static void fail(const char *fmt, const char *arg)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), fmt, arg);
	fprintf(stderr, "icount-plugin: error: %s\n", buf);
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && end != s && *end == '\0';
}

static bool add_range(const char *name, uint64_t start, uint64_t end)
{
	struct range *r;

	if (end <= start)
		return false;
	r = realloc(ranges, (nranges + 1) * sizeof(*ranges));
	if (!r)
		return false;
	ranges = r;
	ranges[nranges].name = strdup(name);
	ranges[nranges].start = start;
	ranges[nranges].end = end;
	nranges++;
	if (start < lo)
		lo = start;
	if (end > hi)
		hi = end;
	return true;
}

/* "[NAME:]START-END" */
static bool parse_range_arg(const char *arg)
{
	char buf[256], *colon, *dash, *spec = buf;
	const char *name;
	uint64_t s, e;

	if (strlen(arg) >= sizeof(buf))
		return false;
	strcpy(buf, arg);
	colon = strchr(buf, ':');
	if (colon) {
		*colon = '\0';
		spec = colon + 1;
	}
	dash = strchr(spec, '-');
	if (!dash)
		return false;
	*dash = '\0';
	if (!parse_u64(spec, &s) || !parse_u64(dash + 1, &e))
		return false;
	name = colon ? buf : arg;
	return add_range(name, s, e);
}

static bool read_ranges_file(const char *path)
{
	char line[1024], name[512], s[64], e[64];
	uint64_t start, end;
	unsigned int lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		fail("cannot open ranges file %s", path);
		return false;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (sscanf(line, "%511s %63s %63s", name, s, e) != 3 ||
		    !parse_u64(s, &start) || !parse_u64(e, &end) ||
		    !add_range(name, start, end)) {
			char where[600];

			snprintf(where, sizeof(where), "%s:%u", path, lineno);
			fail("bad line %s (want: NAME START END, END > START)", where);
			fclose(f);
			return false;
		}
	}
	fclose(f);
	return true;
}

static int cmp_start(const void *a, const void *b)
{
	const struct range *x = &ranges[*(const size_t *)a], *y = &ranges[*(const size_t *)b];

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool build_index(void)
{
	size_t r, i;

	by_start = calloc(nranges, sizeof(*by_start));
	big = calloc(nranges, sizeof(*big));
	prefix_end = calloc(nranges, sizeof(*prefix_end));
	if (!by_start || !big || !prefix_end)
		return false;
	for (r = 0; r < nranges; r++) {
		if (ranges[r].end - ranges[r].start > BIG_RANGE)
			big[nbig++] = r;
		else
			by_start[nsmall++] = r;
	}
	qsort(by_start, nsmall, sizeof(*by_start), cmp_start);
	for (i = 0; i < nsmall; i++) {
		uint64_t e = ranges[by_start[i]].end;

		prefix_end[i] = i && prefix_end[i - 1] > e ? prefix_end[i - 1] : e;
	}
	return true;
}

/* The ranges holding va, into hits[] (at most nranges); their number. */
static size_t ranges_at(uint64_t va, size_t *hits)
{
	size_t a = 0, b = nsmall, n = 0, i;

	/* a = number of small ranges starting at or before va */
	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (ranges[by_start[m]].start <= va)
			a = m + 1;
		else
			b = m;
	}
	for (i = a; i-- > 0 && prefix_end[i] > va;)
		if (ranges[by_start[i]].end > va)
			hits[n++] = by_start[i];
	for (i = 0; i < nbig; i++)
		if (va >= ranges[big[i]].start && va < ranges[big[i]].end)
			hits[n++] = big[i];
	return n;
}

static void tb_exec(unsigned int vcpu, void *udata)
{
	const struct tb_tally *tt = udata;
	uint64_t *ci, *ce;
	size_t i;

	if ((int)vcpu >= nvcpus)	/* cannot happen: max_vcpus bounds it */
		return;
	ci = insns + (size_t)vcpu * nranges;
	ce = entries + (size_t)vcpu * nranges;
	for (i = 0; i < tt->n; i++) {
		ci[tt->t[i].range] += tt->t[i].insns;
		ce[tt->t[i].range] += tt->t[i].entries;
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i, r, k, h, nh;
	struct tb_tally *tt = NULL;
	static __thread size_t *hits;	/* per translating thread */
	uint64_t first = qemu_plugin_tb_vaddr(tb);

	/* A block is contiguous and at most a few KB: cheap reject. */
	if (first >= hi || first + 4096 * 4 < lo)
		return;
	if (!hits) {
		hits = calloc(nranges, sizeof(*hits));
		if (!hits)
			abort();
	}
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);

		if (va < lo || va >= hi)
			continue;
		nh = ranges_at(va, hits);
		for (h = 0; h < nh; h++) {
			bool entry;

			r = hits[h];
			entry = va == ranges[r].start;
			if (inline_mode) {
				qemu_plugin_register_vcpu_insn_exec_inline(
					insn, QEMU_PLUGIN_INLINE_ADD_U64, &insns[r], 1);
				if (entry)
					qemu_plugin_register_vcpu_insn_exec_inline(
						insn, QEMU_PLUGIN_INLINE_ADD_U64, &entries[r], 1);
				continue;
			}
			for (k = 0; tt && k < tt->n && tt->t[k].range != r; k++)
				;
			if (!tt || k == tt->n) {
				/* A new range for this block: grow by one. */
				k = tt ? tt->n : 0;
				tt = realloc(tt, sizeof(*tt) + (k + 1) * sizeof(tt->t[0]));
				if (!tt)
					abort();
				tt->n = k + 1;
				tt->t[k].range = r;
				tt->t[k].insns = 0;
				tt->t[k].entries = 0;
			}
			tt->t[k].insns++;
			tt->t[k].entries += entry;
		}
	}
	/* The tally lives as long as the block may run: never freed. */
	if (tt)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec,
						     QEMU_PLUGIN_CB_NO_REGS, tt);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	FILE *f = NULL;
	size_t r;
	int v;

	if (out_path) {
		f = fopen(out_path, "w");
		if (!f)
			fail("cannot write %s", out_path);
	}
	for (r = 0; r <= nranges; r++) {
		char line[768];
		uint64_t ni = 0, ne = 0;

		if (r == 0) {
			snprintf(line, sizeof(line), "# icount mode=%s vcpus=%d ranges=%zu\n",
				 inline_mode ? "inline" : "cb", nvcpus, nranges);
		} else {
			const struct range *rg = &ranges[r - 1];

			if (inline_mode) {
				ni = insns[r - 1];
				ne = entries[r - 1];
			} else {
				for (v = 0; v < nvcpus; v++) {
					ni += insns[(size_t)v * nranges + r - 1];
					ne += entries[(size_t)v * nranges + r - 1];
				}
			}
			snprintf(line, sizeof(line), "%s\t0x%" PRIx64 "\t0x%" PRIx64
				 "\t%" PRIu64 "\t%" PRIu64 "\n",
				 rg->name, rg->start, rg->end, ni, ne);
		}
		if (f)
			fputs(line, f);
		else
			qemu_plugin_outs(line);
	}
	if (f && fclose(f))
		fail("cannot write %s", out_path);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *mode = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "ranges=", 7)) {
			if (!read_ranges_file(a + 7))
				return -1;
		} else if (!strncmp(a, "range=", 6)) {
			if (!parse_range_arg(a + 6)) {
				fail("bad range '%s' (want [NAME:]START-END, END > START)", a + 6);
				return -1;
			}
		} else if (!strncmp(a, "out=", 4)) {
			out_path = strdup(a + 4);
		} else if (!strncmp(a, "mode=", 5)) {
			mode = a + 5;
			if (strcmp(mode, "inline") && strcmp(mode, "cb")) {
				fail("mode must be inline or cb, not '%s'", mode);
				return -1;
			}
		} else {
			fail("unknown argument '%s' (ranges=FILE, range=[NAME:]S-E, out=FILE, mode=inline|cb)", a);
			return -1;
		}
	}
	if (!nranges) {
		fail("%s", "no range given (ranges=FILE or range=[NAME:]START-END)");
		return -1;
	}
	if (info->system_emulation && info->system.max_vcpus > 0)
		nvcpus = info->system.max_vcpus;
	if (mode && !strcmp(mode, "inline") && nvcpus > 1) {
		/* Inline adds from several vCPU threads would race. */
		fail("%s", "mode=inline needs a single vCPU; use mode=cb");
		return -1;
	}
	inline_mode = mode ? !strcmp(mode, "inline") : nvcpus == 1;
	if (inline_mode)
		nvcpus = 1;
	insns = calloc((size_t)nvcpus * nranges, sizeof(*insns));
	entries = calloc((size_t)nvcpus * nranges, sizeof(*entries));
	if (!insns || !entries || !build_index())
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
