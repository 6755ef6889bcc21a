// patch_json.cpp: see patch_json.h.
#include "patch_json.h"
#include "bpe_tokenizer.h"
#include "json_writer.h"
#include <cmath>
#include <string>

namespace attnviz {

void write_logit_lens(JsonWriter& w, const LogitLens& lens, const BpeTokenizer* tokenizer) {
    w.begin_object();
    w.key("rows");
    w.begin_array();
    for (int r = 0; r < lens.rows(); ++r) w.value_string(r == 0 ? std::string("embed") : std::to_string(r - 1));
    w.end_array();
    w.key("top");
    w.begin_array();
    for (const auto& row : lens.top) {
        w.begin_array();
        for (const std::vector<TokenProb>& pos : row) {
            w.begin_array();
            for (const TokenProb& t : pos) {
                w.begin_object();
                w.key("token"); w.value_int(t.token);
                w.key("prob"); w.value(t.prob);
                if (tokenizer) { w.key("text"); w.value_string(tokenizer->display(t.token)); }
                w.end_object();
            }
            w.end_array();
        }
        w.end_array();
    }
    w.end_array();
    w.key("next_prob"); // NaN (the last position) is written as null
    w.begin_array();
    for (const std::vector<float>& row : lens.next_prob) w.array(row.data(), {int64_t(row.size())});
    w.end_array();
    w.end_object();
}

namespace {

void write_table(JsonWriter& w, const char* key, const std::vector<std::vector<float>>& t) {
    w.key(key);
    w.begin_array();
    for (const std::vector<float>& row : t) w.array(row.data(), {int64_t(row.size())});
    w.end_array();
}

} // namespace

void write_patch_json(std::ostream& out, const PatchRuns& runs, const PatchTables& tables, double patch_ms) {
    JsonWriter w(out);
    w.begin_object();
    w.key("clean_ld"); w.value(runs.clean_ld);
    w.key("corrupt_ld"); w.value(runs.corrupt_ld);
    if (!tables.resid.empty()) write_table(w, "resid", tables.resid);
    if (!tables.heads.empty()) write_table(w, "heads", tables.heads);
    w.key("patch_ms"); w.value(float(patch_ms));
    w.end_object();
    w.flush();
}

} // namespace attnviz
