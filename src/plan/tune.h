/* tune.h — the autotune cache: which engine (and knobs) ran a partition
 * fastest on one device with one xdnn version.
 *
 * Location: $XDNN_CACHE_DIR, else $HOME/.cache/xdnn.  One file per device and
 * xdnn version, tune-<16 hex digits of FNV-1a64(fingerprint "\n" version)>.jsonl:
 * line 1 is {"xdnn_tune_cache":1,"device":FP,"xdnn":VERSION}; every further
 * line is one entry {"sig","engine","knobs","ms","candidates","ranking","when"}.
 * Files are rewritten atomically; a damaged file is reported and ignored, never
 * trusted.  The signature of a partition names its ops, every tensor's dtype,
 * shape and strides, and every bound attribute, so two partitions with the
 * same signature run the same code. */
#ifndef XDNN_PLAN_TUNE_H
#define XDNN_PLAN_TUNE_H

#include "core/ir.h"

#include <stdio.h>

/* Signature of one node: "conv(x:f16[2,4,8,8]/[256,1,32,4], w:...)->(y.0:f32[...]/[...]) {stride=[1,1], ...}". */
char *tune_node_signature(const xgraph *g, const xnode *n, arena *a);
/* Signature of a partition named "a+b+c" (node names): its nodes' signatures joined by " ; ". */
char *tune_partition_signature(const xgraph *g, const char *partition, arena *a);

typedef struct tune_rank {
    char engine[64];
    char knobs[128];
    double ms;
} tune_rank;

typedef struct tune_entry {
    char *sig;             /* malloc'ed */
    char engine[64];
    char knobs[128];
    double ms;             /* the winner's median */
    int candidates;        /* how many ways were timed */
    tune_rank *ranking;    /* malloc'ed, fastest first */
    int nranking;
    char when[32];         /* UTC ISO 8601 */
} tune_entry;

void tune_entry_free(tune_entry *e);

/* The cache folder is core/fileio.h's cache_dir() (created on store, not on
 * lookup); with caching off, lookups miss and stores keep nothing. */
#define TUNE_DIR_MAX 4096
/* A cache file larger than this is damaged (an entry is a few hundred bytes). */
#define TUNE_FILE_MAX (64 << 20)
/* Find `sig` for device `fp` in this xdnn version's file; true and *out filled
 * (free with tune_entry_free) when present. */
bool tune_cache_lookup(const char *fp, const char *sig, tune_entry *out);
/* Add or replace entries (by sig) in the file of device `fp`; atomic rewrite. */
xdnn_status tune_cache_store(const char *fp, const tune_entry *entries, int n, xdnn_diags_t *d);
/* Print every entry of every cache file (device, version, engine, ms, sig),
 * as text or as one JSON object {dir, files: [{file, device, xdnn, used,
 * entries: [...]}], entries}. */
xdnn_status tune_cache_list(FILE *f, bool verbose, bool json, xdnn_diags_t *d);
/* Remove every tune-*.jsonl file of the cache; *removed counts entries. */
xdnn_status tune_cache_clear(int *files, int *entries, xdnn_diags_t *d);

/* UTC timestamp "2026-11-22T18:30:00Z" for new entries. */
void tune_now(char *buf, size_t len);

#endif
