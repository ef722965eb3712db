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
 * how often the range's first instruction ran (calls, for a function);
 * with a gate, then "gated:NAME<TAB>0x0<TAB>0x0<TAB>VALUE<TAB>0" lines:
 * gated:kernel is the gated count, the others its statistics.
 * A range may overlap others: an instruction counts in each range holding it.
 *
 * Exactness: inline mode counts an instruction each time it starts, so an
 * instruction that faults and is restarted counts twice; cb mode counts a
 * whole block at its start, so an exception in the middle of a block
 * counts the block's rest too. Kernel code outside uaccess does not fault.
 *
 * Gated count (when the ranges file has an "@gate" line): every kernel
 * instruction (an address with bit 63 set) that a task executes between
 * entering the gate function (the system call's handler, e.g.
 * __x64_sys_ioctl) and its return to user mode, except what runs in an
 * asynchronous interrupt (and anything nested in one): a whole-kernel
 * figure that does not depend on how many timer ticks, softirqs or other
 * tasks happen to run, so it is exact as the per-function ranges are.
 * Directives (ranges file lines; ADDR/START/END as for ranges):
 *   @gate ADDR              a block starting at ADDR opens the gate
 *   @async START [END]      an asynchronous interrupt entry: a block that
 *                           starts at START (or anywhere in [START, END):
 *                           a table of stubs) begins an interrupt frame
 *                           whose instructions are not counted
 *   @sync START [END]       a synchronous exception entry (page fault,
 *                           int3...): a frame counted as its parent is
 *   @gate-end ADDR          the gate function's return instruction(s):
 *                           the block ending there closes the gate
 *   @pause ADDR             a function not counted from its entry to its
 *   @resume ADDR FUNCTION   return (ADDR: a return instruction of the
 *                           function at FUNCTION), when entered from
 *                           counted code: __schedule, the preemption
 *                           entries, whose running depends on timing
 *   @schedule ADDR          entries counted in the gate's statistics
 *   @apart START END        of the gated count, what falls in these ranges
 *                           is also given apart (gated:apart): the page
 *                           allocator, whose work depends on its state
 *   @switch-out ADDR        the instruction of the context switch that
 *   @switch-in ADDR         stores the previous task's stack pointer /
 *                           loads the next one's: the address it accesses
 *                           names the task, whose gate state is saved /
 *                           restored there (so a frame, or the gate, of
 *                           one task is never applied to another)
 * How it follows a vCPU (TB-execution callbacks on every block, since an
 * inline op cannot be conditional; interrupts are delivered only between
 * blocks, so a block's first instruction tells an entry): a block at an
 * entry pushes a frame; a block ending in an exception return (x86: iretq;
 * arm64: eret) pops one, if any; the block ending in the gate function's
 * return closes the gate, and so does (as a fallback) any block at a user
 * address (bit 63 clear), which also drops all frames. A block's instructions are
 * counted (at its start, all of them) when the gate is open and no frame
 * is asynchronous. Statistics (the "gated:" lines) say how often each
 * case happened.
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
static bool target_arm64;

/* ---- gated counting ---- */
enum {
	TB_USER = 1,		/* starts at a user address */
	TB_GATE = 2,		/* starts at the gate function */
	TB_ASYNC = 4,		/* starts at an asynchronous interrupt entry */
	TB_SYNC = 8,		/* starts at a synchronous exception entry */
	TB_SCHED = 16,		/* starts at __schedule */
	TB_ERET = 32,		/* ends in an exception return (iretq, eret) */
	TB_SYSRET = 64,		/* ends in sysretq */
	TB_GATE_END = 128,	/* ends in the gate function's return */
	TB_PAUSE = 256,		/* starts at a paused function (__schedule) */
	TB_RESUME = 512,	/* ends in that function's return */
};
#define MAX_FRAMES	64

struct gate_tb {
	uint32_t flags;
	uint32_t insns;		/* kernel instructions in the block */
	uint64_t pause;		/* TB_PAUSE: the function (its address) */
	uint64_t resume;	/* TB_RESUME: the function it returns from */
	uint32_t apart;		/* instructions in @apart ranges */
};

/* What follows a task across context switches. */
struct task_state {
	uint8_t gate;		/* in a gated system call */
	uint8_t depth;		/* exception frames */
	uint64_t paused;	/* in this paused function, entered from counted code */
	uint64_t async;		/* bit d: frame d (1-based) is asynchronous */
};

enum {
	ST_INSNS, ST_GATES, ST_SCHED_COUNTED, ST_SCHED_GATED, ST_ASYNC_GATED,
	ST_SYNC_COUNTED, ST_ERET_GATED, ST_SWITCHES, ST_SWITCHES_GATED,
	ST_USER_IN_FRAME, ST_OVERFLOW, ST_TASKS_FULL, ST_SYSRET_IN_FRAME, ST_USER_IN_GATE,
	ST_APART, NSTATS
};
static const char *const stat_names[NSTATS] = {
	[ST_INSNS] = "gated:kernel",		/* the count */
	[ST_GATES] = "gated:gate-entries",	/* gate function entries */
	[ST_SCHED_COUNTED] = "gated:schedule-in-syscall",	/* __schedule from the syscall (paused) */
	[ST_SCHED_GATED] = "gated:schedule-in-interrupt",	/* ... from an interrupt of it */
	[ST_ASYNC_GATED] = "gated:interrupts",	/* interrupts excluded */
	[ST_SYNC_COUNTED] = "gated:exceptions-counted",
	[ST_ERET_GATED] = "gated:exception-returns",
	[ST_SWITCHES] = "gated:switches",	/* context switches seen */
	[ST_SWITCHES_GATED] = "gated:switches-from-gated",
	[ST_USER_IN_FRAME] = "gated:user-in-frame",	/* anomaly */
	[ST_OVERFLOW] = "gated:frame-overflow",	/* anomaly */
	[ST_TASKS_FULL] = "gated:task-table-full",	/* anomaly */
	[ST_SYSRET_IN_FRAME] = "gated:sysret-in-frame",	/* anomaly */
	[ST_USER_IN_GATE] = "gated:user-in-gate",	/* the gate's end was missed */
	[ST_APART] = "gated:apart",	/* of the count, in the @apart ranges */
};

struct addr_set {
	size_t n;
	struct { uint64_t start, end; uint32_t flag; } *r;
};
static struct addr_set gate_addrs;	/* gate, async, sync, schedule */
static struct addr_set apart;		/* counted, and also reported apart */
static uint64_t *switch_out, *switch_in, *gate_ends, *resumes, *resume_of;
static size_t nswitch_out, nswitch_in, ngate_ends, nresumes, nresume_of;
static bool gated;

#define TASK_SLOTS	(1u << 15)
struct vcpu_gate {
	struct task_state cur;
	uint64_t stats[NSTATS];
	uint64_t *keys;		/* task table: open addressing, 0 = free */
	struct task_state *saved;
};
static struct vcpu_gate *vg;
static int gate_nvcpus = 1;

static bool parse_directive(const char *line);

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
		if (line[0] == '@') {
			if (parse_directive(line))
				continue;
			snprintf(name, sizeof(name), "%s:%u", path, lineno);
			fail("bad directive %s (want @gate|@gate-end|@schedule|@pause|@switch-out|"
			     "@switch-in ADDR, @async|@sync START [END], @apart START END, "
			     "or @resume ADDR FUNCTION)", name);
			fclose(f);
			return false;
		}
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

static bool add_addr(struct addr_set *set, uint64_t start, uint64_t end, uint32_t flag)
{
	void *p;

	if (end <= start)
		return false;
	p = realloc(set->r, (set->n + 1) * sizeof(*set->r));
	if (!p)
		return false;
	set->r = p;
	set->r[set->n].start = start;
	set->r[set->n].end = end;
	set->r[set->n].flag = flag;
	set->n++;
	return true;
}

static bool add_insn_addr(uint64_t **v, size_t *n, uint64_t a)
{
	uint64_t *p = realloc(*v, (*n + 1) * sizeof(**v));

	if (!p)
		return false;
	p[(*n)++] = a;
	*v = p;
	return true;
}

/* "@KIND ADDR [END]": false if malformed. */
static bool parse_directive(const char *line)
{
	char kind[32], a[64], b[64];
	uint64_t s, e;
	int n = sscanf(line, "@%31s %63s %63s", kind, a, b);

	if (n < 2 || !parse_u64(a, &s))
		return false;
	if (n == 3) {
		if (!parse_u64(b, &e))
			return false;
	} else {
		e = s + 1;
	}
	if (!strcmp(kind, "gate") && n == 2) {
		gated = true;
		return add_addr(&gate_addrs, s, e, TB_GATE);
	}
	if (!strcmp(kind, "async"))
		return add_addr(&gate_addrs, s, e, TB_ASYNC);
	if (!strcmp(kind, "sync"))
		return add_addr(&gate_addrs, s, e, TB_SYNC);
	if (!strcmp(kind, "schedule") && n == 2)
		return add_addr(&gate_addrs, s, e, TB_SCHED);
	if (!strcmp(kind, "apart") && n == 3)
		return add_addr(&apart, s, e, 0);
	if (!strcmp(kind, "pause") && n == 2)
		return add_addr(&gate_addrs, s, e, TB_PAUSE);
	if (!strcmp(kind, "gate-end") && n == 2)
		return add_insn_addr(&gate_ends, &ngate_ends, s);
	if (!strcmp(kind, "resume") && n == 3)
		return add_insn_addr(&resumes, &nresumes, s) &&
		       add_insn_addr(&resume_of, &nresume_of, e);
	if (!strcmp(kind, "switch-out") && n == 2)
		return add_insn_addr(&switch_out, &nswitch_out, s);
	if (!strcmp(kind, "switch-in") && n == 2)
		return add_insn_addr(&switch_in, &nswitch_in, s);
	return false;
}

static uint32_t gate_flags_at(uint64_t va)
{
	uint32_t f = 0;
	size_t i;

	for (i = 0; i < gate_addrs.n; i++)
		if (va >= gate_addrs.r[i].start && va < gate_addrs.r[i].end)
			f |= gate_addrs.r[i].flag;
	return f;
}

static bool is_insn(uint64_t va, const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == va)
			return true;
	return false;
}

