/* partition.c — grouping nodes into engine-sized partitions (rules in
 * partition.h).  Graphs are small (hundreds of nodes), so groups are kept as a
 * plain "group of node" array and merges relabel it: clarity over asymptotics. */
#include "gpu/partition.h"

#include "gpu/conv_epi.h"
#include "gpu/eng_norm.h"

#include <stdlib.h>
#include <string.h>

typedef struct pstate {
    ggraph *g;
    int *grp;      /* group id (a node index) per node */
    char *seen;    /* DFS marks per group id */
} pstate;

/* The group that writes what `tensor` reads (a view: its storage's writer;
 * a concat's piece written in place, views.c: its own writer). */
static int producer_group(const pstate *s, int tensor)
{
    if (tensor < 0)
        return -1;
    int p = s->g->t[tensor].producer;
    if (p < 0)
        p = s->g->t[gg_storage(s->g, tensor)].producer;
    return p >= 0 ? s->grp[p] : -1;
}

/* Does group `to` lie upstream of group `from`? (DFS over node inputs.) */
static bool reaches(pstate *s, int from, int to)
{
    if (from == to)
        return true;
    if (s->seen[from])
        return false;
    s->seen[from] = 1;
    for (int k = 0; k < s->g->nn; k++) {
        if (s->grp[k] != from)
            continue;
        for (int j = 0; j < s->g->n[k].nin; j++) {
            int q = producer_group(s, s->g->n[k].in[j]);
            if (q >= 0 && q != from && reaches(s, q, to))
                return true;
        }
    }
    return false;
}

/* True when some third group sits on a path from a up to b. */
static bool path_through_other(pstate *s, int a, int b)
{
    memset(s->seen, 0, (size_t)s->g->nn);
    for (int k = 0; k < s->g->nn; k++) {
        if (s->grp[k] != a)
            continue;
        for (int j = 0; j < s->g->n[k].nin; j++) {
            int q = producer_group(s, s->g->n[k].in[j]);
            if (q >= 0 && q != a && q != b && reaches(s, q, b))
                return true;
        }
    }
    return false;
}

/* Does a node of group a read a view of what group b writes?  Such groups
 * never merge: the view is read from memory, which one kernel would race on. */
static bool reads_view_of(const pstate *s, int a, int b)
{
    for (int k = 0; k < s->g->nn; k++)
        for (int j = 0; s->grp[k] == a && j < s->g->n[k].nin; j++) {
            int t = s->g->n[k].in[j];
            if (t >= 0 && s->g->t[t].view_of >= 0 && producer_group(s, t) == b)
                return true;
        }
    return false;
}

/* Is some view of tensor t read? (then t is stored, not kept in registers) */
static bool has_view_readers(const ggraph *g, int t)
{
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].view_of == t && g->t[i].nconsumers > 0)
            return true;
    return false;
}

static bool can_merge(pstate *s, int a, int b)
{
    return a != b && !path_through_other(s, a, b) && !path_through_other(s, b, a) && !reads_view_of(s, a, b) &&
           !reads_view_of(s, b, a);
}

static void merge(pstate *s, int into, int from)
{
    for (int k = 0; k < s->g->nn; k++)
        if (s->grp[k] == from)
            s->grp[k] = into;
}

static bool group_is_pointwise(const pstate *s, int grp)
{
    for (int k = 0; k < s->g->nn; k++)
        if (s->grp[k] == grp && s->g->n[k].kind != GN_POINTWISE)
            return false;
    return true;
}

static int only_consumer(const ggraph *g, int tensor)
{
    for (int k = 0; k < g->nn; k++)
        for (int j = 0; j < g->n[k].nin; j++)
            if (g->n[k].in[j] == tensor)
                return k;
    return -1;
}

/* matmul + single-consumer pointwise chain of the matmul's output shape; a
 * forward conv likewise, with at most KEPI_MAX nodes its engines apply in
 * their store (conv_epi.h). */
