/* xdnn.h — the public C API of libxdnn: load or build op graphs, bind their
 * parameters, infer shapes, and run them on the CPU reference backend or the GPU.
 *
 * Conventions
 *  - Every function that can fail returns an xdnn_status; XDNN_OK is 0 and each
 *    other value is also the CLI's exit code for that class of failure.
 *  - Nothing here aborts on bad input: errors are reported as structured
 *    diagnostics (xdnn_diags_t) with a source location where there is one.
 *  - Handles are opaque; every `destroy` accepts NULL.
 *  - Ownership is written beside each function ("consumes", "borrowed").
 */
#ifndef XDNN_H
#define XDNN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XDNN_VERSION_STRING "0.1.0"

/* Only the xdnn_ API is exported from libxdnn.so (built -fvisibility=hidden). */
#if defined(__GNUC__)
#define XDNN_API __attribute__((visibility("default")))
#else
#define XDNN_API
#endif
#define XDNN_MAX_RANK 8

/* Status codes double as the CLI exit codes (see man/xdnn.1, EXIT STATUS). */
typedef enum xdnn_status {
    XDNN_OK = 0,
    XDNN_ERR_USAGE = 1,       /* bad command line or API misuse */
    XDNN_ERR_SYNTAX = 2,      /* .dnn or JSON syntax error */
    XDNN_ERR_SEMANTIC = 3,    /* name, type, shape error or failed assert */
    XDNN_ERR_UNSUPPORTED = 4, /* valid graph, but no engine/backend can run it */
    XDNN_ERR_IO = 5,          /* file I/O or tensor-file format error */
    XDNN_ERR_CHECK = 6,       /* a `check` or --check comparison failed */
    XDNN_ERR_DEVICE = 7,      /* CUDA, driver, cuBLAS or NVRTC error; no GPU */
    XDNN_ERR_NOMEM = 8,       /* out of host or device memory */
    XDNN_ERR_INTERNAL = 9     /* a broken internal invariant (a bug) */
} xdnn_status;

XDNN_API const char *xdnn_status_name(xdnn_status s);

/* Element types.  The order is ABI; names match the .dnn spelling. */
typedef enum xdnn_dtype {
    XDNN_F32 = 0,
    XDNN_F16,
    XDNN_BF16,
    XDNN_FP8_E4M3,
    XDNN_FP8_E5M2,
    XDNN_I8,
    XDNN_I32,
    XDNN_BOOL,
    XDNN_I64,
    XDNN_F64,
    XDNN_DTYPE_COUNT
} xdnn_dtype;

XDNN_API const char *xdnn_dtype_name(xdnn_dtype t);             /* "f16" */
XDNN_API bool xdnn_dtype_from_name(const char *name, xdnn_dtype *out);
XDNN_API size_t xdnn_dtype_size(xdnn_dtype t);                   /* bytes per element */

/* ---------------------------------------------------------------- diagnostics */

typedef enum xdnn_severity { XDNN_SEV_ERROR, XDNN_SEV_WARNING, XDNN_SEV_NOTE } xdnn_severity;

/* One diagnostic record.  `file` may be NULL (no location); line/col are 1-based,
 * col_end is the last column of the underlined span (== col for a caret). */
typedef struct xdnn_diag {
    xdnn_severity severity;
    xdnn_status status;     /* class of the error (syntax, semantic, io, ...) */
    const char *file;
    int line, col, col_end;
    const char *message;
    const char *json_path;  /* JSON pointer for JSON inputs, else NULL */
} xdnn_diag;

typedef struct xdnn_diags xdnn_diags_t;

XDNN_API xdnn_diags_t *xdnn_diags_create(void);
XDNN_API void xdnn_diags_destroy(xdnn_diags_t *d);
XDNN_API size_t xdnn_diags_count(const xdnn_diags_t *d);
XDNN_API const xdnn_diag *xdnn_diags_get(const xdnn_diags_t *d, size_t i);   /* borrowed */
XDNN_API size_t xdnn_diags_error_count(const xdnn_diags_t *d);
/* The status of the first error, or XDNN_OK when there is none. */
XDNN_API xdnn_status xdnn_diags_status(const xdnn_diags_t *d);
/* Print gcc-style: "file:line:col: error: msg", the source line and a caret. */
XDNN_API void xdnn_diags_print(const xdnn_diags_t *d, FILE *f);

