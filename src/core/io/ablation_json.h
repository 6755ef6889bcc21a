// ablation_json.h: the JSON pieces of a head ablation that every whole-model trace shares
// (trace --model on a GPT, trace --weights on a toy model, bench --model): the ablated heads
// and the direct logit attribution. docs/cli.md documents the keys.
#pragma once
#include "ablation.h"
#include "json_writer.h"

namespace attnviz {

class BpeTokenizer;

// Two keys of the enclosing object: "heads": ["0.1", ...], "mode": "zero"
void write_ablation_heads(JsonWriter& w, const Ablation& ab);

// The terms of a logit attribution as an object: pos, token (and text when `tok` is given),
// logit, scale, heads [layer][head], embed, pos_embed, attn_bias, mlp, ln_bias (the last
// three for GPT models) and sum.
void write_dla(JsonWriter& w, const LogitAttribution& a, const BpeTokenizer* tok);

} // namespace attnviz
