/* bench_shard.c — `xdnn bench --shard I/N`: which cases subset I of N runs.
 *
 * The split balances the estimated cost (bench_case_cost) greedily: cases in
 * order of cost, largest first (ties: by a hash of the case's identity, then
 * input order), each to the shard with the least cost so far (ties: the lowest
 * shard).  It reads nothing but the case list and the costs, so every shard
 * process of an array job computes the same split, the N subsets cover every
 * case exactly once, and reordering the batch file or the --set lists moves no
 * case to another shard. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

bool bench_parse_shard(const char *arg, int *i, int *n)
{
    char *end;
    long a = strtol(arg, &end, 10), b = 0;
    bool ok = end != arg && *end == '/';
    if (ok) {
        const char *rest = end + 1;
        b = strtol(rest, &end, 10);
        ok = end != rest && !*end && b >= 1 && b <= 1000000 && a >= 1 && a <= b;
    }
    if (!ok) {
        cli_usage_error("bench", "--shard needs I/N with 1 <= I <= N (e.g. 2/8), got '%s'", arg);
        return false;
    }
    *i = (int)a;
    *n = (int)b;
    return true;
}

static const double *sort_cost; /* qsort has no context argument */
static const unsigned long long *sort_tie;

static int by_cost(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    if (sort_cost[a] != sort_cost[b])
        return sort_cost[a] > sort_cost[b] ? -1 : 1;
    if (sort_tie && sort_tie[a] != sort_tie[b])
        return sort_tie[a] < sort_tie[b] ? -1 : 1;
    return (a > b) - (a < b);
}

int *bench_cost_order(const double *cost, const unsigned long long *tie, int n)
{
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (int k = 0; k < n; k++)
        order[k] = k;
    sort_cost = cost;
    sort_tie = tie;
    qsort(order, (size_t)n, sizeof *order, by_cost);
    sort_cost = NULL;
    sort_tie = NULL;
    return order;
}

void bench_shard_select(const double *cost, const unsigned long long *ident, int ncases, int i, int n, bool *keep)
{
    memset(keep, 0, (size_t)ncases * sizeof *keep);
    int *order = bench_cost_order(cost, ident, ncases);
    double *load = calloc((size_t)n, sizeof *load);
    if (!order || !load) { /* no memory for the balance: fall back to every n-th case */
        for (int k = 0; k < ncases; k++)
            keep[k] = k % n == i - 1;
    } else {
        for (int k = 0; k < ncases; k++) {
            int best = 0;
            for (int s = 1; s < n; s++)
                if (load[s] < load[best])
                    best = s;
            load[best] += cost[order[k]];
            keep[order[k]] = best == i - 1;
        }
    }
    free(order);
    free(load);
}