static inline bool counting(const struct task_state *t)
{
	return t->gate && !t->async && !t->paused;
}

static void gate_exec(unsigned int vcpu, void *udata)
{
	const struct gate_tb *g = udata;
	struct vcpu_gate *v;
	struct task_state *t;
	uint32_t f = g->flags;

	if ((int)vcpu >= gate_nvcpus)
		return;
	v = &vg[vcpu];
	t = &v->cur;
	if (f & TB_USER) {
		if (t->gate && t->depth)
			v->stats[ST_USER_IN_FRAME]++;
		if (t->gate && !t->depth)
			v->stats[ST_USER_IN_GATE]++;
		t->gate = 0;
		t->paused = 0;
		t->depth = 0;
		t->async = 0;
		return;
	}
	if (f & TB_GATE) {
		t->gate = 1;
		t->paused = 0;
		t->depth = 0;
		t->async = 0;
		v->stats[ST_GATES]++;
	}
	if (f & (TB_ASYNC | TB_SYNC)) {
		if (t->depth >= MAX_FRAMES - 1) {
			v->stats[ST_OVERFLOW]++;
		} else {
			if (t->gate && (f & TB_ASYNC) && !t->async)
				v->stats[ST_ASYNC_GATED]++;
			if ((f & TB_SYNC) && counting(t))
				v->stats[ST_SYNC_COUNTED]++;
			t->depth++;
			if (f & TB_ASYNC)
				t->async |= 1ULL << t->depth;
		}
	}
	if ((f & TB_SCHED) && t->gate) {
		if (!t->async)	/* the syscall's own: voluntary, or preempt_enable() */
			v->stats[ST_SCHED_COUNTED]++;
		else		/* preemption at an interrupt's exit */
			v->stats[ST_SCHED_GATED]++;
	}
	if ((f & TB_PAUSE) && counting(t))
		t->paused = g->pause;
	if (counting(t)) {
		v->stats[ST_INSNS] += g->insns;
		v->stats[ST_APART] += g->apart;
	}
	if ((f & TB_RESUME) && t->paused == g->resume && !t->async)
		t->paused = 0;
	if ((f & TB_GATE_END) && t->gate && !t->depth) {
		/* the handler returns: the rest of the system call's exit
		 * (signals, rescheduling at the return to user) is not its work */
		t->gate = 0;
		t->paused = 0;
	}
	if (f & TB_ERET) {
		/* The return is the block's last instruction. */
		if (t->depth) {
			if (t->gate)
				v->stats[ST_ERET_GATED]++;
			t->async &= ~(1ULL << t->depth);
			t->depth--;
		}
		/* depth 0: to user mode (a user block closes the gate next),
		 * or an IRET to self (sync_core()): nothing to do */
	}
	if ((f & TB_SYSRET) && t->depth)
		v->stats[ST_SYSRET_IN_FRAME]++;
}

