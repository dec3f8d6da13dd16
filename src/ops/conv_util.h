/* conv_util.h — window geometry shared by conv, conv_dgrad/wgrad, scaled_conv
 * and pooling: stride/dilation/pad attributes, "same" padding and output sizes;
 * and the forward sums that conv and scaled_conv share (conv.c).
 *
 * Geometry always has CONV_MAX_SPATIAL slots (D, H, W).  An op with fewer
 * spatial dims uses the trailing slots and leaves the leading ones as identity
 * (size 1, window 1, stride 1, dilation 1, no pad), so one 3-D loop nest
 * serves 1-D, 2-D and 3-D ops alike.
 *
 * Output size along one dim (window extent e = dilation*(window-1)+1):
 *   floor mode: out = floor((in + lo + hi - e) / stride) + 1
 *   ceil mode:  out = ceil((in + lo + hi - e) / stride) + 1, minus one if the
 *               last window would start at or beyond in + lo (PyTorch's rule:
 *               every window starts inside the input or the left pad).
 * "same" pads: out = ceil(in / stride), total = max((out-1)*stride + e - in, 0),
 *   lo = total / 2, hi = total - lo (an odd pad puts the extra element at the
 *   end, as TensorFlow and ONNX SAME_UPPER do).
 */
#ifndef XDNN_CONV_UTIL_H
#define XDNN_CONV_UTIL_H

#include "op.h"

enum { CONV_MAX_SPATIAL = 3 };

/* The window attributes of conv and scaled_conv, spelled once so that the two
 * ops parse, default and document them alike (attr_spec initializers). */
#define CONV_WINDOW_ATTRS                                                                                         \
    {"stride", AT_INTS, "1", NULL, "step between windows: an int or one per spatial dim"},                        \
    {"pad", AT_PADS, "0", NULL, "zero padding: int, [p per dim], [[before, after] per dim] or \"same\""},          \
    {"dilation", AT_INTS, "1", NULL, "spacing between filter taps: an int or one per spatial dim"},               \
    {"groups", AT_INT, "1", NULL, "channel groups (C and K divisible; groups = C is depthwise)"}

typedef struct conv_geom {
    int nsp;    /* spatial dims the op really has (1..3) */
    int first;  /* first used slot: CONV_MAX_SPATIAL - nsp */
    int64_t in[CONV_MAX_SPATIAL];       /* input spatial size */
    int64_t win[CONV_MAX_SPATIAL];      /* window (filter) size */
    int64_t out[CONV_MAX_SPATIAL];      /* output spatial size */
    int64_t stride[CONV_MAX_SPATIAL];
    int64_t dilation[CONV_MAX_SPATIAL];
    int64_t pad_lo[CONV_MAX_SPATIAL];   /* before */
    int64_t pad_hi[CONV_MAX_SPATIAL];   /* after */
} conv_geom;

/* Name of spatial dim i (0-based among nsp): "W" for 1-D, "H","W" for 2-D,
 * "D","H","W" for 3-D. */
const char *conv_dim_name(int nsp, int i);

/* Fill g from the node's window attributes.  `in` and `win` hold nsp sizes.
 * stride_attr / dilation_attr / pad_attr name the attributes (NULL = not an
 * attribute of this op: 1, 1, 0).  A stride attribute that is absent
 * (VAL_NONE) takes `stride_dflt` (pooling: stride = window), or 1 when that is
 * NULL.  On a bad value or an output size < 1 returns false with a message
 * (without the op name) in err. */
bool conv_geom_init(conv_geom *g, const xnode *n, const op_desc *d, int nsp, const int64_t *in,
                    const int64_t *win, const char *stride_attr, const int64_t *stride_dflt,
                    const char *dilation_attr, const char *pad_attr, bool ceil_mode, char *err,
                    size_t errlen);

/* "stride [2, 2], pad [[1, 1], [1, 1]], dilation [1, 1]": the geometry as
 * resolved, for error messages. */
char *conv_geom_str(const conv_geom *g, char *buf, size_t len);

/* Both tensors of a conv-family op have rank 3..5 and the same rank: a is an
 * activation [N, C, spatial...]; b is named in the message as given. */
bool conv_check_ranks(op_infer_ctx *c, const char *aname, const tinfo *a, const char *bname, const tinfo *b);

/* Shape checks shared by conv, conv_dgrad and conv_wgrad.  x is [N, C, sp...]
 * and w is [K, C/groups, win...] (both `rank` dims, 3..5); xname/wname say
 * where each came from in messages ("x", "x_dims", ...).  Checks groups, the
 * channel dims and the geometry; on success fills g and ydims ([N, K, out...]).
 * Reports through op_error and returns false on failure. */
bool conv_check(op_infer_ctx *c, const char *xname, const int64_t *xdims, const char *wname,
                const int64_t *wdims, int rank, conv_geom *g, int64_t *ydims);

/* A reference tensor's dims as [N, C, D, H, W]: missing leading spatial dims
 * are 1, so 1-D and 2-D tensors index like 3-D ones. */
void conv_dims5(const ref_tensor *t, int64_t *d5);

/* Offset of (n, c, z, y, x) in a packed [N, C, D, H, W] tensor. */
static inline int64_t conv_at5(const int64_t *d5, int64_t n, int64_t c, int64_t z, int64_t y, int64_t x)
{
    return (((n * d5[1] + c) * d5[2] + z) * d5[3] + y) * d5[4] + x;
}

/* The same geometry for a reference run (already validated by infer). */
bool conv_ref_geom(op_ref_ctx *c, const int64_t *xdims, const int64_t *wdims, int rank, conv_geom *g);

/* The forward conv sums in double (conv.c; the loop nest is written out
 * there): y[n, k, out...] = sum over c < C/groups and the window of x * w,
 * taps in the padding reading 0.  x, w, y are packed; g comes from
 * conv_ref_geom.  conv stores them as they are, scaled_conv scales them. */
void conv_fwd_sums(const ref_tensor *x, const ref_tensor *w, const conv_geom *g, int64_t groups, ref_tensor *y);
/* Forward conv FLOPs (w is input 1, y result 0): 2 * numel(y) * numel(w) / K. */
double conv_fwd_flops(const xgraph *g, const xnode *n);

#endif
