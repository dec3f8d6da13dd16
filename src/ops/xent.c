/* xent.c — cross_entropy (fused log_softmax + negative log-likelihood over
 * the last axis, torch.nn.functional.cross_entropy with class-index targets)
 * and its backward cross_entropy_bwd.
 *
 * Layout: logits [..., C] packed row-major, seen as R rows of C; target has
 * logits' dims without the last ([...], R elements, integer).  Per row r with
 * t = target[r], in double, max-subtracted:
 *   lse_r = m + log sum_c e^(x_c - m),   logp_c = x_c - lse_r
 *   loss_r = -(1 - ls) logp_t - (ls / C) sum_c logp_c       (ls = label_smoothing)
 *   loss_r = 0 when t == ignore_index (and the row is not counted)
 * reduction "none": y = loss [...]; "sum": y = sum_r loss_r (a scalar);
 * "mean": y = sum_r loss_r / (rows not ignored), NaN when every row is
 * ignored (0/0, as PyTorch).  A target outside [0, C) that is not
 * ignore_index is a run-time error (index_util.h).
 * cross_entropy_bwd(dy, logits, target): g_r = dy_r ("none"), dy ("sum"),
 * dy / count ("mean"); dlogits[r, c] = g_r (softmax_c - (1 - ls)[c == t] - ls / C),
 * zero on ignored rows.
 */
#include "index_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const xent_ports[] = {"logits", "target"};
static const char *const xent_bwd_ports[] = {"dy", "logits", "target"};
static const char *const xent_results[] = {"y"};
static const char *const xent_bwd_results[] = {"dlogits"};

static const attr_spec xent_attrs[] = {
    {"reduction", AT_STRING, "\"mean\"", "none|mean|sum",
     "\"none\": one loss per row; \"sum\"; \"mean\": over the rows not ignored"},
    {"ignore_index", AT_INT, "-100", NULL, "rows whose target equals it add nothing and are not counted"},
    {"label_smoothing", AT_FLOAT, "0", NULL, "ls in [0, 1]: the target is (1 - ls) one_hot + ls / C"},
};

typedef enum xent_red { XR_NONE, XR_MEAN, XR_SUM } xent_red;

static xent_red xent_reduction(const xnode *n, const op_desc *d)
{
    const char *s = op_attr_str(n, d, "reduction");
    return s && strcmp(s, "none") == 0 ? XR_NONE : s && strcmp(s, "sum") == 0 ? XR_SUM : XR_MEAN;
}

/* The checks both directions share: logits (port lp) [..., C] with C >= 1,
 * target (port tp) its dims without the last, label_smoothing in [0, 1]. */
static bool xent_check(op_infer_ctx *c, int lp, int tp)
{
    if (!infer_need(c, lp) || !index_check_port(c, tp))
        return false;
    const tinfo *x = c->in[lp], *t = c->in[tp];
    char s0[256], s1[256], s2[256];
    if (x->rank == 0) {
        op_error(c, "logits must have rank >= 1 ([..., classes]), got a scalar");
        return false;
    }
    bool same = t->rank == x->rank - 1;
    for (int d = 0; same && d < t->rank; d++)
        same = t->dims[d] == x->dims[d];
    if (!same) {
        tinfo want = *x;
        want.rank--;
        op_error(c, "target must be %s (logits %s without the class axis), got %s", tinfo_str(s0, sizeof s0, &want),
                 tinfo_str(s1, sizeof s1, x), tinfo_str(s2, sizeof s2, t));
        return false;
    }
    double ls = op_attr_float(c->node, c->desc, "label_smoothing");
    if (!(ls >= 0 && ls <= 1)) {
        op_error(c, "attribute 'label_smoothing' must be in [0, 1], got %g", ls);
        return false;
    }
    return true;
}

static xdnn_status xent_infer(op_infer_ctx *c)
{
    if (!xent_check(c, 0, 1))
        return XDNN_ERR_SEMANTIC;
    tinfo *y = &c->out[0];
    *y = *c->in[1];
    y->dtype = c->in[0]->dtype;
    if (xent_reduction(c->node, c->desc) != XR_NONE)
        y->rank = 0;
    return XDNN_OK;
}

static xdnn_status xent_bwd_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0) || !xent_check(c, 1, 2))
        return XDNN_ERR_SEMANTIC;
    const tinfo *dy = c->in[0], *t = c->in[2];
    char s0[256], s1[256];
    if (xent_reduction(c->node, c->desc) == XR_NONE) {
        bool same = dy->rank == t->rank;
        for (int d = 0; same && d < t->rank; d++)
            same = dy->dims[d] == t->dims[d];
        if (!same)
            return op_error(c, "dy must be %s (one loss per row, reduction=\"none\"), got %s",
                            tinfo_str(s0, sizeof s0, t), tinfo_str(s1, sizeof s1, dy));
    } else if (shape_numel(dy->rank, dy->dims) != 1) {
        return op_error(c, "dy must have one element (the reduced loss's gradient), got %s",
                        tinfo_str(s0, sizeof s0, dy));
    }
    c->out[0] = *c->in[1];
    return XDNN_OK;
}

/* Row r's log-sum-exp and sum of logits (for label smoothing), in double. */
static void row_stats(const double *x, int64_t C, double *lse, double *sum)
{
    double m = -HUGE_VAL, s = 0, e = 0;
    for (int64_t j = 0; j < C; j++) {
        m = fmax(m, x[j]);
        s += x[j];
    }
    /* all -inf: 0 avoids -inf - -inf (log-sum-exp -inf; x[t] is -inf too, so the loss is NaN); a +inf makes the row's
     * log-softmax NaN (as softmax.c), so the loss and its gradient are NaN, as in PyTorch */
    if (isinf(m))
        m = m > 0 ? NAN : 0;
    for (int64_t j = 0; j < C; j++)
        e += exp(x[j] - m);
    *lse = m + log(e);
    *sum = s;
}

