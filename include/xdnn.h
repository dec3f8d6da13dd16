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
/* The alignment, in bytes, every device pointer bound to a CUDA plan must have
 * (xdnn_plan_execute refuses others with XDNN_ERR_USAGE). */
#define XDNN_CUDA_ALIGNMENT 16

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
    XDNN_E8M0,      /* MX scale: 2^(e-127), e = 0..254; 0xFF is NaN; no sign, zero or Inf */
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
/* One JSON object per record and line: severity, status, file, line, col,
 * col_end, json_path (those that are set) and message. */
XDNN_API void xdnn_diags_print_json(const xdnn_diags_t *d, FILE *f);
XDNN_API size_t xdnn_diags_error_count(const xdnn_diags_t *d);
/* The status of the first error, or XDNN_OK when there is none. */
XDNN_API xdnn_status xdnn_diags_status(const xdnn_diags_t *d);
/* Add a record with no source location (a program's own message, in the
 * same stream as the library's); status XDNN_OK for notes and warnings. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
XDNN_API void xdnn_diags_add(xdnn_diags_t *d, xdnn_severity sev, xdnn_status status, const char *fmt, ...);
/* Print gcc-style: "file:line:col: error: msg", the source line and a caret. */
XDNN_API void xdnn_diags_print(const xdnn_diags_t *d, FILE *f);

/* ---------------------------------------------------------------- modules and graphs */

/* A module is one parsed source: its files, params, asserts and graphs. */
typedef struct xdnn_module xdnn_module_t;
typedef struct xgraph xdnn_graph_t;

/* Load a .dnn or .json file (chosen by extension, else by sniffing '{').
 * `include_dirs` is a NULL-terminated list (may be NULL).  On failure returns
 * the error class and fills `diags`; *out is NULL. */
/* The same for a graph that is not trusted: its includes and load() read only
 * files under the graph's own folder and include_dirs (no absolute paths, no
 * '..' or symbolic link out of them, no $XDNN_PATH), so it cannot read, or
 * quote in a diagnostic, any other file.  `xdnn --sandbox`. */
XDNN_API xdnn_status xdnn_module_load_confined(const char *path, const char *const *include_dirs,
                                               xdnn_diags_t *diags, xdnn_module_t **out);
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

/* Replace param `name`'s value (a module's or any graph's) by the literal
 * `value_text` (.dnn syntax, "8" or "0.5"), dropping its sweep list, so that
 * the module writes with it (`xdnn convert --specialize`).  Unknown names,
 * derived params and values that are not literals: XDNN_ERR_USAGE. */
XDNN_API xdnn_status xdnn_module_specialize(xdnn_module_t *m, const char *name, const char *value_text,
                                            xdnn_diags_t *diags);

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
/* Host memory the CPU reference needs to run the bound graph, in bytes: every
 * tensor it keeps (at its dtype and strided span) and the largest scratch it
 * needs beside them (a node's operands widened to double).  Sums saturate. */
XDNN_API xdnn_status xdnn_graph_reference_memory(const xdnn_graph_t *g, uint64_t *tensor_bytes,
                                                 uint64_t *scratch_bytes);
/* The typed graph (after bind) as one JSON object (malloc'ed text; free()
 * it; NULL when out of memory): graph, context, params, tensors (kind,
 * name, dtype, shape, layout, strides), nodes (op, results, inputs by port,
 * attrs) and memory (the two figures above), as `xdnn check --format json`. */
XDNN_API char *xdnn_graph_typed_json(const xdnn_graph_t *g);
/* Graphviz DOT of the (bound) graph. */
XDNN_API void xdnn_graph_print_dot(const xdnn_graph_t *g, FILE *f);

/* Params: the module's, then the graph's own (index order).  Strings live as
 * long as the module. */
typedef struct xdnn_param_info {
    const char *name;
    bool graph_own;                  /* declared in the graph, not the module */
    bool derived;                    /* computed from other params: cannot be set */
    const char *value_text;          /* its default value or derivation, as .dnn text */
    const char *bound_text;          /* its value after xdnn_graph_bind ("8"); NULL when not bound */
    size_t nsweep;                   /* length of its sweep [...] list (0: none) */
} xdnn_param_info;

