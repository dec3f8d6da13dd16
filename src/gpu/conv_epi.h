/* conv_epi.h — conv epilogue fusion: the pointwise nodes after a forward conv
 * that the conv engines apply in their store (kern_conv.h's kconv_epi: bias
 * or any broadcast add/sub/mul, scalar add/mul, relu / clipped / leaky relu,
 * gelu, silu / swish, sigmoid, tanh, residual add, casts).  The partitioner
 * grows a conv's partition by such a chain (partition.c); conv_analyze.c turns
 * the chain into the step list.  Depends only on the ggraph and the op table. */
#ifndef XDNN_GPU_CONV_EPI_H
#define XDNN_GPU_CONV_EPI_H

#include "gpu/ggraph.h"
#include "gpu/kern_conv.h"

#include <stdbool.h>
#include <stddef.h>

/* Is node `node` a forward conv that can anchor an epilogue chain? */
bool gconv_epi_anchor(const ggraph *g, int node);

/* Can pointwise node `node`, reading the chain's current tensor `cur` (the
 * conv's output shape), be one epilogue step?  With st non-NULL it is filled
 * (st->op < 0: a cast, nothing to apply) and *tensor gets the operand's
 * tensor id (-1 for none); the operand's strides are those of y's 5-slot view.
 * False with the reason (naming node and operand) in why. */
bool gconv_epi_step(const ggraph *g, int node, int cur, kepi_step *st, int *tensor, char *why, size_t len);

/* A conv_dgrad's epilogue is one relu_bwd(dx, a) (a ReLU's mask: ResNet's
 * backward, d2z = relu_bwd(conv_dgrad(..), a2)), the dgrad's dx as its
 * gradient and a read at dx's coordinates.  Is `node` a conv_dgrad that can
 * anchor it? */
bool gconv_dgrad_epi_anchor(const ggraph *g, int node);
/* Can `node`, reading the dgrad's output `cur`, be that step?  relu_bwd with
 * cur as its gradient, a mask a of cur's dims (no broadcast) in the layout of
 * the step's result (the engines read it through each stride phase's dx
 * strides), a finite slope (a zero-filled phase stays 0), float dtypes.  st
 * and tensor as gconv_epi_step fills them; false with the reason. */
bool gconv_dgrad_epi_step(const ggraph *g, int node, int cur, kepi_step *st, int *tensor, char *why, size_t len);

/* "bias+relu" etc.: the steps for -v. */
void gconv_epi_describe(const kconv_epi *e, char *buf, size_t len);
/* Appends ", fused epilogue bias+relu" (the steps) to an engine's detail
 * line of size len; nothing when there are none. */
void gconv_epi_append(const kconv_epi *e, char *detail, size_t len);

#endif
