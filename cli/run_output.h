/* run_output.h — how `xdnn run` reports: outputs with statistics and first
 * values, per-op or per-partition timings, comparisons; text or JSON. */
#ifndef XDNN_RUN_OUTPUT_H
#define XDNN_RUN_OUTPUT_H

#include "run_gpu.h"
#include "xdnn.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* One reported tensor of run r of graph g: its index in the graph. */
void print_tensor_text(FILE *f, const xdnn_graph_t *g, const xdnn_run_t *r, int tensor, bool full);
cJSON *tensor_json(const xdnn_graph_t *g, const xdnn_run_t *r, int tensor, bool full);
void print_cpu_times_text(FILE *f, const xdnn_graph_t *g, const xdnn_run_t *r);
cJSON *cpu_times_json(const xdnn_graph_t *g, const xdnn_run_t *r);
void print_gpu_report_text(FILE *f, const run_gpu_report *rep);
cJSON *gpu_report_json(const run_gpu_report *rep);
/* Print a failed comparison: counts, norms and the worst elements. */
/* norm: the verdict was ||got - ref|| / ||ref|| <= r->rtol (run --norm), not element-wise. */
void print_compare_text(FILE *f, const char *what, const char *name, const xdnn_compare_result *r, int rank,
                        bool norm);
cJSON *compare_json(const char *what, const char *name, const xdnn_compare_result *r, int rank, bool norm);

#endif