XDNN_API size_t xdnn_graph_param_count(const xdnn_graph_t *g);
XDNN_API xdnn_status xdnn_graph_param(const xdnn_graph_t *g, size_t i, xdnn_param_info *out);
/* Value k of param i's sweep list as .dnn text, NULL past its end. */
XDNN_API const char *xdnn_graph_param_sweep(const xdnn_graph_t *g, size_t i, size_t k);
/* The index of the param a binding of `name` sets (the graph's own first), or -1. */
XDNN_API int xdnn_graph_find_param(const xdnn_graph_t *g, const char *name);
/* The bound io dtype (false when the graph has none), and whether the graph
 * declares one (graph g(io=...)). */
XDNN_API bool xdnn_graph_io_dtype(const xdnn_graph_t *g, xdnn_dtype *out);
XDNN_API bool xdnn_graph_declares_io_dtype(const xdnn_graph_t *g);
/* Rewrite the graph's io dtype to `to` before binding: its io context and
 * every declared or annotated tensor dtype equal to the old io dtype
 * (`xdnn bench --dtype`).  XDNN_ERR_USAGE when it declares none. */
XDNN_API xdnn_status xdnn_graph_set_io_dtype(xdnn_graph_t *g, xdnn_dtype to, xdnn_diags_t *diags);

/* Introspection of a bound graph. */
XDNN_API size_t xdnn_graph_tensor_count(const xdnn_graph_t *g);
XDNN_API size_t xdnn_graph_node_count(const xdnn_graph_t *g);
XDNN_API const char *xdnn_graph_name(const xdnn_graph_t *g);

/* ---------------------------------------------------------------- plans */

/* An execution plan: a bound graph specialized to its param values, with the
 * backend, the engine (and knobs) of every partition, the workspace size and
 * compiled GPU modules, for one device and one xdnn version.  Build it once,
 * execute it many times.  Format of its bytes: man/xdnn-plan.5.
 *
 * Threads: a plan is immutable once created; any number of host threads may
 * call xdnn_plan_execute on one plan at the same time, each with its own
 * workspace (and, on CUDA, its own stream or the same one).  Queries return
 * strings that live as long as the plan. */
typedef struct xdnn_plan xdnn_plan_t;

/* Where a plan runs.  AUTO: CUDA when a device is usable, else the CPU. */
typedef enum xdnn_backend {
    XDNN_BACKEND_AUTO = 0,
    XDNN_BACKEND_CPU,         /* the CPU reference: host pointers, no workspace */
    XDNN_BACKEND_CUDA         /* CUDA engines: device pointers, a stream */
} xdnn_backend;

XDNN_API const char *xdnn_backend_name(xdnn_backend b);                /* "cpu", "cuda" */
/* True when backend b can run here; otherwise `why` (may be NULL) says what is missing. */
XDNN_API bool xdnn_backend_available(xdnn_backend b, char *why, size_t len);

/* How engines are chosen. */
typedef enum xdnn_heuristic {
    XDNN_HEUR_FAST = 0,       /* tune-cache entries, else the cost model: no GPU time spent */
    XDNN_HEUR_MEASURED,       /* time every supported engine (default knobs) and keep the fastest */
    XDNN_HEUR_EXHAUSTIVE      /* time every engine with every knob variant */
} xdnn_heuristic;

/* Options of xdnn_plan_build.  Always start from xdnn_plan_options_init (it
 * fills struct_size, so a later xdnn with more fields still reads yours). */
