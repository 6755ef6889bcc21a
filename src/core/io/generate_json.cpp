// generate_json.cpp: attnviz generate's record and JSON; see generate_json.h.
#include "generate_json.h"
#include "bpe_tokenizer.h"
#include "json_writer.h"
#include "model_io.h" // token_name
#include <algorithm>
#include <numeric>

namespace attnviz {

GenerateStep generate_step(int pos, int token, const float* logits, const std::vector<float>& probs, double ms) {
    GenerateStep s;
    s.pos = pos;
    s.token = token;
    s.prob = probs[size_t(token)];
    s.ms = ms;
    const int V = int(probs.size());
    const int k = std::min(generate_top_logits, V);
    std::vector<int> ids(static_cast<size_t>(V));
    std::iota(ids.begin(), ids.end(), 0);
    // Largest raw logit first; equal logits keep the lower id first, as torch.topk on CPU.
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int a, int b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    for (int i = 0; i < k; ++i) s.top5.push_back({ids[size_t(i)], logits[ids[size_t(i)]], probs[size_t(ids[size_t(i)])]});
    return s;
}

bool has_token_text(const Model& m, const BpeTokenizer* tok) { return m.config.arch == Arch::toy || tok != nullptr; }

std::string generated_token_text(const Model& m, const BpeTokenizer* tok, int token) {
    if (m.config.arch == Arch::toy) return token_name(m.config, token);
    return tok ? tok->token_bytes(token) : std::string();
}

std::string generated_text(const Model& m, const BpeTokenizer* tok, const std::vector<int>& tokens) {
    if (m.config.arch == Arch::toy) {
        std::string s;
        for (int t : tokens) s += (s.empty() ? "" : " ") + token_name(m.config, t);
        return s;
    }
    return tok ? tok->decode(tokens) : std::string();
}

namespace {

void write_ids(JsonWriter& w, const std::vector<int>& ids) {
    w.begin_array();
    for (int id : ids) w.value_int(id);
    w.end_array();
}

void write_sampling(JsonWriter& w, const SamplingOptions& o) {
    w.begin_object();
    w.key("greedy");
    w.value_bool(o.greedy);
    if (!o.greedy) {
        w.key("temperature");
        w.value(float(o.temperature));
        w.key("top_k"); // 0: off
        w.value_int(o.top_k);
        w.key("top_p"); // 1: off
        w.value(float(o.top_p));
        w.key("seed");
        w.value_int(int64_t(o.seed));
    }
    w.end_object();
}

void write_step(JsonWriter& w, const Model& m, const BpeTokenizer* tok, const GenerateStep& s) {
    w.begin_object();
    w.key("pos");
    w.value_int(s.pos);
    w.key("token");
    w.value_int(s.token);
    if (has_token_text(m, tok)) {
        w.key("text");
        w.value_string(generated_token_text(m, tok, s.token));
    }
    w.key("prob");
    w.value(s.prob);
    w.key("top5");
    w.begin_array();
    for (const GenerateTop& t : s.top5) {
        w.begin_object();
        w.key("token");
        w.value_int(t.token);
        w.key("logit");
        w.value(t.logit);
        w.key("prob");
        w.value(t.prob);
        w.end_object();
    }
    w.end_array();
    w.key("ms");
    w.value(float(s.ms));
    w.end_object();
}

} // namespace

void write_generate_json(std::ostream& out, const Model& m, const GenerateRun& r, const BpeTokenizer* tok) {
    JsonWriter w(out);
    w.begin_object();
    w.key("prompt_tokens");
    write_ids(w, r.prompt_tokens);
    w.key("tokens");
    write_ids(w, r.tokens);
    if (has_token_text(m, tok)) {
        w.key("text");
        w.value_string(generated_text(m, tok, r.tokens));
    }
    w.key("kernel");
    w.value_string(to_string(r.kernel));
    w.key("cache");
    w.value_bool(r.cache);
    w.key("block_size");
    w.value_int(r.block_size);
    w.key("sampling");
    write_sampling(w, r.sampling);
    w.key("steps");
    w.begin_array();
    for (const GenerateStep& s : r.steps) write_step(w, m, tok, s);
    w.end_array();
    w.key("stop");
    w.value_string(r.stopped_at_block_size ? "block_size" : "max_new");
    if (r.max_abs_diff_logits) {
        w.key("check");
        w.begin_object();
        w.key("max_abs_diff_logits");
        w.value(*r.max_abs_diff_logits);
        w.end_object();
    }
    w.end_object();
}

} // namespace attnviz
