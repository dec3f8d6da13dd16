/* test_util.h — the one check harness of the unit tests: assertion macros
 * that count every check and every failure, print file:line, the expression
 * and (for the typed forms) what was got and what was wanted, and a summary
 * line that gives the program's exit code.
 *
 * Typical use:
 *     CHECK(st == XDNN_OK, "%s: %s", what, optest_first_error(dg));
 *     CHECK_EQ(y.rank, 4);
 *     CHECK_NEAR(mean, 0.0, 1e-12, "row %d", r);
 *     CHECK_STR(message, "conv: attribute 'groups' must be >= 1, got 0");
 *     return test_summary("test_op_conv");  // "test_op_conv: N checks, M failures"
 *
 * Every macro takes an optional printf-style context after its fixed
 * arguments (a string literal first); its arguments are evaluated only when
 * the check fails, so they may be costly or meaningful only then.  Only the
 * first TEST_MAX_REPORTS failures are printed (a systematic bug in a sweep
 * of millions of checks would otherwise flood the log); all are counted.
 * The implementation is harness.c.
 */
#ifndef XDNN_TEST_UTIL_H
#define XDNN_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>

enum { TEST_MAX_REPORTS = 50 };

/* cond is true.  The context, if any, follows the expression. */
#define CHECK(cond, ...) TEST_REPORT_(test_check_((cond) ? true : false, __FILE__, __LINE__, #cond), __VA_ARGS__)

/* CHECK, reported at `line` of this file: for helpers that check on behalf
 * of a caller which passes its __LINE__. */
#define CHECK_AT(line, cond, ...) TEST_REPORT_(test_check_((cond) ? true : false, __FILE__, (line), #cond), __VA_ARGS__)

/* Two integers are equal (compared as long long). */
#define CHECK_EQ(got, want, ...)                                                                                       \
    TEST_REPORT_(test_check_eq_((long long)(got), (long long)(want), __FILE__, __LINE__, #got, #want), __VA_ARGS__)

/* |got - want| <= tol; a NaN on either side fails. */
#define CHECK_NEAR(got, want, tol, ...)                                                                                \
    TEST_REPORT_(test_check_near_((double)(got), (double)(want), (double)(tol), __FILE__, __LINE__, #got), __VA_ARGS__)

/* Two strings are equal; NULL on either side fails. */
#define CHECK_STR(got, want, ...) TEST_REPORT_(test_check_str_((got), (want), __FILE__, __LINE__, #got), __VA_ARGS__)

/* Run one counted check; on failure end its report with the context.  The
 * " " keeps the format non-empty when there is no context. */
#define TEST_REPORT_(passed, ...)                                                                                      \
    do {                                                                                                               \
        if (!(passed))                                                                                                 \
            test_context_(" " __VA_ARGS__);                                                                            \
    } while (0)

/* Print "NAME: N checks, M failures" (stdout) and return the exit code:
 * 0 when every check passed, 1 when one failed or when no check ran at all
 * (a test that checks nothing cannot fail, which is a defect). */
int test_summary(const char *name);

/* Failures so far (for a main that prints a reproduction hint, e.g. a seed). */
long test_failures(void);

/* A fresh directory /tmp/<prefix>_XXXXXX for files a test writes; its path
 * goes to dir (cap >= 64 is plenty).  Returns false (after perror) when it
 * cannot be made.  test_tmpdir_remove deletes it with everything in it. */
bool test_tmpdir_make(char *dir, size_t cap, const char *prefix);
void test_tmpdir_remove(const char *dir);

/* The macros' workers.  Each counts one check and returns true when it
 * passed; on a failure it prints "file:line: FAIL: ..." without the newline,
 * which test_context_ (always called right after a failure) ends, after the
 * caller's context when there is one.  Not for direct use. */
bool test_check_(bool ok, const char *file, int line, const char *expr);
bool test_check_eq_(long long got, long long want, const char *file, int line, const char *got_expr,
                    const char *want_expr);
bool test_check_near_(double got, double want, double tol, const char *file, int line, const char *got_expr);
bool test_check_str_(const char *got, const char *want, const char *file, int line, const char *got_expr);
/* fmt is " " followed by the caller's format (the space keeps it non-empty). */
void test_context_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