typedef struct xdnn_plan_options {
    size_t struct_size;
    xdnn_backend backend;            /* AUTO */
    int device;                      /* CUDA device ordinal (0) */
    xdnn_heuristic heuristic;        /* FAST */
    const char *const *force;        /* "OP=ENGINE[:knobs]" or "PART=ENGINE[:knobs]" (NULL) */
    size_t nforce;
    uint64_t workspace_limit;        /* bytes; 0 = no limit.  A plan above it is refused. */
    bool deterministic;              /* refuse engines whose results vary run to run (atomics) */
    int tf32;                        /* -1: as the graph says (default), 0: never, 1: allowed */
    /* Plan for a described GPU instead of a present one: "h100", "h200" or
     * "a100" (NULL: none).  Lowering, partitioning, engine selection and the
     * workspace layout run on the host, with no GPU; such a plan can be
     * queried (partitions, candidates, workspace) but not executed. */
    const char *device_model;
    /* Measured selection writes its ranking here, one line per partition and
     * candidate, as it times them (NULL: quiet). */
    FILE *log;
    int tune_warmup, tune_iters;     /* measured selection's runs per candidate: untimed (1), timed (5) */
    const char *base_dir;            /* where the relative load() paths of the inputs measured selection
                                        runs the graph on start (NULL: the current directory) */
    /* Plan-time constants (opt-in; false keeps cuDNN's contract: every bound
     * tensor, weights included, may change between executes).  true promises
     * that the tensors declared `weight` keep their values for the plan's
     * life: on CUDA the partitions that compute from weights only (casts,
     * layout copies of weights) run once, in the plan's first execute, into
     * device memory the plan owns, and are skipped by every later execute, so
     * a weight changed after that first execute is NOT seen by them (build or
     * load the plan again).  That first execute synchronizes its stream (run
     * it before capturing a CUDA graph).  The CPU reference runs every node
     * whatever this says.  Kept in the plan's bytes. */
    bool const_weights;
    /* Dynamic params: "P=LO:HI" texts, each an integer param of the graph
     * whose bound value lies in [LO, HI] (NULL: none).  xdnn_plan_resize then
     * makes plans for other values in those ranges with this plan's engine
     * choices, without selecting or tuning again.  Kept in the plan's bytes. */
    const char *const *dynamic;
    size_t ndynamic;
} xdnn_plan_options;

XDNN_API void xdnn_plan_options_init(xdnn_plan_options *o);

/* Plan bound graph g (borrowed, not modified: the plan keeps its own copy).
 * Fails with XDNN_ERR_DEVICE when the CUDA backend is asked for and there is
 * no usable device, and XDNN_ERR_UNSUPPORTED when some partition has no
 * engine (diags name the op and why each engine declined). */
XDNN_API xdnn_status xdnn_plan_build(xdnn_graph_t *g, const xdnn_plan_options *o, xdnn_diags_t *diags,
                                     xdnn_plan_t **out);
/* A plan like p (backend, device, engine and knobs of every partition,
 * const_weights, dynamic ranges) for other values of its dynamic params:
 * `values` are "P" = "V" pairs, each P a dynamic param of p and V in its
 * range; params not named keep p's values.  No engine is selected or tuned:
 * p's choices are restored as data and only what depends on the sizes is
 * redone (binding, lowering, workspace layout, building: generated kernels
 * take their sizes as arguments, so a new size of a known shape class
 * compiles nothing).  XDNN_ERR_USAGE for
 * a param that is not dynamic or a value out of range; XDNN_ERR_UNSUPPORTED
 * when the graph partitions differently at the new sizes or a chosen engine
 * cannot run them (diags name the partition and why: build a new plan).
 * p is not modified; the new plan is independent of it (destroy both). */
XDNN_API xdnn_status xdnn_plan_resize(const xdnn_plan_t *p, const xdnn_binding *values, size_t n,
                                      xdnn_diags_t *diags, xdnn_plan_t **out);
/* Older form: xdnn_plan_build with backend CUDA (use_gpu) or CPU, heuristic
 * MEASURED when tune, and the choice stored in the tune cache ($XDNN_CACHE_DIR). */
XDNN_API xdnn_status xdnn_plan_create(xdnn_graph_t *g, bool use_gpu, bool tune, xdnn_diags_t *diags,
                                      xdnn_plan_t **out);

/* ---- queries */

XDNN_API xdnn_backend xdnn_plan_backend(const xdnn_plan_t *p);
/* True when xdnn_plan_execute can run p here (false for a device-model plan
 * or another device's plan loaded with XDNN_PLAN_ANY_DEVICE). */
XDNN_API bool xdnn_plan_executable(const xdnn_plan_t *p);
/* The device the plan is for: its fingerprint ("gpu; name=...; sm=...", "cpu; model=..."). */
XDNN_API const char *xdnn_plan_device(const xdnn_plan_t *p);
/* Bytes of scratch an execute needs (0: pass NULL).  On CUDA it is device
 * memory, 256-byte aligned at the start. */
XDNN_API size_t xdnn_plan_workspace_size(const xdnn_plan_t *p);
/* Whether p was built with const_weights, and how many of its partitions it
 * runs once (0 on the CPU and without const_weights). */
