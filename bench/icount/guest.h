/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest programs of scripts/icount (uffdmove4k, migratefolios)
 * share: an error line and exit, and the parsing of a count argument.
 * Define PROG, the program's name for its error lines, before including.
 */
#ifndef ICOUNT_GUEST_H
#define ICOUNT_GUEST_H
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static unsigned long parse_count(const char *s, const char *what, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		die("%s must be a whole number from 0 to %lu, not '%s'", what, max, s);
	return v;
}
#endif