static void fuse_matmul_epilogues(pstate *s)
{
    ggraph *g = s->g;
    for (int m = 0; m < g->nn; m++) {
        const bool conv = gconv_epi_anchor(g, m);
        if (g->n[m].kind != GN_MATMUL && !conv)
            continue;
        int cur = g->n[m].out;
        for (int len = 0;; len++) {
            const gtensor *t = &g->t[cur];
            if (t->is_output || t->nconsumers != 1)
                break;
            int c = only_consumer(g, cur);
            /* (a result written into a concat's result, views.c, needs the generated kernel's strided store) */
            if (c < 0 || g->n[c].kind != GN_POINTWISE || s->grp[c] != c || g->t[g->n[c].out].view_of >= 0 ||
                !gg_same_dims(&g->t[g->n[c].out], &g->t[g->n[m].out]))
                break;
            char why[160];
            if (conv && (len == KEPI_MAX || !gconv_epi_step(g, c, cur, NULL, NULL, why, sizeof why)))
                break;
            merge(s, m, c);
            cur = g->n[c].out;
        }
    }
}

/* A conv_dgrad + the relu_bwd that alone reads its dx (ResNet's backward:
 * d2z = relu_bwd(conv_dgrad(..), a2)): every conv engine that runs a dgrad
 * applies the mask in its store (conv_epi.h), saving dx's write and read.
 * XDNN_NO_DGRAD_EPI=1 keeps them apart (A/B timing, bisecting). */
static void fuse_dgrad_masks(pstate *s)
{
    ggraph *g = s->g;
    const char *off = getenv("XDNN_NO_DGRAD_EPI");
    if (off && *off && strcmp(off, "0") != 0)
        return;
    for (int m = 0; m < g->nn; m++) {
        const int d = g->n[m].out;
        if (!gconv_dgrad_epi_anchor(g, m) || s->grp[m] != m || g->t[d].is_output || g->t[d].nconsumers != 1 ||
            has_view_readers(g, d))
            continue;
        const int c = only_consumer(g, d);
        char why[200];
        if (c >= 0 && s->grp[c] == c && g->t[g->n[c].out].view_of < 0 &&
            gconv_dgrad_epi_step(g, c, d, NULL, NULL, why, sizeof why) && can_merge(s, m, c))
            merge(s, m, c);
    }
}

/* The one relu / silu / gelu that alone reads tensor t (of t's dims), else -1. */
static int lone_act_of(const pstate *s, int t)
{
    const ggraph *g = s->g;
    if (g->t[t].is_output || g->t[t].nconsumers != 1)
        return -1;
    int c = only_consumer(g, t);
    bool ok = c >= 0 && s->grp[c] == c && gpu_norm_act(g, c) != NGACT_NONE && g->t[g->n[c].out].view_of < 0 &&
              gg_same_dims(&g->t[g->n[c].out], &g->t[t]);
    return ok ? c : -1;
}

/* A normalization forward + the one relu / silu / gelu that alone reads its
 * y, or (batchnorm) + the residual add `y + r` that alone reads its y and then
 * optionally that activation of the sum (a ResNet block's relu(z3 + x): z3 is
 * never stored); and a layer/rms backward + the residual add that alone reads
 * its dx: norm_welford applies them before storing (eng_norm.c), saving a
 * round trip to memory. */