XDNN_API bool xdnn_plan_const_weights(const xdnn_plan_t *p);
XDNN_API size_t xdnn_plan_constant_partitions(const xdnn_plan_t *p);
/* Dynamic param i of p (0 <= i < xdnn_plan_dynamic_count): its name and range. */
XDNN_API size_t xdnn_plan_dynamic_count(const xdnn_plan_t *p);
XDNN_API xdnn_status xdnn_plan_dynamic(const xdnn_plan_t *p, size_t i, const char **name, int64_t *lo,
                                       int64_t *hi);

/* A tensor the caller binds: every input, weight and output of the graph
 * (and tensors marked `keep`).  Dims are logical (the op's order); strides are
 * in elements and give the physical layout the pointer must have. */
typedef struct xdnn_tensor_info {
    const char *name;
    int id;                          /* index for xdnn_tensor_binding.id */
    xdnn_tensor_kind kind;           /* INPUT, WEIGHT or VIRTUAL (an output) */
    bool is_output;
    xdnn_dtype dtype;
    int rank;
    int64_t dims[XDNN_MAX_RANK];
    int64_t strides[XDNN_MAX_RANK];
    size_t bytes;                    /* span of the layout: what to allocate */
} xdnn_tensor_info;

/* Tensor i (0 <= i < xdnn_graph_tensor_count) of a bound graph, described as
 * a plan's: id is i, kind VIRTUAL for every node result, is_output for the
 * graph's outputs, bytes the span of its layout.  XDNN_ERR_SEMANTIC (name,
 * id and kind still set) when it has no bound type: never reached, or g unbound. */
XDNN_API xdnn_status xdnn_graph_tensor(const xdnn_graph_t *g, size_t i, xdnn_tensor_info *out);
/* The index of a tensor by name, or -1. */
XDNN_API int xdnn_graph_find_tensor(const xdnn_graph_t *g, const char *name);
/* The graph's outputs in `output` order: tensor indices. */
XDNN_API size_t xdnn_graph_output_count(const xdnn_graph_t *g);
XDNN_API int xdnn_graph_output(const xdnn_graph_t *g, size_t i);
/* Keep tensor i (an intermediate) materialized and bindable, as `keep`
 * does in .dnn: a plan built afterwards lists it, a run reports it. */
XDNN_API xdnn_status xdnn_graph_keep_tensor(xdnn_graph_t *g, size_t i);
/* Override the seed of the bound graph's default initializers (after
 * xdnn_graph_bind: binding again restores the graph's own). */
XDNN_API void xdnn_graph_set_seed(xdnn_graph_t *g, uint64_t seed);

XDNN_API size_t xdnn_plan_tensor_count(const xdnn_plan_t *p);
XDNN_API xdnn_status xdnn_plan_tensor(const xdnn_plan_t *p, size_t i, xdnn_tensor_info *out);
/* XDNN_ERR_SEMANTIC when the plan has no bindable tensor of that name. */
XDNN_API xdnn_status xdnn_plan_find_tensor(const xdnn_plan_t *p, const char *name, xdnn_tensor_info *out);

/* One partition: nodes run by one engine. */
typedef struct xdnn_partition_info {
    const char *name;                /* its nodes joined by '+' */
    const char *ops;                 /* "matmul+add+gelu" */
    const char *engine;              /* "matmul_cublaslt", "cpu_reference" */
    const char *knobs;               /* "" or "algo=2" */
    double tuned_ms;                 /* measured time of the choice; -1: chosen by the cost model */
    size_t ncandidates;
    double flops, bytes;             /* the cost model's counts (0 where it has none, as on the CPU) */
    bool from_cache;                 /* tuned_ms came from the tune cache, not from timing now */
} xdnn_partition_info;

/* An engine considered for a partition. */
typedef struct xdnn_candidate_info {
    const char *engine;
    bool supported;
    bool chosen;
    double cost_us;                  /* the cost model's estimate (supported ones; 0 in a measured CUDA
                                        plan, whose candidates are timed instead) */
    double measured_ms;              /* measured selection: its best time over its knob variants; -1 when
                                        not timed (FAST, unsupported) */
    const char *reason;              /* why it cannot run the partition ("" when supported) */
} xdnn_candidate_info;

XDNN_API size_t xdnn_plan_partition_count(const xdnn_plan_t *p);
XDNN_API xdnn_status xdnn_plan_partition(const xdnn_plan_t *p, size_t i, xdnn_partition_info *out);
XDNN_API xdnn_status xdnn_plan_candidate(const xdnn_plan_t *p, size_t part, size_t i, xdnn_candidate_info *out);

/* ---- execution */

