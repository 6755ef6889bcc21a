// row_sharpness.cpp: see row_sharpness.h.
#include "row_sharpness.h"
#include <algorithm>
#include <cmath>
#include <vector>

namespace attnviz {

RowSharpness row_sharpness(const Trace& tr, int h, int i, double scale) {
    RowSharpness r;
    const Mat& raw = tr.raw_scores[size_t(h)];
    double top = -INFINITY;
    for (int j = 0; j < tr.T; ++j)
        if (tr.visible(i, j)) top = std::max(top, double(raw(i, j)) * scale);
    if (!std::isfinite(top)) {
        r.max_weight = r.entropy = NAN; // no visible key: softmax is 0 / 0
        return r;
    }
    std::vector<double> z(size_t(tr.T), 0.0);
    double sum = 0;
    for (int j = 0; j < tr.T; ++j) {
        if (tr.visible(i, j)) z[size_t(j)] = std::exp(double(raw(i, j)) * scale - top);
        sum += z[size_t(j)];
    }
    for (int j = 0; j < tr.T; ++j) {
        const double w = z[size_t(j)] / sum;
        r.max_weight = std::max(r.max_weight, w);
        if (w > 0) r.entropy -= w * std::log(w);
    }
    return r;
}

} // namespace attnviz
