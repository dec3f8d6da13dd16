/* data.h — tensor data: dtype conversions, the counter-based RNG, initializers
 * and tensor files (.npy, safetensors, raw). */
#ifndef XDNN_DATA_H
#define XDNN_DATA_H

#include "../core/ir.h"
#include "../core/tensor.h"

/* ---- dtypes (dtype.c).  Conversions from double round to nearest even;
 * fp8 saturates to the largest finite value (e4m3 has no Inf; NaN stays NaN);
 * e8m0 to the nearest power of two in [2^-127, 2^127] (NaN, v < 0 -> NaN);
 * integer types round to nearest and saturate; bool is v != 0. */
double dtype_load(xdnn_dtype t, const void *base, int64_t index);
void dtype_store(xdnn_dtype t, void *base, int64_t index, double v);
/* The value `v` becomes when stored in `t` and read back. */
double dtype_round(xdnn_dtype t, double v);
bool dtype_is_float(xdnn_dtype t);
uint16_t f32_to_f16_bits(float f);
float f16_bits_to_f32(uint16_t h);
uint16_t f32_to_bf16_bits(float f);
float bf16_bits_to_f32(uint16_t h);
uint8_t f32_to_e4m3_bits(float f);
float e4m3_bits_to_f32(uint8_t b);
uint8_t f32_to_e5m2_bits(float f);
float e5m2_bits_to_f32(uint8_t b);
/* e8m0 (MX scales): nearest power of two, saturating; NaN/negative -> 0xFF. */
uint8_t e8m0_encode(double v);
double e8m0_decode(uint8_t b);

/* ---- RNG (philox.c).  Philox-4x32-10 keyed by a 64-bit seed; element i of a
 * tensor uses counter (i lo, i hi, stream lo, stream hi), key (seed lo, seed hi)
 * (recipe in philox.c), so values do not depend on layout, thread count or
 * device.  The GPU kernels use the same function. */
void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* fnv1a64 of the graph seed and the tensor name: a tensor's default seed. */
uint64_t rng_tensor_seed(uint64_t graph_seed, const char *name);
/* Uniform in [0, 1) with 24 random bits (exactly representable in f32). */
double rng_uniform01(uint64_t seed, uint64_t stream, uint64_t index);
/* Standard normal by Box-Muller from the same counter. */
double rng_normal(uint64_t seed, uint64_t stream, uint64_t index);

/* ---- initializers (init.c).  Fill `out` (packed row-major, logical order,
 * t->rnumel doubles) from t->init, or the default uniform(-1, 1).  File paths
 * are relative to `base_dir`.  Values are exact in the tensor's dtype only
 * after the caller rounds them (tensor_scatter does). */
xdnn_status init_fill(xgraph *g, const xtensor *t, const char *base_dir, double *out, xdnn_diags_t *d);

/* ---- files.  Readers validate everything (magic, header, dtype, sizes) and
 * report file-named errors with XDNN_ERR_IO; writers are atomic. */
xdnn_status npy_read(const char *path, host_tensor *out, xdnn_diags_t *d);
xdnn_status npy_write(const char *path, const host_tensor *t, xdnn_diags_t *d);
xdnn_status npy_parse(const char *name, const unsigned char *buf, size_t len, host_tensor *out, xdnn_diags_t *d);
xdnn_status safetensors_read(const char *path, const char *key, host_tensor *out, xdnn_diags_t *d);
/* Array `key` (entry KEY.npy) of a NumPy .npz archive written by np.savez
 * (stored entries; compressed ones and ZIP64 are refused with a message). */
xdnn_status npz_read(const char *path, const char *key, host_tensor *out, xdnn_diags_t *d);
xdnn_status npz_parse(const char *path, const unsigned char *buf, size_t len, const char *key, host_tensor *out,
                      xdnn_diags_t *d);
/* Read a whole .safetensors file (malloc'ed); from a stream (FIFO, stdin) no
 * more than its header says the file holds, plus one byte. */
xdnn_status safetensors_read_bytes(const char *path, char **data, size_t *len, xdnn_diags_t *d);
xdnn_status safetensors_write(const char *path, int n, const char *const *names,
                              const host_tensor *const *tensors, xdnn_diags_t *d);
xdnn_status safetensors_parse(const char *name, const unsigned char *buf, size_t len, const char *key,
                              host_tensor *out, xdnn_diags_t *d);
/* Raw little-endian packed data; its byte count must match dtype and dims. */
xdnn_status raw_read(const char *path, xdnn_dtype dtype, int rank, const int64_t *dims, host_tensor *out,
                     xdnn_diags_t *d);

/* ---- element decoding shared by the file readers (raw.c).  File element
 * types that have no xdnn dtype are widened exactly: u8/i16/u16 -> i32,
 * u32/u64 -> i64 (u64 above INT64_MAX is an error). */
typedef enum file_elem {
    FE_F64, FE_F32, FE_F16, FE_BF16, FE_E4M3, FE_E5M2, FE_I8, FE_I16, FE_I32, FE_I64,
    FE_U8, FE_U16, FE_U32, FE_U64, FE_BOOL, FE_E8M0
} file_elem;
xdnn_dtype file_elem_dtype(file_elem e);   /* the dtype it is read into */
size_t file_elem_size(file_elem e);        /* bytes in the file */
file_elem file_elem_of_dtype(xdnn_dtype t);
/* numel and numel * elem bytes, checked for overflow (false) and negative dims. */
bool file_shape_bytes(int rank, const int64_t *dims, size_t elem, int64_t *numel, size_t *bytes);
/* Decode packed elements (C order, or Fortran order; byte-swapped when `swap`)
 * into a new packed row-major host tensor of file_elem_dtype(e).  `data` holds
 * numel * file_elem_size(e) bytes.  Errors name `name`. */
xdnn_status file_elems_decode(const char *name, file_elem e, bool swap, bool fortran, int rank,
                              const int64_t *dims, const unsigned char *data, host_tensor *out,
                              xdnn_diags_t *d);

/* ---- statistics for printing outputs (stats.c). */
typedef struct tensor_stats {
    double min, max, mean, std;
    uint64_t checksum;    /* fnv1a64 over the logical-order element bytes */
    int64_t nan, inf, count;
} tensor_stats;
void tensor_compute_stats(const host_tensor *t, tensor_stats *s);

#endif