/* One entry of the variant pack: a tensor by name, or by id when name is NULL. */
typedef struct xdnn_tensor_binding {
    const char *name;
    int id;
    void *ptr;                       /* device pointer on CUDA (XDNN_CUDA_ALIGNMENT-byte aligned), host
                                        pointer on the CPU */
} xdnn_tensor_binding;

/* Run the plan once.  Every tensor of xdnn_plan_tensor must be bound exactly
 * once (an error names the first missing or unknown one).  `workspace` holds at
 * least xdnn_plan_workspace_size bytes.  `stream` is a cudaStream_t (NULL: the
 * legacy default stream) and is ignored on the CPU.
 * CUDA: the call only enqueues work: it allocates nothing on the device,
 * compiles nothing, never synchronizes and copies nothing the graph does not
 * ask for, so it may be captured into a CUDA graph; an error in a kernel
 * surfaces at the caller's next synchronization.  CPU: runs to completion. */
XDNN_API xdnn_status xdnn_plan_execute(const xdnn_plan_t *p, const xdnn_tensor_binding *bindings, size_t n,
                                       void *workspace, void *stream, xdnn_diags_t *diags);

/* Run partitions [first, first + count) only — to time one partition, or to
 * rerun the tail of a graph.  Bindings as for xdnn_plan_execute.  What those
 * partitions read from earlier ones must already be in `workspace`: a full
 * execute with the same workspace leaves it there.  CUDA only (the CPU
 * backend keeps no intermediates between calls: XDNN_ERR_UNSUPPORTED). */
XDNN_API xdnn_status xdnn_plan_execute_partitions(const xdnn_plan_t *p, size_t first, size_t count,
                                                  const xdnn_tensor_binding *bindings, size_t n, void *workspace,
                                                  void *stream, xdnn_diags_t *diags);

/* What building (or loading) the plan cost. */
typedef struct xdnn_plan_stats {
    double build_ms;                 /* xdnn_plan_build or xdnn_plan_deserialize, wall time */
    double context_ms;               /* of which the device's setup (driver start-up, CUDA context, cuBLASLt) */
    double compile_ms;               /* of which NVRTC compilation */
    int kernels_compiled;            /* NVRTC compilations */
    int kernels_cached;              /* kernels found in memory, on disk or in the plan */
    int modules;                     /* compiled GPU modules the plan carries */
} xdnn_plan_stats;

XDNN_API xdnn_status xdnn_plan_get_stats(const xdnn_plan_t *p, xdnn_plan_stats *out);

/* Fill host buffer `host` (tensor's bytes, in its dtype and layout) with the
 * values the graph's initializer gives tensor `name` (randn, load(...), ...):
 * what `xdnn run` feeds when no file is given.  `base_dir` is where relative
 * load() paths start (NULL: "."). */
XDNN_API xdnn_status xdnn_plan_fill_tensor(const xdnn_plan_t *p, const char *name, void *host, size_t bytes,
                                           const char *base_dir, xdnn_diags_t *diags);

/* ---- bytes */

/* The plan as bytes: *data is malloc'ed (free() it). */
XDNN_API xdnn_status xdnn_plan_serialize(const xdnn_plan_t *p, void **data, size_t *len, xdnn_diags_t *diags);
/* Flags of xdnn_plan_deserialize. */
enum {
    XDNN_PLAN_ANY_DEVICE = 1,  /* accept another device's or xdnn version's plan (to inspect or replan; not executable) */
    XDNN_PLAN_INSPECT = 2,     /* verify and read the records only: no device or version check, graph not
                                  parsed (xdnn_plan_read_graph), nothing prepared; not executable */
};
/* Verify (checksum, structure) and load a plan, ready to execute: its engine
 * choices are restored as data (no re-planning) and its compiled kernels
 * loaded.  Another device's or version's plan is refused (XDNN_ERR_UNSUPPORTED)
 * unless XDNN_PLAN_ANY_DEVICE; corrupt or truncated bytes give XDNN_ERR_IO. */
XDNN_API xdnn_status xdnn_plan_deserialize(const void *data, size_t len, unsigned flags, xdnn_diags_t *diags,
                                           xdnn_plan_t **out);
