/* conv_bn_relu_train.c — training steps of conv -> batchnorm -> relu, written
 * as .dnn text, parsed with xdnn_module_parse, planned once and executed in a
 * loop that feeds each step's updated weights into the next.
 *
 *   make -C examples                   # needs an installed xdnn (pkg-config xdnn)
 *   ./examples/conv_bn_relu_train [--backend auto|cpu|cuda] [--iters N]
 *
 * One execution is a whole step: the forward pass, the loss
 * 0.5 * mean(y^2), the backward pass (relu_bwd, batchnorm_bwd, conv_wgrad, and
 * conv_dgrad for the gradient a previous layer would need) and an SGD update
 * of w, gamma and beta.  After each step the host copies w_next, gamma_next
 * and beta_next over w, gamma and beta (on the device on CUDA) and prints the
 * loss, which goes down, with checksums of the gradient of x and of w.
 * Any failure prints the diagnostics (with file:line:col for the text) and
 * exits 1.
 */
#include "ex_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char train_dnn[] =
    "dnn 1;\n"
    "param N = 4;\n"
    "param C = 8;\n"
    "param K = 16;\n"
    "param H = 12;\n"
    "param W = 12;\n"
    "param M = N * K * H * W;              # elements of y\n"
    "param lr = 0.5;\n"
    "\n"
    "graph conv_bn_relu_train(io=f32, compute=f32, intermediate=f32, seed=11) {\n"
    "  input  x:     f32[N, C, H, W] = randn(std=1.0);\n"
    "  weight w:     f32[K, C, 3, 3] = randn(std=0.1);\n"
    "  weight gamma: f32[1, K, 1, 1] = uniform(lo=0.5, hi=1.5);\n"
    "  weight beta:  f32[1, K, 1, 1] = uniform(lo=-0.1, hi=0.1);\n"
    "\n"
    "  # forward and the loss\n"
    "  c = conv(x, w, pad=1);\n"
    "  z, mean, inv_var = batchnorm(c, gamma, beta, eps=1e-5);\n"
    "  y = relu(z);\n"
    "  loss = reduce(0.5 * y * y, op=\"mean\", keepdims=false);\n"
    "\n"
    "  # backward: d loss / d y = y / M\n"
    "  dz = relu_bwd(y / M, z);\n"
    "  dc, dgamma, dbeta = batchnorm_bwd(dz, c, gamma, mean, inv_var);\n"
    "  dx = conv_dgrad(dc, w, x_dims=[N, C, H, W], pad=1);\n"
    "  dw = conv_wgrad(dc, x, w_dims=[K, C, 3, 3], pad=1);\n"
    "\n"
    "  # SGD\n"
    "  w_next = w - lr * dw;\n"
    "  gamma_next = gamma - lr * dgamma;\n"
    "  beta_next = beta - lr * dbeta;\n"
    "\n"
    "  output loss, dx, dw, w_next, gamma_next, beta_next;\n"
    "}\n";

int main(int argc, char **argv)
{
    ex_options opt;
    if (!ex_parse_args(argc, argv, 4, &opt))
        return 1;

    int rc = 1;
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    xdnn_plan_t *plan = NULL;
    ex_buffers buf = {0};
    if (!d) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }

    /* Parse and bind: syntax, names, shapes and attributes are checked here;
     * a diagnostic points into "conv_bn_relu_train.dnn" (the text above). */
    xdnn_status s = xdnn_module_parse("conv_bn_relu_train.dnn", train_dnn, strlen(train_dnn), false, d, &m);
    if (s != XDNN_OK) {
        ex_fail("xdnn_module_parse", s, d);
        goto done;
    }
    xdnn_graph_t *g = xdnn_module_find_graph(m, NULL);
    if ((s = xdnn_graph_bind(g, NULL, 0, d)) != XDNN_OK) {
        ex_fail("xdnn_graph_bind", s, d);
        goto done;
    }
    if (!ex_plan(g, &opt, d, &plan, &buf))   /* xdnn_plan_build, then buffers and fills */
        goto done;

    double first_loss = 0, last_loss = 0, t0 = ex_now_ms();
    for (int step = 0; step < opt.iters; step++) {
        if ((s = xdnn_plan_execute(plan, buf.bind, buf.n, buf.workspace, NULL, d)) != XDNN_OK) {
            ex_fail("xdnn_plan_execute", s, d);
            goto done;
        }
        float loss;
        double dx_sum, dx_abs, dw_sum, dw_abs;
        if (ex_read_f32(&buf, "loss", &loss, 1) != XDNN_OK || !ex_checksum(&buf, "dx", &dx_sum, &dx_abs) ||
            !ex_checksum(&buf, "dw", &dw_sum, &dw_abs))
            goto done;
        printf("step %d: loss %.7f  dx: sum %.6e abs %.6e  dw: sum %.6e abs %.6e\n", step, (double)loss, dx_sum,
               dx_abs, dw_sum, dw_abs);
        if (!isfinite(loss) || !isfinite(dx_abs) || !isfinite(dw_abs)) {
            fprintf(stderr, "error: step %d gave a non-finite result\n", step);
            goto done;
        }
        if (step == 0)
            first_loss = loss;
        last_loss = loss;
        /* the update becomes the next step's weights */
        if (ex_copy(&buf, "w", "w_next") != XDNN_OK || ex_copy(&buf, "gamma", "gamma_next") != XDNN_OK ||
            ex_copy(&buf, "beta", "beta_next") != XDNN_OK)
            goto done;
    }
    printf("%d steps, %.3f ms each; loss %.7f -> %.7f\n", opt.iters, (ex_now_ms() - t0) / opt.iters, first_loss,
           last_loss);
    if (opt.iters > 1 && !(last_loss < first_loss)) {
        fprintf(stderr, "error: the loss did not go down\n");
        goto done;
    }
    rc = 0;

done:
    ex_buffers_destroy(&buf);
    xdnn_plan_destroy(plan);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    return rc;
}