static struct task_state *task_slot(struct vcpu_gate *v, uint64_t key, bool create)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ULL;
	size_t i, n;

	for (n = 0, i = h >> 49; n < TASK_SLOTS; n++, i = (i + 1) & (TASK_SLOTS - 1)) {
		if (v->keys[i] == key)
			return &v->saved[i];
		if (!v->keys[i]) {
			if (!create)
				return NULL;
			v->keys[i] = key;
			return &v->saved[i];
		}
	}
	v->stats[ST_TASKS_FULL]++;
	return NULL;
}

/* A context switch: the accessed address (the task's saved stack pointer)
 * names the task. */
static void switch_mem(unsigned int vcpu, qemu_plugin_meminfo_t info,
		       uint64_t vaddr, void *udata)
{
	struct vcpu_gate *v;
	struct task_state *t;
	static const struct task_state fresh;

	if ((int)vcpu >= gate_nvcpus || !vaddr)
		return;
	v = &vg[vcpu];
	if (udata) {		/* switch-out: save the previous task's state */
		if (counting(&v->cur) || v->cur.gate)
			v->stats[ST_SWITCHES_GATED]++;
		t = task_slot(v, vaddr, true);
		if (t)
			*t = v->cur;
	} else {		/* switch-in: the next task's, fresh if unknown */
		v->stats[ST_SWITCHES]++;
		t = task_slot(v, vaddr, false);
		v->cur = t ? *t : fresh;
	}
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

static bool insn_is(struct qemu_plugin_insn *insn, const uint8_t *bytes, size_t len)
{
	return qemu_plugin_insn_size(insn) == len &&
	       !memcmp(qemu_plugin_insn_data(insn), bytes, len);
}

static void gate_trans(struct qemu_plugin_tb *tb, uint64_t first, size_t n)
{
	static const uint8_t iretq[] = { 0x48, 0xcf }, sysretq[] = { 0x48, 0x0f, 0x07 };
	/* eret, eretaa, eretab (little-endian) */
	static const uint8_t eret[][4] = {
		{ 0xe0, 0x03, 0x9f, 0xd6 }, { 0xff, 0x0b, 0x9f, 0xd6 }, { 0xff, 0x0f, 0x9f, 0xd6 },
	};
	struct gate_tb *g;
	struct qemu_plugin_insn *last;
	size_t i;

	if (!n)
		return;
	g = calloc(1, sizeof(*g));	/* lives as long as the block: never freed */
	if (!g)
		abort();
	if (!(first >> 63)) {
		g->flags = TB_USER;
	} else {
		g->flags = gate_flags_at(first);
		g->insns = n;
		last = qemu_plugin_tb_get_insn(tb, n - 1);
		if (target_arm64) {
			for (i = 0; i < sizeof(eret) / sizeof(eret[0]); i++)
				if (insn_is(last, eret[i], 4))
					g->flags |= TB_ERET;
		} else if (insn_is(last, iretq, sizeof(iretq))) {
			g->flags |= TB_ERET;
		} else if (insn_is(last, sysretq, sizeof(sysretq))) {
			g->flags |= TB_SYSRET;
		}
		if (is_insn(qemu_plugin_insn_vaddr(last), gate_ends, ngate_ends))
			g->flags |= TB_GATE_END;
		for (i = 0; i < nresumes; i++)
			if (resumes[i] == qemu_plugin_insn_vaddr(last)) {
				g->flags |= TB_RESUME;
				g->resume = resume_of[i];
			}
		if (g->flags & TB_PAUSE)
			g->pause = first;
		for (i = 0; i < n && apart.n; i++) {
			uint64_t va = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i));
			size_t k;

			for (k = 0; k < apart.n; k++)
				if (va >= apart.r[k].start && va < apart.r[k].end) {
					g->apart++;
					break;
				}
		}
		for (i = 0; i < n && (nswitch_out || nswitch_in); i++) {
			struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
			uint64_t va = qemu_plugin_insn_vaddr(insn);

			/*
			 * MEM_RW: QEMU 7.2 calls a MEM_R callback for no load
			 * (seen: never for the stack pointer's load here). Each
			 * of the two instructions makes one access, of its kind.
			 */
			if (is_insn(va, switch_out, nswitch_out))
				qemu_plugin_register_vcpu_mem_cb(insn, switch_mem, QEMU_PLUGIN_CB_NO_REGS,
								 QEMU_PLUGIN_MEM_RW, (void *)1);
			if (is_insn(va, switch_in, nswitch_in))
				qemu_plugin_register_vcpu_mem_cb(insn, switch_mem, QEMU_PLUGIN_CB_NO_REGS,
								 QEMU_PLUGIN_MEM_RW, NULL);
		}
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, gate_exec, QEMU_PLUGIN_CB_NO_REGS, g);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i, r, k, h, nh;
	struct tb_tally *tt = NULL;
	static __thread size_t *hits;	/* per translating thread */
	uint64_t first = qemu_plugin_tb_vaddr(tb);

	if (gated)
		gate_trans(tb, first, n);
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
	/* The gated statistics: "NAME 0 0 VALUE 0", summed over vCPUs. */
	for (r = 0; gated && r < NSTATS; r++) {
		char line[128];
		uint64_t sum = 0;

		for (v = 0; v < gate_nvcpus; v++)
			sum += vg[v].stats[r];
		snprintf(line, sizeof(line), "%s\t0x0\t0x0\t%" PRIu64 "\t0\n", stat_names[r], sum);
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
	target_arm64 = info->target_name && !strcmp(info->target_name, "aarch64");
	if (gated) {
		if (!target_arm64 && (!info->target_name || strcmp(info->target_name, "x86_64"))) {
			fail("the gated count knows x86_64 and aarch64, not '%s'",
			     info->target_name ? info->target_name : "?");
			return -1;
		}
		/* per vCPU in either mode: the state is the vCPU's */
		gate_nvcpus = info->system_emulation && info->system.max_vcpus > 0 ?
			      info->system.max_vcpus : 1;
		vg = calloc(gate_nvcpus, sizeof(*vg));
		if (!vg)
			return -1;
		for (i = 0; i < gate_nvcpus; i++) {
			vg[i].keys = calloc(TASK_SLOTS, sizeof(*vg[i].keys));
			vg[i].saved = calloc(TASK_SLOTS, sizeof(*vg[i].saved));
			if (!vg[i].keys || !vg[i].saved)
				return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
