// trace_textures.h: the trace's tensors as textures, and what to send after a change.
//
// One texture per tensor the views draw. Per-head q, k, v and head outputs are column
// blocks of the (T, C) textures (head h is columns h*head_dim .. (h+1)*head_dim - 1), so
// they need no textures of their own; the scaled and masked scores are drawn from the raw
// scores by the shader (value * scale, -inf where masked), as Trace derives them.
#pragma once
#include "attention.h"
#include "texture.h"
#include <vector>

namespace attnviz {

struct TraceTextures {
    Texture x;                       // (T, C)  input
    Texture q, k, v;                 // (T, C)  the three column blocks of qkv
    Texture w_q, w_k, w_v;           // (C, C)  rows 0..C-1, C..2C-1, 2C..3C-1 of qkv.weight
    std::vector<Texture> raw_scores; // H x (T, T)  q k^T
    std::vector<Texture> probs;      // H x (T, T)  softmax weights
    Texture concat;                  // (T, C)  head outputs side by side
    Texture y;                       // (T, C)  output
    Texture w_proj;                  // (C, C)  proj.weight
};

// What changed since the last upload. After input row p changes (the strength slider),
// causality limits the change to: row p of x, q, k, v and of the raw scores, column p of
// the raw scores (every query row sees the new k_p), and rows p..T-1 of the tensors that
// mix positions (probs, concat, y). A drag at (512, 512, 8) thus sends about 4 MB instead
// of the whole 23 MB trace.
struct UploadRequest {
    bool full = false;        // everything (a new config or a new input)
    int row0 = -1;            // rows row0..T-1 of probs, concat and y, when >= 0
    std::vector<int> rows;    // positions whose input row changed: that row of x, q, k, v and raw scores
    std::vector<int> columns; // key positions whose raw score column changed in every row
    bool any() const { return full || row0 >= 0 || !rows.empty() || !columns.empty(); }
};

// Sends what `req` names: a full request at once (`w`, the weights, only then) except the
// per-head (T, T) textures, which become lazy (texture.h, set_lazy: sent whole when first
// drawn, freed by the renderer's budget while off screen); a partial one deferred to when
// each texture is drawn (texture.h, send_pending), reading the trace's buffers then; they
// stay valid because only a new config reallocates them, and a new config sends
// everything. A lazy texture not yet sent records no partial change: its whole send will
// read the current values.
void upload_trace(TraceTextures& tex, const Trace& tr, const Weights& w, const UploadRequest& req);
void destroy(TraceTextures& tex);

} // namespace attnviz
