/* diffharness.h — what every GPU differential tester (tests/gpu/difftest*.c)
 * shares: the command line (--quick --bench --list --dry FILTER), the case
 * loop with its "no GPU" exit 77, the PASS/FAIL lines and the "N passed,
 * N failed" summary, the setup of one case (parse, bind, Philox inputs, CPU
 * reference) and the comparison of one GPU output against the CPU reference
 * with the METHOD.md tolerances.  Each tester keeps its own sweeps, its own
 * tolerance rules (per-dtype default, scaled, tf32 models) and its own dry
 * and bench details.  Built into each tester by tests/gpu/run.sh. */
#ifndef XDNN_DIFFHARNESS_H
#define XDNN_DIFFHARNESS_H

#include "core/exec.h"
#include "gpu/gpu.h"

#include <stdbool.h>
#include <stddef.h>

/* The command line: [--quick] [--bench] [--list] [--dry] [FILTER]. */
typedef struct dh_opts {
    bool quick, bench, list, dry;
    const char *filter; /* run only cases whose id contains it (NULL = all) */
} dh_opts;

/* Parse argv; allow_bench false makes --bench an ordinary filter word, as
 * for a tester without a bench sweep. */
void dh_parse_args(int argc, char **argv, bool allow_bench, dh_opts *o);

/* One case's result: PASS/FAIL, the engines that ran it, the details. */
typedef struct dh_outcome {
    bool ok;
    double ms; /* bench: the timed partition's median (conv's BENCH line) */
    char engines[512];
    char msg[4096];
} dh_outcome;

/* A tester: its name (for the "no GPU" line), its case table (seen through
 * accessors) and how to run case i.  bench_line, when set, prints a --bench
 * result instead of the PASS/FAIL line (the graph is then not printed). */
typedef struct dh_tester {
    const char *name;
    int ncases;
    const char *(*case_id)(int i);
    const char *(*case_text)(int i);
    void (*run_case)(int i, dh_outcome *out);
    void (*bench_line)(int i, const dh_outcome *out);
} dh_tester;

/* Run the selected cases: without --list or --dry and with no GPU, print
 * "NAME: no GPU: why" and "0 passed, 0 failed (not run)" and return 77;
 * else one line per case (the graph after a failure), the summary (not for
 * --list), and return 0 when all passed, 1 when one failed. */
int dh_run(const dh_tester *t, const dh_opts *o);

/* One case's graph, its CPU and GPU run states and diagnostics. */
typedef struct dh_case_run {
    xdnn_diags_t *d;
    xdnn_module_t *m;
    xgraph *g;
    run_state cpu, gpu;
    gpu_report rep;
} dh_case_run;

/* Parse and bind the case's graph, load the same Philox inputs into both
 * run states, allocate the GPU results and, when reference, run the CPU
 * reference.  On an error out->msg says so.  r must be zeroed; dh_case_end
 * frees it even after an error. */
xdnn_status dh_case_begin(dh_case_run *r, const char *id, const char *text, bool reference, dh_outcome *out);

/* Run the graph on the GPU (gpu_run with o) and append the engines that ran
 * it to out->engines; on an error out->msg says so. */
xdnn_status dh_gpu_run(dh_case_run *r, const gpu_run_opts *o, dh_outcome *out);

/* Print the diagnostics of a failed case (stdout) and free everything. */
void dh_case_end(dh_case_run *r, const char *id, bool ok);

/* A case's own switches (XDNN_... environment variables): dh_env_set sets NAME to VALUE (NULL: unsets it) for the
 * case and remembers the process's value; dh_env_restore puts every one back, the last set first, so a run under
 * the user's own setting keeps it past the cases that set theirs.  Zero-initialize; at most DH_ENV_MAX a case. */
enum { DH_ENV_MAX = 24 };
typedef struct dh_env {
    int n;
    struct {
        char name[48];
        char *was; /* strdup of the process's value, NULL when it was unset */
    } e[DH_ENV_MAX];
} dh_env;
void dh_env_set(dh_env *env, const char *name, const char *value);
void dh_env_restore(dh_env *env);

/* --dry: engine selection for g on a modelled H100 (132 SMs, sm_90), no GPU
 * needed; the chosen engines, comma-separated, are appended to engines.
 * DIFFTEST_VERBOSE=1 prints every engine considered. */
xdnn_status dh_dry_select(xgraph *g, char *engines, size_t len, xdnn_diags_t *d);

/* Every output of g in the GPU run state is finite (bench: unchecked but
 * still written). */
bool dh_outputs_finite(const dh_case_run *r);

/* max |v| and rms of a tensor (0 for an empty one). */
double dh_tensor_absmax(const host_tensor *t);
double dh_tensor_rms(const host_tensor *t);

/* compare_default_tolerance for output tensor t of g, by its producer op. */
void dh_default_tolerance(const xgraph *g, int t, double *rtol, double *atol);

/* How one output is judged beyond rtol/atol. */
typedef struct dh_rule {
    double rtol, atol;
    double max_rel_norm;  /* > 0: rel_norm must not exceed it (tf32 model) */
    bool require_nonzero; /* a reference of all zeros fails: it compares nothing */
} dh_rule;

/* Compare the GPU output t of r with the CPU reference under rule; append
 * " name: max_abs=... max_rel=... rel_norm=..." to msg at *n (and, when it
 * fails, the worst elements and the mismatch count).  Returns whether it
 * passed; *nonzero (may be NULL) says whether the reference has a nonzero. */
bool dh_compare_output(const dh_case_run *r, int t, const dh_rule *rule, char *msg, size_t cap, size_t *n,
                       bool *nonzero);

#endif
