/* test_plan.c — plans through the C API: serialize / deserialize round trip
 * (same graph, same outputs), every truncation and every single-byte
 * corruption refused with XDNN_ERR_IO, another device's plan refused unless
 * XDNN_PLAN_ANY_DEVICE (the same GPU under another driver is the same
 * hardware: fingerprint_same_hardware); set parsing helpers of the tune cache (signatures). */
#include "xdnn.h"

#include "core/exec.h"
#include "plan/fingerprint.h"
#include "plan/plan.h"
#include "plan/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                           \
        }                                                                         \
    } while (0)

static const char graph_text[] = "dnn 1;\n"
                                 "param N = 3 sweep [1, 2];\n"
                                 "param M = 2 * N;\n"
                                 "graph g(io=f32, seed=3) {\n"
                                 "  input x: f32[N, 4];\n"
                                 "  weight w: f32[4, M] = randn(std=0.5);\n"
                                 "  y = relu(matmul(x, w));\n"
                                 "  output y;\n"
                                 "}\n";

/* Run g on the CPU reference; return a checksum of output 0's doubles. */
static double run_sum(xgraph *g)
{
    xdnn_diags_t *d = xdnn_diags_create();
    run_state st;
    double sum = -1;
    if (run_state_init(&st, g, ".") == XDNN_OK) {
        if (exec_load_inputs(&st, NULL, 0, d) == XDNN_OK && run_state_alloc_results(&st, d) == XDNN_OK &&
            exec_cpu_run(&st, d) == XDNN_OK) {
            const host_tensor *t = &st.tensors[g->outputs[0]];
            double *v = malloc((size_t)t->numel * sizeof *v);
            tensor_gather(t, v);
            sum = 0;
            for (int64_t i = 0; i < t->numel; i++)
                sum += v[i] * (double)(i + 1);
            free(v);
        }
        run_state_free(&st);
    }
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    return sum;
}