static void fuse_norm_epilogues(pstate *s)
{
    ggraph *g = s->g;
    const char *nr = getenv("XDNN_NO_NORM_RESIDUAL"); /* A/B switch: set and not "0" = the add stays apart */
    bool res_on = !nr || !*nr || strcmp(nr, "0") == 0;
    for (int m = 0; m < g->nn; m++) {
        int y = gpu_norm_fusable_y(g, m);
        if (y < 0 || g->t[y].is_output || g->t[y].nconsumers != 1 || s->grp[m] != m)
            continue;
        int c = only_consumer(g, y), a;
        if (res_on && gpu_norm_fusable_res(g, m) && c >= 0 && s->grp[c] == c && gpu_norm_res_add(g, c, y) >= 0 &&
            can_merge(s, m, c)) {
            merge(s, m, c);
            if ((a = lone_act_of(s, g->n[c].out)) >= 0)
                merge(s, m, a);
        } else if ((a = lone_act_of(s, y)) >= 0) {
            merge(s, m, a);
        }
    }
    /* a layer/rms backward + the add that alone reads its dx (a residual: dr = dy + dx) */
    for (int m = 0; m < g->nn; m++) {
        int dx = gpu_norm_fusable_dx(g, m);
        if (dx < 0 || g->t[dx].nconsumers != 1 || s->grp[m] != m)
            continue;
        int c = only_consumer(g, dx);
        if (c >= 0 && s->grp[c] == c && gpu_norm_res_add(g, c, dx) >= 0 && can_merge(s, m, c))
            merge(s, m, c);
    }
}

/* A batchnorm backward + the relu_bwd that makes its dy + the add that
 * alone feeds that relu_bwd (ResNet's backward at a block's output: ds =
 * relu_bwd(d0 + ds_next, y), read by the block's last batchnorm backward
 * and by the shortcut): norm_welford's channels-last reduce computes dy
 * from the add's operands and the mask, stores it, and sums it
 * (gpu_norm_join says which; eng_norm.c).  Only where dy is stored anyway
 * (other readers, or an output): the apply reads it back.
 * XDNN_NO_NORM_JOIN=1 keeps the join a pointwise partition (A/B). */
static void fuse_norm_joins(pstate *s)
{
    ggraph *g = s->g;
    for (int m = 0; m < g->nn; m++) {
        int relu, add;
        if (s->grp[m] != m || !gpu_norm_join(g, m, &relu, &add) || s->grp[relu] != relu ||
            (add >= 0 && s->grp[add] != add))
            continue;
        const int dy = g->n[relu].out;
        if (!(g->t[dy].is_output || g->t[dy].nconsumers >= 2) || has_view_readers(g, dy) || !can_merge(s, m, relu))
            continue;
        merge(s, m, relu);
        if (add >= 0 && can_merge(s, m, add))
            merge(s, m, add);
        else if (add >= 0) /* the engine runs the add with the relu_bwd or neither: undo */
            s->grp[relu] = relu;
    }
}

static void fuse_pointwise(pstate *s)
{
    ggraph *g = s->g;
    for (int k = 0; k < g->nn; k++) {
        if (g->n[k].kind != GN_POINTWISE || !group_is_pointwise(s, s->grp[k]))
            continue;
        for (int j = 0; j < g->n[k].nin; j++) {
            int t = g->n[k].in[j];
            if (t < 0 || g->t[t].producer < 0)
                continue;
            int p = g->t[t].producer;
            if (g->n[p].kind != GN_POINTWISE || !gg_same_dims(&g->t[t], &g->t[g->n[k].out]))
                continue;
            int gp = s->grp[p], gk = s->grp[k];
            if (gp == gk || !group_is_pointwise(s, gp))
                continue;
            /* Every node of the merged group must share the iteration shape. */
            bool same = true;
            for (int q = 0; q < g->nn && same; q++)
                if (s->grp[q] == gp)
                    same = gg_same_dims(&g->t[g->n[q].out], &g->t[g->n[k].out]);
            if (same && can_merge(s, gk, gp))
                merge(s, gk, gp);
        }
    }
}

