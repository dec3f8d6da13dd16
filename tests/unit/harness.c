/* harness.c — the implementation of test_util.h: the counters and reports
 * behind its check macros, the summary line, and scratch directories for
 * tests that write files.  (Not named test_*.c: the Makefile builds those as
 * programs and links every other .c here into each of them.) */
#include "test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long checks, failures;
/* Whether the failure being reported is printed (false past the cap), so
 * that test_context_ prints its part only when the header was printed. */
static bool reporting;

/* Count a failure and, below the cap, start its report. */
static bool fail_header(const char *file, int line)
{
    failures++;
    reporting = failures <= TEST_MAX_REPORTS;
    if (reporting)
        fprintf(stderr, "%s:%d: FAIL: ", file, line);
    return reporting;
}

bool test_check_(bool ok, const char *file, int line, const char *expr)
{
    checks++;
    if (ok)
        return true;
    if (fail_header(file, line))
        fputs(expr, stderr);
    return false;
}

bool test_check_eq_(long long got, long long want, const char *file, int line, const char *got_expr,
                    const char *want_expr)
{
    checks++;
    if (got == want)
        return true;
    if (fail_header(file, line))
        fprintf(stderr, "%s == %s: got %lld, want %lld", got_expr, want_expr, got, want);
    return false;
}

bool test_check_near_(double got, double want, double tol, const char *file, int line, const char *got_expr)
{
    checks++;
    if (fabs(got - want) <= tol)
        return true;
    if (fail_header(file, line))
        fprintf(stderr, "%s = %.17g, want %.17g (tol %g, off by %g)", got_expr, got, want, tol, fabs(got - want));
    return false;
}

bool test_check_str_(const char *got, const char *want, const char *file, int line, const char *got_expr)
{
    checks++;
    if (got && want && strcmp(got, want) == 0)
        return true;
    if (fail_header(file, line))
        fprintf(stderr, "%s:\n  got:  %s%s%s\n  want: %s%s%s", got_expr, got ? "\"" : "", got ? got : "(null)",
                got ? "\"" : "", want ? "\"" : "", want ? want : "(null)", want ? "\"" : "");
    return false;
}

void test_context_(const char *fmt, ...)
{
    if (!reporting)
        return;
    if (fmt[1]) { /* more than the leading space: the caller gave a context */
        fputs(" --", stderr);
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
}

int test_summary(const char *name)
{
    printf("%s: %ld checks, %ld failures\n", name, checks, failures);
    if (failures > TEST_MAX_REPORTS)
        fprintf(stderr, "%s: only the first %d failures were printed\n", name, (int)TEST_MAX_REPORTS);
    if (checks == 0) {
        fprintf(stderr, "%s: no check ran\n", name);
        return 1;
    }
    return failures ? 1 : 0;
}

long test_failures(void) { return failures; }

bool test_tmpdir_make(char *dir, size_t cap, const char *prefix)
{
    snprintf(dir, cap, "/tmp/%s_XXXXXX", prefix);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return false;
    }
    return true;
}

void test_tmpdir_remove(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}