int main(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    CHECK(xdnn_module_parse("t.dnn", graph_text, strlen(graph_text), false, d, &m) == XDNN_OK);
    xgraph *g = xdnn_module_find_graph(m, NULL);
    xdnn_binding set = {"N", "5"};
    CHECK(xdnn_graph_bind(g, &set, 1, d) == XDNN_OK);
    double want = run_sum(g);
    CHECK(want > 0);

    /* an unbound graph cannot be planned */
    xdnn_plan_t *p = NULL;
    xdnn_diags_t *e0 = xdnn_diags_create();
    CHECK(xdnn_plan_create(NULL, false, false, e0, &p) == XDNN_ERR_USAGE && !p);
    CHECK(xdnn_diags_error_count(e0) == 1); /* a NULL graph is named in a diagnostic */
    xdnn_diags_destroy(e0);

    CHECK(xdnn_plan_create(g, false, false, d, &p) == XDNN_OK && p);
    void *bytes = NULL;
    size_t len = 0;
    CHECK(xdnn_plan_serialize(p, &bytes, &len, d) == XDNN_OK && len > 100);
    CHECK(memcmp(bytes, "XDNNPLAN", 8) == 0);
    CHECK(p->nparts == 2 && strcmp(p->parts[0].engine, "cpu_reference") == 0);
    xdnn_plan_destroy(p);

    /* round trip: the specialized graph has N = 5 (and derived M = 10) without --set */
    xdnn_plan_t *q = NULL;
    CHECK(xdnn_plan_deserialize(bytes, len, 0, d, &q) == XDNN_OK && q);
    xgraph *h = xdnn_plan_graph(q);
    CHECK(h && h->tensors[h->outputs[0]].rdims[0] == 5 && h->tensors[h->outputs[0]].rdims[1] == 10);
    CHECK(run_sum(h) == want);
    CHECK(strstr(q->module_json, "sweep") == NULL);
    /* serializing what was loaded gives the same bytes */
    void *again = NULL;
    size_t alen = 0;
    CHECK(xdnn_plan_serialize(q, &again, &alen, d) == XDNN_OK && alen == len && memcmp(again, bytes, len) == 0);
    free(again);
    xdnn_plan_destroy(q);
    CHECK(xdnn_diags_error_count(d) == 0);

    /* every truncation is an I/O error with a diagnostic and no plan */
    unsigned char *b = bytes;
    int bad_trunc = 0, bad_flip = 0;
    for (size_t n = 0; n < len; n++) {
        xdnn_diags_t *e = xdnn_diags_create();
        xdnn_plan_t *r = NULL;
        if (xdnn_plan_deserialize(b, n, 0, e, &r) != XDNN_ERR_IO || r || xdnn_diags_error_count(e) == 0)
            bad_trunc++;
        xdnn_plan_destroy(r);
        xdnn_diags_destroy(e);
    }
    CHECK(bad_trunc == 0);
    /* every single flipped byte is caught (magic, structure or checksum) */
    for (size_t i = 0; i < len; i++) {
        b[i] ^= 0x20;
        xdnn_diags_t *e = xdnn_diags_create();
        xdnn_plan_t *r = NULL;
        xdnn_status s = xdnn_plan_deserialize(b, len, 0, e, &r);
        if ((s != XDNN_ERR_IO && s != XDNN_ERR_UNSUPPORTED) || r)
            bad_flip++;
        xdnn_plan_destroy(r);
        xdnn_diags_destroy(e);
        b[i] ^= 0x20;
    }
    CHECK(bad_flip == 0);

    /* another device: refused (XDNN_ERR_UNSUPPORTED) naming both, accepted with ANY_DEVICE */
    CHECK(xdnn_plan_deserialize(b, len, 0, d, &q) == XDNN_OK);
    snprintf(q->device, sizeof q->device, "gpu; name=Imaginary; sm=1; cc=9.0; driver=1");
    void *foreign = NULL;
    size_t flen = 0;
    CHECK(xdnn_plan_serialize(q, &foreign, &flen, d) == XDNN_OK);
    xdnn_plan_destroy(q);
    xdnn_diags_t *e = xdnn_diags_create();
    xdnn_plan_t *r = NULL;
    CHECK(xdnn_plan_deserialize(foreign, flen, 0, e, &r) != XDNN_OK && !r);
    CHECK(xdnn_diags_error_count(e) == 1);
    xdnn_diags_destroy(e);
    CHECK(xdnn_plan_deserialize(foreign, flen, XDNN_PLAN_ANY_DEVICE, d, &r) == XDNN_OK && r);
    xdnn_plan_destroy(r);
    free(foreign);

    /* the same GPU under another driver is the same hardware (a plan loads with a note); anything else is not */
    CHECK(fingerprint_same_hardware("gpu; name=H100; sm=132; cc=9.0; driver=12", "gpu; name=H100; sm=132; cc=9.0; driver=13"));
    CHECK(fingerprint_same_hardware("gpu; name=H100; driver=12; sm=132", "gpu; name=H100; driver=13; sm=132"));
    CHECK(!fingerprint_same_hardware("gpu; name=H100; sm=132; cc=9.0; driver=12", "gpu; name=H100; sm=114; cc=9.0; driver=12"));
    CHECK(!fingerprint_same_hardware("gpu; name=H100; sm=132; cc=9.0; driver=12", "gpu; name=H200; sm=132; cc=9.0; driver=13"));
    CHECK(!fingerprint_same_hardware("cpu; model=X", "cpu; model=X"));  /* no driver field: plain equality decides */
    CHECK(!fingerprint_same_hardware("gpu; name=H100; sm=132; cc=9.0; driver=12", "gpu; name=H100; sm=132; cc=9.0"));

    /* signatures: same work, same signature; another shape, another one */
    arena *a = arena_create();
    const char *s1 = tune_node_signature(g, &g->nodes[0], a);
    CHECK(strcmp(s1, "matmul(f32[5,4]/[4,1], f32[4,10]/[10,1])->(f32[5,10]/[10,1]) {trans_a=false, trans_b=false} "
                     "compute=f32") == 0);
    xdnn_binding set2 = {"N", "6"};
    CHECK(xdnn_graph_bind(g, &set2, 1, d) == XDNN_OK);
    CHECK(strcmp(s1, tune_node_signature(g, &g->nodes[0], a)) != 0);
    CHECK(strcmp(tune_partition_signature(g, "y.0+y", a),
                 arena_sprintf(a, "%s ; %s", tune_node_signature(g, &g->nodes[0], a),
                               tune_node_signature(g, &g->nodes[1], a))) == 0);
    arena_destroy(a);

    /* the time statistics bench reports */
    double t[] = {5, 1, 4, 2, 3, 10, 6, 7, 8, 9}, med, mn, mx, p90;
    plan_time_stats(t, 10, &med, &mn, &mx, &p90);
    CHECK(med == 5.5 && mn == 1 && mx == 10 && p90 == 9);
    /* the public summary: 1..100 shuffled -> nearest-rank percentiles, mean, sample stddev */
    double hundred[100];
    for (int i = 0; i < 100; i++)
        hundred[i] = (double)((i * 37) % 100 + 1);
    xdnn_time_stats ts;
    xdnn_time_stats_of(hundred, 100, &ts);
    CHECK(ts.median_ms == 50.5 && ts.min_ms == 1 && ts.max_ms == 100 && ts.p90_ms == 90 && ts.p95_ms == 95 &&
          ts.p99_ms == 99 && ts.mean_ms == 50.5);
    CHECK(ts.stddev_ms > 29.011 && ts.stddev_ms < 29.012); /* sqrt(100 * 101 / 12): sample stddev of 1..100 */
    double one = 3.5;
    xdnn_time_stats_of(&one, 1, &ts);
    CHECK(ts.p99_ms == 3.5 && ts.mean_ms == 3.5 && ts.stddev_ms == 0);

    free(bytes);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
    if (failures)
        fprintf(stderr, "test_plan: %d failure(s)\n", failures);
    else
        printf("test_plan: ok\n");
    return failures != 0;
}