/* ---------------------------------------------------------------- modules and graphs */

/* A module is one parsed source: its files, params, asserts and graphs. */
typedef struct xdnn_module xdnn_module_t;
typedef struct xgraph xdnn_graph_t;

/* Load a .dnn or .json file (chosen by extension, else by sniffing '{').
 * `include_dirs` is a NULL-terminated list (may be NULL).  On failure returns
 * the error class and fills `diags`; *out is NULL. */
XDNN_API xdnn_status xdnn_module_load(const char *path, const char *const *include_dirs,
                             xdnn_diags_t *diags, xdnn_module_t **out);
/* Parse from memory; `name` is used in diagnostics. */
XDNN_API xdnn_status xdnn_module_parse(const char *name, const char *text, size_t len, bool is_json,
                              xdnn_diags_t *diags, xdnn_module_t **out);
XDNN_API xdnn_module_t *xdnn_module_create(void);
XDNN_API void xdnn_module_destroy(xdnn_module_t *m);

XDNN_API size_t xdnn_module_graph_count(const xdnn_module_t *m);
XDNN_API xdnn_graph_t *xdnn_module_graph(xdnn_module_t *m, size_t i);            /* borrowed */
/* Find a graph by name; NULL name selects the default graph (the only one, or
 * the last one of the main file). */
XDNN_API xdnn_graph_t *xdnn_module_find_graph(xdnn_module_t *m, const char *name);

/* Write the module as JSON or as canonical .dnn text.  Files are written
 * atomically (temp file + rename); "-" writes to stdout. */
XDNN_API xdnn_status xdnn_module_write_json(const xdnn_module_t *m, const char *path, xdnn_diags_t *diags);
XDNN_API xdnn_status xdnn_module_write_dnn(const xdnn_module_t *m, const char *path, xdnn_diags_t *diags);
/* Return a malloc'ed string; caller frees. */
XDNN_API char *xdnn_module_to_json(const xdnn_module_t *m);
XDNN_API char *xdnn_module_to_dnn(const xdnn_module_t *m);

/* ---------------------------------------------------------------- building by hand */

typedef enum xdnn_tensor_kind {
    XDNN_TENSOR_INPUT,
    XDNN_TENSOR_WEIGHT,
    XDNN_TENSOR_VIRTUAL     /* produced by a node */
} xdnn_tensor_kind;

/* Define a param (int or float).  A derived param is given as .dnn text via
 * xdnn_module_add_param_expr. */
XDNN_API xdnn_status xdnn_module_add_param_int(xdnn_module_t *m, const char *name, int64_t value);
XDNN_API xdnn_status xdnn_module_add_param_float(xdnn_module_t *m, const char *name, double value);
XDNN_API xdnn_status xdnn_module_add_param_expr(xdnn_module_t *m, const char *name, const char *expr_text,
                                       xdnn_diags_t *diags);

XDNN_API xdnn_graph_t *xdnn_module_add_graph(xdnn_module_t *m, const char *name);
/* Graph context: io, compute, intermediate dtypes and the seed. */
XDNN_API void xdnn_graph_set_context(xdnn_graph_t *g, xdnn_dtype io, xdnn_dtype compute,
                            xdnn_dtype intermediate, uint64_t seed);

/* Declare an input or weight with concrete dims and a packed row-major layout.
 * `init_text` is an initializer in .dnn syntax ("randn(std=0.5)") or NULL for
 * the default (uniform).  Returns the tensor index or -1 (see diags). */
XDNN_API int xdnn_graph_add_tensor(xdnn_graph_t *g, const char *name, xdnn_tensor_kind kind,
                          xdnn_dtype dtype, int rank, const int64_t *dims,
                          const char *init_text, xdnn_diags_t *diags);
/* Set the layout of a declared tensor: a named tag ("nhwc") or NULL + perm. */
XDNN_API xdnn_status xdnn_graph_set_layout(xdnn_graph_t *g, const char *tensor, const char *tag,
                                  int rank, const int64_t *perm, xdnn_diags_t *diags);

