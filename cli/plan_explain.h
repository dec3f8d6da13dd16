/* plan_explain.h — `xdnn plan --explain` (plan_explain.c). */
#ifndef XDNN_CLI_PLAN_EXPLAIN_H
#define XDNN_CLI_PLAN_EXPLAIN_H

#include "xdnn.h"

#include <stdio.h>

typedef struct explain_opts {
    xdnn_backend backend;
    const char *device_model;   /* NULL: the device that is here */
    const char *const *force;   /* --engine X=ENGINE */
    size_t nforce;
    bool verbose;               /* also the engines that declined, with their reason */
} explain_opts;

/* Print p's device, partitions, chosen engines and candidates (verbose: also
 * the engines that declined, with their reason) to f. */
void plan_explain_print(const xdnn_plan_t *p, bool verbose, FILE *f);
/* Plan bound graph g and print it as plan_explain_print does. */
xdnn_status plan_explain(xdnn_graph_t *g, const explain_opts *o, FILE *f);

#endif