/* A reduce/softmax absorbs the pointwise group that only feeds it. */
static void fuse_reduce_prologues(pstate *s)
{
    ggraph *g = s->g;
    for (int r = 0; r < g->nn; r++) {
        if ((g->n[r].kind != GN_REDUCE && g->n[r].kind != GN_SOFTMAX) || g->n[r].nin < 1)
            continue;
        int x = g->n[r].in[0];
        if (x < 0 || g->t[x].producer < 0 || g->t[x].nconsumers != 1)
            continue;
        int gp = s->grp[g->t[x].producer];
        if (!group_is_pointwise(s, gp))
            continue;
        bool ok = true;
        for (int q = 0; q < g->nn && ok; q++) {
            if (s->grp[q] != gp)
                continue;
            int o = g->n[q].out;
            ok = !g->t[o].is_output && !has_view_readers(g, o) && gg_same_dims(&g->t[o], &g->t[x]);
            for (int c = 0; c < g->nn && ok; c++)
                for (int j = 0; j < g->n[c].nin; j++)
                    if (g->n[c].in[j] == o && s->grp[c] != gp && c != r)
                        ok = false;
        }
        if (ok)
            merge(s, s->grp[r], gp);
    }
}

/* A bound on a sibling-merged kernel (its operands stay well inside the
 * launch's parameter count, eng_generated.c) */
enum { SIBLING_MAX_NODES = 32 };

static int group_nodes(const pstate *s, int grp)
{
    int c = 0;
    for (int q = 0; q < s->g->nn; q++)
        c += s->grp[q] == grp;
    return c;
}

/* Do all nodes of groups a and b write tensors of one shape? */
static bool groups_same_shape(const pstate *s, int a, int b, const gtensor *shape)
{
    for (int q = 0; q < s->g->nn; q++)
        if ((s->grp[q] == a || s->grp[q] == b) && !gg_same_dims(&s->g->t[s->g->n[q].out], shape))
            return false;
    return true;
}

/* Sibling pointwise groups: two groups of one iteration shape that read a
 * common tensor of that shape and depend on each other through no third
 * group run as one kernel that reads it once and writes both results (RoPE's
 * two halves from the same x1, x2; silu's backward dgt and dup from the same
 * dm and gt, and the forward's silu(gt) * up beside them).  After the
 * reduce prologues, so that a group a reduction absorbed stays with it.
 * XDNN_NO_SIBLING_FUSION=1 keeps them apart (bisecting). */
static void fuse_pointwise_siblings(pstate *s)
{
    ggraph *g = s->g;
    for (int k = 0; k < g->nn; k++) {
        if (g->n[k].kind != GN_POINTWISE || g->n[k].out < 0 || !group_is_pointwise(s, s->grp[k]))
            continue;
        const gtensor *shape = &g->t[g->n[k].out];
        for (int j = 0; j < g->n[k].nin; j++) {
            int t = g->n[k].in[j];
            if (t < 0 || g->t[t].is_scalar || !gg_same_dims(&g->t[t], shape))
                continue;
            for (int c = k + 1; c < g->nn; c++) {
                int gk = s->grp[k], gc = s->grp[c];
                bool reads = false;
                for (int i = 0; i < g->n[c].nin; i++)
                    reads |= g->n[c].in[i] == t;
                if (!reads || gc == gk || g->n[c].kind != GN_POINTWISE || !group_is_pointwise(s, gc) ||
                    group_nodes(s, gk) + group_nodes(s, gc) > SIBLING_MAX_NODES ||
                    !groups_same_shape(s, gk, gc, shape) || !can_merge(s, gk, gc))
                    continue;
                merge(s, gk, gc);
            }
        }
    }
}

const char *gpart_kind_name(gpart_kind k)
{
    static const char *const names[] = {"pointwise", "reduce", "matmul", "single"};
    return (unsigned)k < 4 ? names[k] : "?";
}

static void add_unique(arena *ar, int **arr, int *n, int v, int cap)
{
    for (int i = 0; i < *n; i++)
        if ((*arr)[i] == v)
            return;
    if (!*arr)
        *arr = arena_alloc(ar, (size_t)cap * sizeof **arr);
    (*arr)[(*n)++] = v;
}