/* What both references read: logits (port lp) as R rows of C, the attributes,
 * and t[r] = the target of row r (-1: ignored; malloc'ed: the caller frees it). */
typedef struct xent_rows {
    const ref_tensor *x;
    int64_t R, C, *t, count; /* count: rows not ignored */
    double ls;
    xent_red red;
} xent_rows;

/* Fill *w from ports lp (logits) and lp + 1 (target); a range or allocation
 * error is reported. */
static xdnn_status xent_begin(op_ref_ctx *c, int lp, xent_rows *w)
{
    const ref_tensor *x = c->in[lp], *target = c->in[lp + 1];
    if (!x || !target || !c->out[0] || (lp > 0 && !c->in[0]))
        return op_ref_error(c, XDNN_ERR_INTERNAL, "missing operand after inference");
    *w = (xent_rows){.x = x, .R = target->numel, .C = x->dims[x->rank - 1],
                     .ls = op_attr_float(c->node, c->desc, "label_smoothing"),
                     .red = xent_reduction(c->node, c->desc)};
    int64_t ignore = op_attr_int(c->node, c->desc, "ignore_index");
    w->t = malloc((size_t)(w->R ? w->R : 1) * sizeof *w->t);
    if (!w->t)
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for %lld targets", (long long)w->R);
    char what[96];
    snprintf(what, sizeof what, "classes = %lld, ignore_index = %lld", (long long)w->C, (long long)ignore);
    for (int64_t r = 0; r < w->R; r++) {
        if (!index_ref_get_or(c, target, r, w->C, ignore, what, &w->t[r])) {
            free(w->t);
            return XDNN_ERR_SEMANTIC;
        }
        w->count += w->t[r] >= 0;
    }
    return XDNN_OK;
}

static xdnn_status xent_ref(op_ref_ctx *c)
{
    xent_rows w;
    xdnn_status st = xent_begin(c, 0, &w);
    if (st != XDNN_OK)
        return st;
    ref_tensor *y = c->out[0];
    double total = 0;
    for (int64_t r = 0; r < w.R; r++) {
        double loss = 0;
        if (w.t[r] >= 0) {
            const double *row = w.x->data + r * w.C;
            double lse, sum;
            row_stats(row, w.C, &lse, &sum);
            /* sum_c logp_c = sum_c x_c - C lse */
            loss = -(1 - w.ls) * (row[w.t[r]] - lse) - w.ls / (double)w.C * (sum - (double)w.C * lse);
        }
        if (w.red == XR_NONE)
            y->data[r] = loss;
        total += loss;
    }
    if (w.red == XR_SUM)
        y->data[0] = total;
    else if (w.red == XR_MEAN)
        y->data[0] = total / (double)w.count; /* 0/0 = NaN when every row is ignored */
    free(w.t);
    return XDNN_OK;
}

static xdnn_status xent_bwd_ref(op_ref_ctx *c)
{
    xent_rows w;
    xdnn_status st = xent_begin(c, 1, &w);
    if (st != XDNN_OK)
        return st;
    const ref_tensor *dy = c->in[0];
    ref_tensor *dx = c->out[0];
    for (int64_t r = 0; r < w.R; r++) {
        double *drow = dx->data + r * w.C;
        if (w.t[r] < 0) {
            for (int64_t j = 0; j < w.C; j++)
                drow[j] = 0;
            continue;
        }
        double g = w.red == XR_NONE ? dy->data[r] : w.red == XR_SUM ? dy->data[0] : dy->data[0] / (double)w.count;
        const double *row = w.x->data + r * w.C;
        double lse, sum;
        row_stats(row, w.C, &lse, &sum);
        for (int64_t j = 0; j < w.C; j++)
            drow[j] = g * (exp(row[j] - lse) - (1 - w.ls) * (j == w.t[r]) - w.ls / (double)w.C);
    }
    free(w.t);
    return XDNN_OK;
}

/* max, exp, sum, log and the pick: about five operations per logit (softmax's estimate). */
static double xent_flops(const xgraph *g, const xnode *n) { return 5.0 * (double)node_port_numel(g, n, 0); }
static double xent_bwd_flops(const xgraph *g, const xnode *n) { return 7.0 * (double)node_port_numel(g, n, 1); }

const op_desc op_cross_entropy_desc = {
    .name = "cross_entropy",
    .summary = "log_softmax over the last axis + negative log-likelihood of integer targets (PyTorch cross_entropy)",
    .ports = xent_ports, .nports = 2, .nrequired = 2,
    .results = xent_results, .nresults = 1,
    .attrs = xent_attrs, .nattrs = 3,
    .infer = xent_infer, .reference = xent_ref, .flops = xent_flops,
};

const op_desc op_cross_entropy_bwd_desc = {
    .name = "cross_entropy_bwd",
    .summary = "gradient of cross_entropy: dlogits = g * (softmax - (1 - ls) one_hot - ls / C), 0 on ignored rows",
    .ports = xent_bwd_ports, .nports = 3, .nrequired = 3,
    .results = xent_bwd_results, .nresults = 1,
    .attrs = xent_attrs, .nattrs = 3,
    .infer = xent_bwd_infer, .reference = xent_bwd_ref, .flops = xent_bwd_flops,
};
