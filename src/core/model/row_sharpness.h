// row_sharpness.h: how sharp one softmax row of a trace is under a chosen scale, for the
// check view's question on √head_dim against √C. Computed in double from the trace's raw
// scores, so any scale can be compared on the same q and k.
#pragma once
#include "attention.h"

namespace attnviz {

// Its largest weight and its entropy in nats (NaN for a fully masked row).
struct RowSharpness {
    double max_weight = 0;
    double entropy = 0;
};

// Row i of head h: the softmax of the trace's raw scores times `scale` under the trace's mask.
RowSharpness row_sharpness(const Trace& tr, int h, int i, double scale);

} // namespace attnviz