/* xdnn_plan_deserialize of a file's bytes; diagnostics name the file. */
XDNN_API xdnn_status xdnn_plan_load(const char *path, unsigned flags, xdnn_diags_t *diags, xdnn_plan_t **out);
/* Milliseconds the last deserialize spent (verify, parse, restore, load
 * kernels), the device's setup excluded (driver and runtime start-up, CUDA
 * context, cuBLASLt handle: once per process in practice). */
XDNN_API double xdnn_plan_load_ms(const xdnn_plan_t *p);
/* Parse and bind the graph of a plan loaded with XDNN_PLAN_INSPECT (a no-op
 * when it has one); a foreign plan's graph may not parse here. */
XDNN_API xdnn_status xdnn_plan_read_graph(xdnn_plan_t *p, xdnn_diags_t *diags);
/* What the plan's header says: the xdnn version that made it, its format
 * version, and the name of its graph (known before the graph is parsed). */
XDNN_API const char *xdnn_plan_xdnn_version(const xdnn_plan_t *p);
XDNN_API unsigned xdnn_plan_format_version(const xdnn_plan_t *p);
XDNN_API const char *xdnn_plan_graph_name(const xdnn_plan_t *p);
/* Describe the plan as text (`xdnn plan --info`): versions, device,
 * workspace, modules, and each partition with its engine, knobs and how it
 * was chosen. */
XDNN_API void xdnn_plan_print(const xdnn_plan_t *p, FILE *f);
/* The plan's bound graph (borrowed; lives as long as the plan; NULL for an
 * XDNN_PLAN_INSPECT plan until xdnn_plan_read_graph). */
XDNN_API xdnn_graph_t *xdnn_plan_graph(xdnn_plan_t *p);
XDNN_API void xdnn_plan_destroy(xdnn_plan_t *p);

/* ---------------------------------------------------------------- devices and engines */

/* How many CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies);
 * 0 with `why` (may be NULL) when none is usable or xdnn has no CUDA. */
XDNN_API int xdnn_device_count(char *why, size_t len);
/* The fingerprint of the device backend b runs on here, the key of plans and
 * tune-cache entries: "gpu; name=...; sm=...; cc=...; driver=..." or "cpu;
 * model=..." (AUTO: CUDA when usable).  XDNN_ERR_DEVICE, with the reason in
 * buf, when the GPU's cannot be read. */
#define XDNN_FINGERPRINT_MAX 512            /* bytes that hold any fingerprint */
XDNN_API xdnn_status xdnn_device_fingerprint(xdnn_backend b, char *buf, size_t len);
/* The CUDA engine catalogue, one engine a line: name, op classes, summary
 * (`xdnn engines`); nothing without CUDA. */
XDNN_API void xdnn_engines_print(FILE *f);
/* The same as a JSON array [{name, classes: [...], summary}] (malloc'ed text;
 * free() it; NULL when out of memory); "[]" without CUDA. */
XDNN_API char *xdnn_engines_json(void);
/* Graphviz DOT of bound graph g as the CUDA backend partitions it: one
 * cluster per partition, materialized tensors as nodes, register-resident
 * ones as dashed edges.  Needs no device. */
XDNN_API xdnn_status xdnn_graph_print_partitions_dot(const xdnn_graph_t *g, FILE *f, xdnn_diags_t *diags);
/* Release what the process keeps across plans (compiled kernels in memory):
 * at the end of a program, after its last plan is destroyed, so that leak
 * checkers see nothing.  Planning again afterwards works (and recompiles). */
XDNN_API void xdnn_release_caches(void);

/* ---------------------------------------------------------------- tune cache */

/* The folder of xdnn's caches (tune results, compiled kernels): $XDNN_CACHE_DIR,
 * else $HOME/.cache/xdnn.  False when caching is off (XDNN_CACHE_DIR=off, no
 * HOME) or the name does not fit in len bytes. */
XDNN_API bool xdnn_cache_dir(char *buf, size_t len);
/* Print every entry of every tune-cache file (`xdnn cache list`): as text
 * (verbose: with the partition signatures) or as one JSON object {dir, files:
 * [{file, device, xdnn, used, entries: [...]}], entries}. */
XDNN_API xdnn_status xdnn_tune_cache_list(FILE *f, bool verbose, bool json, xdnn_diags_t *diags);
/* Remove every tune-cache file (other files in the folder stay); *files and
 * *entries count what went. */
XDNN_API xdnn_status xdnn_tune_cache_clear(int *files, int *entries, xdnn_diags_t *diags);

/* ---------------------------------------------------------------- files */

