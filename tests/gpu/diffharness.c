/* diffharness.c — the shared machinery of the GPU differential testers
 * (see diffharness.h). */
#include "diffharness.h"

#include "data/data.h"
#include "gpu/engine.h"
#include "gpu/lower.h"
#include "gpu/partition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dh_parse_args(int argc, char **argv, bool allow_bench, dh_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            o->quick = true;
        else if (allow_bench && strcmp(argv[i], "--bench") == 0)
            o->bench = true;
        else if (strcmp(argv[i], "--list") == 0)
            o->list = true;
        else if (strcmp(argv[i], "--dry") == 0)
            o->dry = true;
        else
            o->filter = argv[i];
    }
}

int dh_run(const dh_tester *t, const dh_opts *o)
{
    char why[512];
    if (!o->list && !o->dry && !gpu_available(why, sizeof why)) {
        printf("%s: no GPU: %s\n0 passed, 0 failed (not run)\n", t->name, why);
        return 77;
    }
    dh_outcome *out = malloc(sizeof *out); /* large: keep it off the stack */
    if (!out)
        return 2;
    int passed = 0, failed = 0;
    for (int i = 0; i < t->ncases; i++) {
        const char *id = t->case_id(i);
        if (o->filter && !strstr(id, o->filter))
            continue;
        if (o->list) {
            printf("%s\n", id);
            continue;
        }
        memset(out, 0, sizeof *out);
        t->run_case(i, out);
        if (o->bench && t->bench_line) {
            t->bench_line(i, out);
        } else {
            printf("%s %s  engines=%s %s\n", out->ok ? "PASS" : "FAIL", id, out->engines, out->msg);
            if (!out->ok)
                printf("  graph:\n%s", t->case_text(i));
        }
        fflush(stdout);
        out->ok ? passed++ : failed++;
    }
    if (!o->list)
        printf("%d passed, %d failed\n", passed, failed);
    free(out);
    gpu_release_caches();
    return failed ? 1 : 0;
}

xdnn_status dh_case_begin(dh_case_run *r, const char *id, const char *text, bool reference, dh_outcome *out)
{
    r->d = xdnn_diags_create();
    xdnn_status s = xdnn_module_parse(id, text, strlen(text), false, r->d, &r->m);
    r->g = s == XDNN_OK ? xdnn_module_find_graph(r->m, NULL) : NULL;
    if (r->g)
        s = xdnn_graph_bind(r->g, NULL, 0, r->d);
    if (s == XDNN_OK)
        s = run_state_init(&r->cpu, r->g, ".");
    if (s == XDNN_OK)
        s = run_state_init(&r->gpu, r->g, ".");
    if (s == XDNN_OK)
        s = exec_load_inputs(&r->cpu, NULL, 0, r->d);
    if (s == XDNN_OK)
        s = run_state_copy_inputs(&r->gpu, &r->cpu);
    if (s == XDNN_OK)
        s = run_state_alloc_results(&r->gpu, r->d);
    if (s == XDNN_OK && reference)
        s = run_state_alloc_results(&r->cpu, r->d);
    if (s == XDNN_OK && reference)
        s = exec_cpu_run(&r->cpu, r->d);
    if (s != XDNN_OK)
        snprintf(out->msg, sizeof out->msg, "setup or CPU reference failed (%s)", xdnn_status_name(s));
    return s;
}

