// tensor_table.cpp: see tensor_table.h.
#include "tensor_table.h"
#include "text_util.h"

namespace attnviz {

namespace {

using W = TensorWidth;

const float* one(const Mat& m) { return m.data(); }
const float* head(const PerHead& p, int b) { return p[size_t(b)].data(); }

} // namespace

const std::vector<TraceTensor>& trace_tensors() {
    // The lambdas are the table's accessors; captureless, so they are plain functions.
    static const std::vector<TraceTensor> table = {
        {TensorName::x, "x", "x", "(T, C)", false, W::C, "x", "the input",
         {}, [](const Trace& t, int, Mat&) { return one(t.x); }},
        {TensorName::qkv, "qkv", "qkv", "(T, 3C)", false, W::three_C, "self.qkv(x)", "queries, keys and values",
         {}, [](const Trace& t, int, Mat&) { return one(t.qkv); }},
        {TensorName::q, "q", "q", "(H, T, head_dim)", true, W::head_dim, "q, k, v = ...split(C, dim=2)", "queries",
         {}, [](const Trace& t, int b, Mat&) { return head(t.q, b); }},
        {TensorName::k, "k", "k", "(H, T, head_dim)", true, W::head_dim, "q, k, v = ...split(C, dim=2)", "keys",
         {}, [](const Trace& t, int b, Mat&) { return head(t.k, b); }},
        {TensorName::v, "v", "v", "(H, T, head_dim)", true, W::head_dim, "q, k, v = ...split(C, dim=2)", "values",
         {}, [](const Trace& t, int b, Mat&) { return head(t.v, b); }},
        {TensorName::scores, "scores", "raw_scores", "(H, T, T)", true, W::T, "q @ k.transpose(-2, -1)",
         "q · kᵀ, before scaling", {"scores_raw"},
         [](const Trace& t, int b, Mat&) { return head(t.raw_scores, b); }},
        {TensorName::scaled, "scaled", "scaled_scores", "(H, T, T)", true, W::T,
         "att = (q @ k.transpose(-2, -1)) * self.head_dim ** -0.5", "the scores times the scale", {"scores_scaled"},
         [](const Trace& t, int b, Mat& s) { t.fill_scaled(b, s); return one(s); }},
        {TensorName::masked, "masked", "masked_scores", "(H, T, T)", true, W::T,
         "att.masked_fill(~mask, float(\"-inf\"))", "scaled, −∞ where the mask forbids", {"scores_masked"},
         [](const Trace& t, int b, Mat& s) { t.fill_masked(b, s); return one(s); }},
        {TensorName::probs, "probs", "softmax_probs", "(H, T, T)", true, W::T, "att = F.softmax(..., dim=-1)",
         "the softmax weights", {"att"}, [](const Trace& t, int b, Mat&) { return head(t.att, b); }},
        {TensorName::heads, "heads", "head_outputs", "(H, T, head_dim)", true, W::head_dim, "att @ v",
         "each head's output", {"head_out"}, [](const Trace& t, int b, Mat&) { return head(t.heads, b); }},
        {TensorName::concat, "concat", "y_concat_before_proj", "(T, C)", false, W::C,
         "y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)", "the heads side by side",
         {}, [](const Trace& t, int, Mat&) { return one(t.concat); }},
        {TensorName::y, "y", "y1", "(T, C)", false, W::C, "self.proj(y)", "the output",
         {}, [](const Trace& t, int, Mat&) { return one(t.y); }},
    };
    return table;
}

const TraceTensor& tensor_info(TensorName n) { return trace_tensors()[size_t(n)]; }

int TraceTensor::cols(const Trace& tr) const {
    switch (width) {
    case W::C: return tr.C;
    case W::three_C: return 3 * tr.C;
    case W::head_dim: return tr.head_dim;
    case W::T: return tr.T;
    }
    return 0;
}

std::vector<int64_t> TraceTensor::dims(const Trace& tr) const {
    if (per_head) return {tr.H, rows(tr), cols(tr)};
    return {rows(tr), cols(tr)};
}

const std::vector<TensorName>& all_tensor_names() {
    static const std::vector<TensorName> names = [] {
        std::vector<TensorName> v;
        for (const TraceTensor& t : trace_tensors()) v.push_back(t.id);
        return v;
    }();
    return names;
}

const char* to_string(TensorName n) { return tensor_info(n).name; }

const char* reference_key(TensorName n) { return tensor_info(n).reference_key; }

std::string tensor_name_list() {
    const auto& table = trace_tensors();
    std::string s;
    for (size_t i = 0; i < table.size(); ++i) {
        if (i > 0) s += (i + 1 == table.size()) ? " or " : ", ";
        s += table[i].name;
    }
    return s;
}

bool parse_tensor_name(const std::string& s, TensorName& out, std::string& error) {
    for (const TraceTensor& t : trace_tensors()) {
        bool match = s == t.name || s == t.reference_key;
        for (const char* old : t.old_names) match = match || s == old;
        if (match) {
            out = t.id;
            return true;
        }
    }
    error = "tensor " + quote(s, 40) + " is not known; use " + tensor_name_list();
    return false;
}

TensorView tensor_by_name(const Trace& tr, TensorName name) {
    const TraceTensor& info = tensor_info(name);
    TensorView t;
    t.trace = &tr;
    t.name = name;
    t.per_head = info.per_head;
    t.rows = info.rows(tr);
    t.cols = info.cols(tr);
    t.blocks = info.per_head ? tr.H : 1;
    t.shape = info.dims(tr);
    return t;
}

const float* TensorView::block(int b, Mat& scratch) const { return tensor_info(name).block(*trace, b, scratch); }

std::vector<float> TensorView::data() const {
    std::vector<float> all;
    all.reserve(size_t(blocks) * size_t(rows) * size_t(cols));
    Mat scratch;
    for (int b = 0; b < blocks; ++b) {
        const float* p = block(b, scratch);
        all.insert(all.end(), p, p + int64_t(rows) * cols);
    }
    return all;
}

} // namespace attnviz