/* Bytes a tensor's elements occupy: its span, or for a strided view (a
 * slice of a row) its elements alone when fewer. */
static double moved_bytes(const gtensor *t)
{
    double span = (double)gg_span_bytes(t), dense = (double)t->numel * (double)gg_dtype_bytes(t->dtype);
    return t->is_scalar ? 0 : dense < span ? dense : span;
}

static void fill_part(gplan *pl, gpart *p, int grp, const int *grp_of)
{
    ggraph *g = pl->g;
    arena *ar = g->ar;
    p->anchor = -1;
    p->nodes = arena_alloc(ar, (size_t)g->nn * sizeof *p->nodes);
    bool all_pw = true;
    size_t namelen = 1;
    for (int k = 0; k < g->nn; k++) {
        if (grp_of[k] != grp)
            continue;
        p->nodes[p->nnodes++] = k;
        namelen += strlen(g->n[k].name) + 1;
        gnode_kind nk = g->n[k].kind;
        if (nk != GN_POINTWISE) {
            all_pw = false;
            p->anchor = k;
            p->kind = nk == GN_MATMUL ? GP_MATMUL : nk == GN_OTHER ? GP_SINGLE : GP_REDUCE;
        }
    }
    if (all_pw)
        p->kind = GP_POINTWISE;
    char *name = arena_alloc(ar, namelen);
    for (int i = 0; i < p->nnodes; i++) {
        if (i)
            strcat(name, "+");
        strcat(name, g->n[p->nodes[i]].name);
    }
    p->name = name;
    int cap = g->nt;
    for (int i = 0; i < p->nnodes; i++) {
        const gnode *n = &g->n[p->nodes[i]];
        for (int j = 0; j < n->nin; j++) {
            int t = n->in[j];
            if (t >= 0 && !g->t[t].is_scalar && pl->materialized[t] &&
                (g->t[t].producer < 0 || grp_of[g->t[t].producer] != grp))
                add_unique(ar, &p->ins, &p->nins, t, cap);
        }
        if (n->out >= 0 && pl->materialized[n->out])
            add_unique(ar, &p->outs, &p->nouts, n->out, cap);
        /* Cost model: the descriptor's count, else one op per output element
         * (2*M*N*K for matmul, input elements for reductions). */
        double f = n->flops;
        if (f <= 0 && n->out >= 0) {
            const gtensor *o = &g->t[n->out];
            f = (double)o->numel;
            if (n->kind == GN_MATMUL && n->nin >= 1 && g->t[n->in[0]].rank >= 2) {
                const gtensor *a = &g->t[n->in[0]];
                f = 2.0 * (double)o->numel * (double)a->dims[a->rank - (n->trans_a ? 2 : 1)];
            } else if ((n->kind == GN_REDUCE || n->kind == GN_SOFTMAX) && n->nin >= 1) {
                f = (double)g->t[n->in[0]].numel * (n->kind == GN_SOFTMAX ? 5 : 1);
            }
        }
        p->flops += f;
    }
    for (int i = 0; i < p->nouts; i++)
        p->bytes += moved_bytes(&g->t[p->outs[i]]);
    for (int i = 0; i < p->nins; i++) {
        const gtensor *x = &g->t[p->ins[i]];
        bool in_place = false; /* a concat's piece already in its result (views.c): not moved */
        for (int j = 0; j < p->nouts; j++)
            in_place |= x->view_of == p->outs[j];
        p->bytes += in_place ? -moved_bytes(x) : moved_bytes(x);
    }
}

