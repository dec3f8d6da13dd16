/* mlp_infer.c — one MLP layer, y = gelu(x @ w + b), built by hand through the
 * xdnn C API, planned once and executed several times.
 *
 *   make -C examples                   # needs an installed xdnn (pkg-config xdnn)
 *   ./examples/mlp_infer [--backend auto|cpu|cuda] [--iters N]
 *
 * What it shows, in order:
 *   - a module with one graph, its tensors and nodes added one call at a time
 *     (the same graph in .dnn text is in the comment of build_graph);
 *   - xdnn_graph_bind: shapes are inferred and every node validated;
 *   - xdnn_plan_build with backend AUTO (CUDA when a device is usable, else the
 *     CPU reference), the engine chosen for each partition, buffers from
 *     xdnn_plan_tensor and inputs from xdnn_plan_fill_tensor (ex_plan in
 *     ex_common.c);
 *   - xdnn_plan_execute in a loop with the same pointers;
 *   - a checksum of y after every execution: they must all be equal.
 * Any failure prints the diagnostics and exits 1.
 */
#include "ex_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { T = 64, D = 128, F = 256 };   /* tokens, input features, output features */

/* The graph, as .dnn text would say it:
 *
 *   graph mlp(io=f32, compute=f32, intermediate=f32, seed=3) {
 *     input  x: f32[T, D] = randn(std=1.0);
 *     weight w: f32[D, F] = randn(std=0.05);
 *     weight b: f32[F]    = uniform(lo=-0.1, hi=0.1);
 *     y = gelu(matmul(x, w) + b);
 *     output y;
 *   }
 */
static xdnn_status build_graph(xdnn_module_t *m, xdnn_diags_t *d, xdnn_graph_t **out)
{
    xdnn_graph_t *g = xdnn_module_add_graph(m, "mlp");
    if (!g)
        return XDNN_ERR_USAGE;
    xdnn_graph_set_context(g, XDNN_F32, XDNN_F32, XDNN_F32, 3);

    const int64_t x_dims[] = {T, D}, w_dims[] = {D, F}, b_dims[] = {F};
    if (xdnn_graph_add_tensor(g, "x", XDNN_TENSOR_INPUT, XDNN_F32, 2, x_dims, "randn(std=1.0)", d) < 0 ||
        xdnn_graph_add_tensor(g, "w", XDNN_TENSOR_WEIGHT, XDNN_F32, 2, w_dims, "randn(std=0.05)", d) < 0 ||
        xdnn_graph_add_tensor(g, "b", XDNN_TENSOR_WEIGHT, XDNN_F32, 1, b_dims, "uniform(lo=-0.1, hi=0.1)", d) < 0)
        return xdnn_diags_status(d);

    const char *mm_in[] = {"x", "w"}, *mm_out[] = {"h"};
    const char *add_in[] = {"h", "b"}, *add_out[] = {"hb"};
    const char *act_in[] = {"hb"}, *act_out[] = {"y"};
    if (xdnn_graph_add_node(g, "matmul", 2, mm_in, 1, mm_out, NULL, d) < 0 ||
        xdnn_graph_add_node(g, "add", 2, add_in, 1, add_out, NULL, d) < 0 ||
        xdnn_graph_add_node(g, "gelu", 1, act_in, 1, act_out, NULL, d) < 0)
        return xdnn_diags_status(d);

    xdnn_status s = xdnn_graph_mark_output(g, "y", d);
    if (s == XDNN_OK)
        s = xdnn_graph_bind(g, NULL, 0, d);   /* no param overrides */
    *out = g;
    return s;
}

int main(int argc, char **argv)
{
    ex_options opt;
    if (!ex_parse_args(argc, argv, 5, &opt))
        return 1;

    int rc = 1;
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = xdnn_module_create();
    xdnn_plan_t *plan = NULL;
    xdnn_graph_t *g = NULL;
    ex_buffers buf = {0};
    xdnn_status s;
    if (!d || !m) {
        fprintf(stderr, "out of memory\n");
        goto done;
    }
    if ((s = build_graph(m, d, &g)) != XDNN_OK) {
        ex_fail("building the graph", s, d);
        goto done;
    }
    if (!ex_plan(g, &opt, d, &plan, &buf))   /* xdnn_plan_build, then buffers and fills */
        goto done;

    /* Execute many: same plan, same pointers, no re-planning. */
    double first = 0, t0 = ex_now_ms();
    for (int it = 0; it < opt.iters; it++) {
        if ((s = xdnn_plan_execute(plan, buf.bind, buf.n, buf.workspace, NULL, d)) != XDNN_OK) {
            ex_fail("xdnn_plan_execute", s, d);
            goto done;
        }
        double sum, abs_sum;
        if (!ex_checksum(&buf, "y", &sum, &abs_sum))   /* waits for the device */
            goto done;
        printf("iteration %d: checksum y: sum %.9g abs %.9g\n", it, sum, abs_sum);
        if (!isfinite(sum) || !isfinite(abs_sum) || (it > 0 && sum != first)) {
            fprintf(stderr, "error: iteration %d gave another result\n", it);
            goto done;
        }
        first = sum;
    }
    printf("%d executions, %.3f ms each (checksum included)\n", opt.iters, (ex_now_ms() - t0) / opt.iters);
    rc = 0;

done:
    ex_buffers_destroy(&buf);
    xdnn_plan_destroy(plan);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    return rc;
}
