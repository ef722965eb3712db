/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kshim.h - just enough of the kernel's assembler vocabulary to assemble
 * arch/x86/lib/copy_mc_64.S and arch/x86/lib/memcpy_64.S of a kernel tree
 * into a user-space benchmark (bench/copymodel.c). Written for this
 * project; the kernel's own headers are never on the include path, so a
 * file that needs more than this fails to assemble and copymodel falls
 * back to its user-space copies, saying so.
 *
 * Every function the kernel file defines is exported to C as
 * kernel_<name>, with <name> kept as a local label for the file's own
 * jumps: the kernel's memcpy must not take the place of glibc's.
 */
#ifndef KSHIM_H
#define KSHIM_H

#ifndef __ASSEMBLER__
#error "kshim: for .S files only"
#endif

/* A function entry as the kernel aligns it (16 bytes on x86-64) */
#define KSHIM_ENTRY(name, bind)				\
	.p2align 4;					\
	bind kernel_##name;				\
	.type kernel_##name, @function;			\
	kernel_##name:;					\
	name:

#define SYM_FUNC_START(name)		KSHIM_ENTRY(name, .globl)
#define SYM_FUNC_START_NOALIGN(name)	KSHIM_ENTRY(name, .globl)
#define SYM_TYPED_FUNC_START(name)	KSHIM_ENTRY(name, .globl)
#define SYM_FUNC_START_LOCAL(name)	KSHIM_ENTRY(name, .local)
#define SYM_FUNC_END(name)		.size kernel_##name, . - kernel_##name

/* Aliases, exports: not needed by the benchmark, which calls kernel_<name> */
#define SYM_FUNC_ALIAS(alias, name)
#define SYM_FUNC_ALIAS_MEMFUNC(alias, name)
#define SYM_PIC_ALIAS(name)
#define EXPORT_SYMBOL(name)
#define EXPORT_SYMBOL_GPL(name)

/*
 * A plain return. The kernel's RET may be a jump to a return thunk
 * (retbleed/SRSO mitigations) that costs more per call; not modelled.
 */
#define RET	ret

/*
 * Exception tables: kept, in a section of their own that copymodel walks
 * (__start_kshim_extable) to send a fault in a copy routine to its fixup,
 * as the kernel would: its fault check makes the source end at an
 * inaccessible page. Writable, for the relocations of a PIE.
 */
#define KSHIM_EX_DEFAULT		0
#define KSHIM_EX_MCE_SAFE		1
#define EX_TYPE_DEFAULT			KSHIM_EX_DEFAULT
#define EX_TYPE_DEFAULT_MCE_SAFE	KSHIM_EX_MCE_SAFE
#define _ASM_EXTABLE_TYPE(from, to, type)		\
	.pushsection kshim_extable, "aw", @progbits;	\
	.quad from, to;					\
	.long type;					\
	.popsection
#define _ASM_EXTABLE(from, to)	_ASM_EXTABLE_TYPE(from, to, EX_TYPE_DEFAULT)

/*
 * ALTERNATIVE: no patching at run time here; the original instruction is
 * what a CPU without the feature runs. In memcpy_64.S that is
 * "jmp memcpy_orig" without FSRM, which is the case of copy_mc_to_kernel()
 * calling memcpy(): a CPU without ERMS has no FSRM either.
 */
.macro ALTERNATIVE oldinstr, newinstr, ft_flags
	\oldinstr
.endm

#endif /* KSHIM_H */