/* Add a node.  `inputs` are tensor names in port order (NULL = absent optional
 * port); `results` are target names (NULL or "_" = discarded); the number of
 * results selects the op's variant.  `attrs` is .dnn keyword text such as
 * "stride=2, pad=[1,1]" or NULL.  Returns the node index or -1. */
XDNN_API int xdnn_graph_add_node(xdnn_graph_t *g, const char *op, int n_inputs, const char *const *inputs,
                        int n_results, const char *const *results, const char *attrs,
                        xdnn_diags_t *diags);
XDNN_API xdnn_status xdnn_graph_mark_output(xdnn_graph_t *g, const char *tensor, xdnn_diags_t *diags);

/* ---------------------------------------------------------------- binding and inference */

/* Param overrides, "N=8" style.  Unknown names, derived params and values of the
 * wrong type are errors. */
typedef struct xdnn_binding {
    const char *name;
    const char *value_text;
} xdnn_binding;

/* Evaluate params (with overrides), asserts, dims and attributes; infer every
 * tensor's dtype, shape and strides; validate every node.  May be called again
 * with other bindings. */
XDNN_API xdnn_status xdnn_graph_bind(xdnn_graph_t *g, const xdnn_binding *bindings, size_t n_bindings,
                            xdnn_diags_t *diags);

/* Print the typed graph (after bind): every tensor's dtype, shape, strides. */
XDNN_API void xdnn_graph_print_typed(const xdnn_graph_t *g, FILE *f);
/* Graphviz DOT of the (bound) graph. */
XDNN_API void xdnn_graph_print_dot(const xdnn_graph_t *g, FILE *f);

/* Introspection of a bound graph. */
XDNN_API size_t xdnn_graph_tensor_count(const xdnn_graph_t *g);
XDNN_API size_t xdnn_graph_node_count(const xdnn_graph_t *g);
XDNN_API const char *xdnn_graph_name(const xdnn_graph_t *g);

/* ---------------------------------------------------------------- plans */

/* An execution plan: a bound graph specialized to its param values, with the
 * engine (and knobs) of every partition, the workspace layout and compiled GPU
 * modules, for one device and one xdnn version.  Format: man/xdnn-plan.5. */
typedef struct xdnn_plan xdnn_plan_t;

/* Plan bound graph g (borrowed, not modified) for the GPU (use_gpu) or the CPU
 * reference.  tune: time every engine that supports each partition, keep the
 * fastest and store it in the tune cache ($XDNN_CACHE_DIR); otherwise cached
 * choices, then heuristics. */
XDNN_API xdnn_status xdnn_plan_create(xdnn_graph_t *g, bool use_gpu, bool tune, xdnn_diags_t *diags,
                                      xdnn_plan_t **out);
/* The plan as bytes: *data is malloc'ed (free() it). */
XDNN_API xdnn_status xdnn_plan_serialize(const xdnn_plan_t *p, void **data, size_t *len, xdnn_diags_t *diags);
/* Flags of xdnn_plan_deserialize. */
enum { XDNN_PLAN_ANY_DEVICE = 1 }; /* accept another device's or xdnn version's plan (to inspect or replan) */
/* Verify (checksum, structure) and load a plan; its graph is parsed and bound.
 * Another device's or version's plan is refused (XDNN_ERR_UNSUPPORTED) unless
 * XDNN_PLAN_ANY_DEVICE; corrupt or truncated bytes give XDNN_ERR_IO. */
XDNN_API xdnn_status xdnn_plan_deserialize(const void *data, size_t len, unsigned flags, xdnn_diags_t *diags,
                                           xdnn_plan_t **out);
/* The plan's bound graph (borrowed; lives as long as the plan). */
XDNN_API xdnn_graph_t *xdnn_plan_graph(xdnn_plan_t *p);
XDNN_API void xdnn_plan_destroy(xdnn_plan_t *p);

/* ---------------------------------------------------------------- op catalogue */

XDNN_API size_t xdnn_op_count(void);
XDNN_API const char *xdnn_op_name(size_t i);
/* Print the catalogue (ports, results, attributes with defaults) as text. */
XDNN_API void xdnn_ops_print(FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* XDNN_H */