gplan *gpu_partition(ggraph *g, bool no_fusion)
{
    arena *ar = g->ar;
    gplan *pl = arena_alloc(ar, sizeof *pl);
    pl->g = g;
    int nn = g->nn;
    pstate s = {g, arena_alloc(ar, (size_t)(nn + 1) * sizeof(int)), arena_alloc(ar, (size_t)nn + 1)};
    for (int k = 0; k < nn; k++)
        s.grp[k] = k;
    if (!no_fusion) {
        fuse_matmul_epilogues(&s);
        fuse_dgrad_masks(&s);
        if (!getenv("XDNN_NO_NORM_FUSION")) {
            fuse_norm_epilogues(&s);
            fuse_norm_joins(&s);
        }
        fuse_pointwise(&s);
        fuse_reduce_prologues(&s);
        const char *sib = getenv("XDNN_NO_SIBLING_FUSION");
        if (!sib || !*sib || strcmp(sib, "0") == 0)
            fuse_pointwise_siblings(&s);
    }

    /* Materialized: inputs, outputs, dead ends, and tensors crossing groups. */
    pl->materialized = arena_alloc(ar, (size_t)g->nt + 1);
    for (int t = 0; t < g->nt; t++) {
        const gtensor *x = &g->t[t];
        pl->materialized[t] = !x->is_scalar && (x->is_input || x->is_output || x->nconsumers == 0);
    }
    for (int k = 0; k < nn; k++)
        for (int j = 0; j < g->n[k].nin; j++) {
            int t = g->n[k].in[j];
            int p = t >= 0 ? g->t[t].producer : -1;
            if (p >= 0 && s.grp[p] != s.grp[k])
                pl->materialized[t] = true;
            if (t >= 0 && g->t[t].view_of >= 0) /* a view is read from its storage */
                pl->materialized[t] = pl->materialized[g->t[t].view_of] = true;
        }

    /* Order groups topologically (Kahn), ties broken by first node. */
    int ngroups = 0;
    int *groups = arena_alloc(ar, (size_t)(nn + 1) * sizeof(int));
    for (int k = 0; k < nn; k++)
        if (s.grp[k] == k)
            groups[ngroups++] = k;
    pl->parts = arena_alloc(ar, (size_t)(ngroups + 1) * sizeof *pl->parts);
    pl->part_of = arena_alloc(ar, (size_t)(nn + 1) * sizeof(int));
    char *done = arena_alloc(ar, (size_t)nn + 1);
    for (int placed = 0; placed < ngroups; placed++) {
        int pick = -1;
        for (int i = 0; i < ngroups && pick < 0; i++) {
            int gr = groups[i];
            if (done[gr])
                continue;
            bool ready = true;
            for (int k = 0; k < nn && ready; k++) {
                if (s.grp[k] != gr)
                    continue;
                for (int j = 0; j < g->n[k].nin; j++) {
                    int q = producer_group(&s, g->n[k].in[j]);
                    if (q >= 0 && q != gr && !done[q])
                        ready = false;
                }
            }
            if (ready)
                pick = gr;
        }
        if (pick < 0) /* a cycle: cannot happen after can_merge; keep going safely */
            for (int i = 0; i < ngroups && pick < 0; i++)
                if (!done[groups[i]])
                    pick = groups[i];
        done[pick] = 1;
        gpart *p = &pl->parts[pl->nparts];
        p->id = pl->nparts++;
        fill_part(pl, p, pick, s.grp);
        for (int i = 0; i < p->nnodes; i++)
            pl->part_of[p->nodes[i]] = p->id;
    }
    return pl;
}

void gpu_print_partitions(const gplan *p, FILE *f)
{
    const ggraph *g = p->g;
    for (int i = 0; i < p->nparts; i++) {
        const gpart *q = &p->parts[i];
        fprintf(f, "partition %d [%s%s] %s: reads", i, gpart_kind_name(q->kind), q->once ? ", once" : "", q->name);
        for (int j = 0; j < q->nins; j++)
            fprintf(f, " %s", g->t[q->ins[j]].name);
        fprintf(f, "; writes");
        for (int j = 0; j < q->nouts; j++)
            fprintf(f, " %s", g->t[q->outs[j]].name);
        fprintf(f, "\n");
    }
}