/* The library's own file conventions, for programs that write beside it. */
/* Read a whole file into a malloc'ed, NUL-terminated buffer (free() it);
 * "-" is stdin.  Devices and folders are refused, saying so. */
XDNN_API xdnn_status xdnn_file_read(const char *path, char **data, size_t *len, xdnn_diags_t *diags);
/* Write a file atomically (PATH.tmpXXXXXX, then rename): a failure leaves no
 * partial file.  "-" writes to stdout. */
XDNN_API xdnn_status xdnn_file_write_atomic(const char *path, const void *data, size_t len, xdnn_diags_t *diags);
/* For programs, not for libraries that embed xdnn (the signals are the
 * program's): on SIGINT, SIGTERM or SIGHUP remove the temp files of atomic
 * writes in progress, then die of the signal as before. */
XDNN_API void xdnn_remove_temps_on_signals(void);

/* ---------------------------------------------------------------- host runs */

/* A run: one host buffer per tensor of a bound graph, in the tensor's dtype
 * and layout (xdnn_graph_tensor's bytes).  Its inputs and weights come from
 * the graph's initializers (randn, load(...)) or from files; its results are
 * what the CPU reference computes (xdnn_run_reference) or what a program
 * copies back from a plan's execute (xdnn_run_data), and are then reported,
 * saved and compared through the functions below (`xdnn run`).  The graph is
 * borrowed and must outlive the run; tensors are named by graph index. */
typedef struct xdnn_run xdnn_run_t;

/* `base_dir` is where relative load() paths start (NULL: "."; copied). */
XDNN_API xdnn_status xdnn_run_create(xdnn_graph_t *g, const char *base_dir, xdnn_run_t **out);
XDNN_API void xdnn_run_destroy(xdnn_run_t *r);

/* An input or weight read from a file instead of its initializer: .npy,
 * FILE.safetensors[#key], FILE.npz[#key], or raw packed bytes. */
typedef struct xdnn_input_file {
    const char *tensor;
    const char *path;
} xdnn_input_file;

/* Materialize every input and weight the graph uses: from `files` where
 * named there, else from its initializer. */
XDNN_API xdnn_status xdnn_run_load_inputs(xdnn_run_t *r, const xdnn_input_file *files, size_t n,
                                          xdnn_diags_t *diags);
/* Allocate the results a caller reads back (outputs, checked and kept
 * tensors), poisoned (NaN for floats), so they can be written; the CPU
 * reference allocates the other intermediates as it produces them. */
XDNN_API xdnn_status xdnn_run_alloc_results(xdnn_run_t *r, xdnn_diags_t *diags);
/* Run every node with the CPU reference, in order (wall time per node kept). */
XDNN_API xdnn_status xdnn_run_reference(xdnn_run_t *r, xdnn_diags_t *diags);
/* Copy src's inputs and weights into dst (runs of the same graph). */
XDNN_API xdnn_status xdnn_run_copy_inputs(xdnn_run_t *dst, const xdnn_run_t *src);
/* Tensor i's host buffer (borrowed; *bytes its size), NULL when it is not
 * materialized. */
XDNN_API void *xdnn_run_data(xdnn_run_t *r, size_t tensor, size_t *bytes);
/* Wall time of node i, and of all, in the last xdnn_run_reference. */
XDNN_API double xdnn_run_node_ms(const xdnn_run_t *r, size_t node);
XDNN_API double xdnn_run_total_ms(const xdnn_run_t *r);

/* Statistics of a materialized tensor, as `xdnn run` prints them; the
 * checksum is FNV-1a 64 over the elements' bytes in logical order. */
typedef struct xdnn_tensor_stats {
    double min, max, mean, std;
    int64_t nan, inf;
    uint64_t checksum;
} xdnn_tensor_stats;

XDNN_API xdnn_status xdnn_run_tensor_stats(const xdnn_run_t *r, size_t tensor, xdnn_tensor_stats *out);
/* The first n values in logical (row-major over dims) order, as doubles. */
XDNN_API xdnn_status xdnn_run_tensor_values(const xdnn_run_t *r, size_t tensor, double *out, size_t n);
/* Save tensor i as .npy (bf16 and fp8 widened exactly to f32), or tensors
 * (graph indices) into one .safetensors file in their own dtypes, bit for
 * bit.  Atomic writes. */
