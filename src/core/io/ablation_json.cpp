// ablation_json.cpp: see ablation_json.h.
#include "ablation_json.h"
#include "bpe_tokenizer.h"

namespace attnviz {

void write_ablation_heads(JsonWriter& w, const Ablation& ab) {
    w.key("heads");
    w.begin_array();
    for (const HeadRef& h : ab.heads) w.value_string(to_string(h));
    w.end_array();
    w.key("mode");
    w.value_string(to_string(ab.mode));
}

void write_dla(JsonWriter& w, const LogitAttribution& a, const BpeTokenizer* tok) {
    w.begin_object();
    w.key("pos"); w.value_int(a.pos);
    w.key("token"); w.value_int(a.token);
    if (tok) { w.key("text"); w.value_string(tok->token_bytes(a.token)); }
    w.key("logit"); w.value(a.logit);
    w.key("scale"); w.value(a.scale);
    w.key("heads");
    w.begin_array();
    for (const std::vector<float>& layer : a.heads) w.array(layer.data(), {int64_t(layer.size())});
    w.end_array();
    w.key("embed"); w.value(a.embed);
    w.key("pos_embed"); w.value(a.pos_embed);
    if (!a.mlp.empty()) {
        w.key("attn_bias"); w.array(a.attn_bias.data(), {int64_t(a.attn_bias.size())});
        w.key("mlp"); w.array(a.mlp.data(), {int64_t(a.mlp.size())});
        w.key("ln_bias"); w.value(a.ln_bias);
    }
    w.key("sum"); w.value(a.sum());
    w.end_object();
}

} // namespace attnviz