void dh_env_set(dh_env *env, const char *name, const char *value)
{
    if (env->n >= DH_ENV_MAX || strlen(name) >= sizeof env->e[0].name) {
        fprintf(stderr, "difftest: a case sets more than %d switches or a name past %zu bytes (%s)\n", DH_ENV_MAX,
                sizeof env->e[0].name - 1, name);
        exit(2);
    }
    const char *was = getenv(name);
    snprintf(env->e[env->n].name, sizeof env->e[0].name, "%s", name);
    env->e[env->n++].was = was ? strdup(was) : NULL;
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

void dh_env_restore(dh_env *env)
{
    while (env->n > 0) {
        env->n--;
        if (env->e[env->n].was)
            setenv(env->e[env->n].name, env->e[env->n].was, 1);
        else
            unsetenv(env->e[env->n].name);
        free(env->e[env->n].was);
    }
}

void dh_case_end(dh_case_run *r, const char *id, bool ok)
{
    if (!ok && xdnn_diags_count(r->d)) {
        fprintf(stdout, "  diagnostics for %s:\n", id);
        xdnn_diags_print(r->d, stdout);
    }
    gpu_report_free(&r->rep);
    run_state_free(&r->cpu);
    run_state_free(&r->gpu);
    xdnn_module_destroy(r->m);
    xdnn_diags_destroy(r->d);
}

xdnn_status dh_gpu_run(dh_case_run *r, const gpu_run_opts *o, dh_outcome *out)
{
    xdnn_status s = gpu_run(&r->gpu, o, &r->rep, r->d);
    for (int i = 0; i < r->rep.nparts; i++) {
        size_t n = strlen(out->engines);
        snprintf(out->engines + n, sizeof out->engines - n, "%s%s", i ? "," : "", r->rep.parts[i].engine);
    }
    if (s != XDNN_OK)
        snprintf(out->msg, sizeof out->msg, "gpu_run failed (%s)", xdnn_status_name(s));
    return s;
}

bool dh_outputs_finite(const dh_case_run *r)
{
    bool ok = true;
    for (size_t k = 0; k < r->g->noutputs; k++) {
        tensor_stats ts;
        tensor_compute_stats(&r->gpu.tensors[r->g->outputs[k]], &ts);
        if (ts.nan || ts.inf)
            ok = false;
    }
    return ok;
}

double dh_tensor_absmax(const host_tensor *t)
{
    double *v = malloc((size_t)(t->numel ? t->numel : 1) * sizeof *v), m = 0;
    if (!v)
        return 0;
    tensor_gather(t, v);
    for (int64_t i = 0; i < t->numel; i++)
        if (fabs(v[i]) > m)
            m = fabs(v[i]);
    free(v);
    return m;
}

double dh_tensor_rms(const host_tensor *t)
{
    double *v = malloc((size_t)(t->numel ? t->numel : 1) * sizeof *v), ss = 0;
    if (!v)
        return 0;
    tensor_gather(t, v);
    for (int64_t i = 0; i < t->numel; i++)
        ss += v[i] * v[i];
    free(v);
    return t->numel ? sqrt(ss / (double)t->numel) : 0;
}

void dh_default_tolerance(const xgraph *g, int t, double *rtol, double *atol)
{
    const xtensor *xt = &g->tensors[t];
    compare_default_tolerance(xt->rdtype, xt->producer >= 0 ? g->nodes[xt->producer].op : -1, rtol, atol);
}

bool dh_compare_output(const dh_case_run *r, int t, const dh_rule *rule, char *msg, size_t cap, size_t *n,
                       bool *nonzero)
{
    const xtensor *xt = &r->g->tensors[t];
    const host_tensor *got = &r->gpu.tensors[t], *ref = &r->cpu.tensors[t];
    compare_result c;
    compare_tensors(got, ref, rule->rtol, rule->atol, &c);
    bool some = dh_tensor_absmax(ref) > 0;
    if (nonzero)
        *nonzero = some;
    bool ok = c.ok && c.count > 0 && c.count == got->numel && (some || !rule->require_nonzero) &&
              (rule->max_rel_norm <= 0 || c.rel_norm <= rule->max_rel_norm);
    size_t k = *n;
    k += (size_t)snprintf(msg + k, k < cap ? cap - k : 0, " %s: max_abs=%.3g max_rel=%.3g rel_norm=%.3g%s", xt->name,
                          c.max_abs, c.max_rel, c.rel_norm,
                          !some ? " (reference is all zeros: compares nothing)" : "");
    if (!ok) {
        for (int w = 0; w < c.nworst && k < cap; w++) {
            k += (size_t)snprintf(msg + k, cap - k, "\n      at [");
            for (int j = 0; j < xt->rrank && k < cap; j++)
                k += (size_t)snprintf(msg + k, cap - k, "%s%lld", j ? "," : "", (long long)c.worst[w].index[j]);
            if (k < cap)
                k += (size_t)snprintf(msg + k, cap - k, "] got %.8g expected %.8g (abs %.3g rel %.3g)",
                                      c.worst[w].got, c.worst[w].ref, c.worst[w].abs_err, c.worst[w].rel_err);
        }
        if (k < cap)
            k += (size_t)snprintf(msg + k, cap - k, "\n      %lld of %lld mismatch (rtol %g atol %g)",
                                  (long long)c.mismatches, (long long)c.count, rule->rtol, rule->atol);
    }
    *n = k < cap ? k : cap - 1;
    return ok;
}

xdnn_status dh_dry_select(xgraph *g, char *engines, size_t len, xdnn_diags_t *d)
{
    arena *ar = arena_create();
    gplan *pl = gpu_partition(gpu_lower(g, ar), false);
    gpu_device dev = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};
    xdnn_status s = gpu_select_engines(pl, &dev, NULL, 0, getenv("DIFFTEST_VERBOSE") ? 1 : 0, stderr, d);
    for (int i = 0; i < pl->nparts && s == XDNN_OK; i++)
        snprintf(engines + strlen(engines), len - strlen(engines), "%s%s%s", i ? "," : "", pl->parts[i].engine->name,
                 pl->parts[i].genstats == GS_WRITE ? "(genstats)" : ""); /* the store writes a batchnorm's statistics */
    arena_destroy(ar);
    return s;
}
