// gpt_internal.h: the pieces of the GPT forward (gpt_model.cpp) that its update and one
// layer's shape walk (gpt_update.cpp) share. Not for use outside those two files.
#pragma once
#include "gpt_model.h"
#include "layers.h"

namespace attnviz::gpt_internal {

// Logits are made in blocks of this many rows (each product packs all of wte).
constexpr int logits_chunk = 128;

Config attention_config(const ModelConfig& c, int T);
void check_token(const ModelConfig& c, int t);
// What a lean trace drops once a layer is done; a compact one keeps q and the heads'
// outputs but drops the softmax weights.
void drop_lean(Trace& a, BlockTrace& b, bool compact = false);
// The MLP and the second residual for rows r0..T-1 of a block whose resid_mid is set.
void mlp_rows(const Block& b, Gelu gelu, int r0, KernelKind kernel, BlockTrace& bt);
// ln_f and the tied head for rows r0..T-1.
void head_rows(const Model& m, int r0, KernelKind kernel, ModelTrace& tr);
// Attention rows p..T-1 of a fast trace whose x rows from p on changed.
void fast_attention_from(const Weights& w, int p, bool keep_raw, Trace& a);
// Buffers a lean trace dropped, back at full size for an update.
void ensure_buffers(Trace& a, bool with_raw);
// Logits rows r0 .. r1-1 (r1 - r0, V) in one product.
void logits_rows_at_once(const Model& m, const ModelTrace& tr, int r0, int r1, Mat& out);
// A compact trace's layer whole, bit for bit the lean forward's weights.
void compact_layer_trace(const Weights& w, const Trace& kept, const Config& ac, const Mat& ln1, Trace& a);

} // namespace attnviz::gpt_internal