XDNN_API xdnn_status xdnn_run_save_npy(const xdnn_run_t *r, size_t tensor, const char *path, xdnn_diags_t *diags);
XDNN_API xdnn_status xdnn_run_save_safetensors(const xdnn_run_t *r, const int *tensors, size_t n, const char *path,
                                               xdnn_diags_t *diags);

/* Element-wise comparison: an element matches when |got - ref| <= atol +
 * rtol * |ref|; NaN and Inf must match exactly. */
#define XDNN_COMPARE_WORST 5
typedef struct xdnn_mismatch {
    int64_t index[XDNN_MAX_RANK];    /* logical multi-index */
    double got, ref, abs_err, rel_err;
} xdnn_mismatch;

typedef struct xdnn_compare_result {
    double rtol, atol;               /* the tolerance applied */
    int64_t count, mismatches;
    double max_abs, max_rel, rel_norm;  /* rel_norm: ||got - ref|| / ||ref|| */
    xdnn_mismatch worst[XDNN_COMPARE_WORST];  /* the largest errors (not all of them fail) */
    int nworst;
    bool ok;
} xdnn_compare_result;

/* The default tolerance for tensor i: by its dtype and the op producing it;
 * f32 tensors of a graph that allows tf32: at least rtol 5e-3, atol 1e-3. */
XDNN_API xdnn_status xdnn_graph_default_tolerance(const xdnn_graph_t *g, size_t tensor, double *rtol, double *atol);
/* Compare tensor i of `got` with the same tensor of `ref` (same graph). */
XDNN_API xdnn_status xdnn_run_compare(const xdnn_run_t *got, size_t tensor, const xdnn_run_t *ref, double rtol,
                                      double atol, xdnn_compare_result *out);
/* Compare tensor i with a golden .npy file; XDNN_ERR_CHECK (with a
 * diagnostic) when the file's shape differs, XDNN_ERR_IO when unreadable. */
XDNN_API xdnn_status xdnn_run_compare_npy(const xdnn_run_t *r, size_t tensor, const char *path, double rtol,
                                          double atol, xdnn_compare_result *out, xdnn_diags_t *diags);
/* The graph's `check` statements: check k compares *tensor with the
 * reference its initializer gives, at its own or the default tolerance. */
XDNN_API size_t xdnn_graph_check_count(const xdnn_graph_t *g);
XDNN_API xdnn_status xdnn_run_graph_check(xdnn_run_t *r, size_t k, int *tensor, xdnn_compare_result *out,
                                          xdnn_diags_t *diags);

/* The layout of tensor i as .dnn spells it ("nchw", "row_major", ...). */
XDNN_API const char *xdnn_graph_tensor_layout(const xdnn_graph_t *g, size_t tensor);
/* The graph's own work: flops (each op's count; an elementwise op one per
 * output element) and bytes (inputs, weights and outputs once each). */
XDNN_API void xdnn_graph_cost(const xdnn_graph_t *g, double *flops, double *bytes);
/* Node i's name and op name (borrowed). */
XDNN_API xdnn_status xdnn_graph_node_info(const xdnn_graph_t *g, size_t i, const char **name, const char **op);

/* ---------------------------------------------------------------- timing */

/* The statistics xdnn reports for timed runs (and measured selection ranks
 * by the median): the median, the extremes, the 90th, 95th and 99th
 * percentiles (nearest rank: the smallest time that at least that share of
 * the runs do not exceed), the mean and the sample standard deviation (0 for
 * one run). */
typedef struct xdnn_time_stats {
    double median_ms, min_ms, max_ms, p90_ms;
    double mean_ms, stddev_ms, p95_ms, p99_ms;
} xdnn_time_stats;

/* Sort ms[0..n) in place and summarize it (all 0 when n is 0). */
XDNN_API void xdnn_time_stats_of(double *ms, size_t n, xdnn_time_stats *out);

/* ---------------------------------------------------------------- op catalogue */

XDNN_API size_t xdnn_op_count(void);
XDNN_API const char *xdnn_op_name(size_t i);
/* Print the catalogue (ports, results, attributes with defaults) as text. */
XDNN_API void xdnn_ops_print(FILE *f);
/* The same catalogue as a JSON array (malloc'ed text; free() it; NULL when
 * out of memory): name, summary, ports, results, attrs with type/default. */
XDNN_API char *xdnn_ops_json(void);

#ifdef __cplusplus
}
#endif
#endif /* XDNN_H */
