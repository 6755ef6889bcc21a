// trace_textures.cpp: see trace_textures.h.
#include "trace_textures.h"
#include <algorithm>

namespace attnviz {

// A budget holds the textures' addresses, so a vector that changes size (and might move
// them) is emptied first.
static void resize(std::vector<Texture>& v, int n) {
    if (int(v.size()) == n) return;
    for (Texture& t : v) destroy(t);
    v.clear();
    v.resize(size_t(n));
}

void upload_trace(TraceTextures& tex, const Trace& tr, const Weights& w, const UploadRequest& req) {
    const int T = tr.T, C = tr.C, H = tr.H;
    if (T <= 0 || C <= 0) return;
    const float* qkv = tr.qkv.data(); // (T, 3C): q is columns 0..C-1, k C..2C-1, v 2C..3C-1
    if (req.full) {
        upload(tex.x, tr.x.data(), T, C);
        upload(tex.q, qkv, T, C, 3 * C);
        upload(tex.k, qkv + C, T, C, 3 * C);
        upload(tex.v, qkv + 2 * C, T, C, 3 * C);
        resize(tex.raw_scores, H);
        resize(tex.probs, H);
        // Per head (T, T): sent when a view draws them, under the renderer's budget.
        for (int h = 0; h < H; ++h) {
            set_lazy(tex.raw_scores[h], tr.raw_scores[h].data(), T, T);
            set_lazy(tex.probs[h], tr.att[h].data(), T, T);
        }
        upload(tex.concat, tr.concat.data(), T, C);
        upload(tex.y, tr.y.data(), T, C);
        if (w.c_attn.weight.rows() == 3 * C && w.c_proj.weight.rows() == C) {
            const float* wq = w.c_attn.weight.data(); // (3C, C)
            upload(tex.w_q, wq, C, C);
            upload(tex.w_k, wq + size_t(C) * C, C, C);
            upload(tex.w_v, wq + size_t(2) * C * C, C, C);
            upload(tex.w_proj, w.c_proj.weight.data(), C, C);
        }
        return;
    }
    const int heads = std::min(H, std::min(int(tex.raw_scores.size()), int(tex.probs.size())));
    // Each changed position once, however many edits the request gathered.
    std::vector<int> rows = req.rows, columns = req.columns;
    for (std::vector<int>* v : {&rows, &columns}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    // Deferred: sent when a view draws the texture (send_pending), so the heads and
    // tensors off screen cost nothing while the slider moves.
    for (int r : rows) {
        if (r < 0 || r >= T) continue;
        defer_rows(tex.x, tr.x.data(), r, r + 1);
        defer_rows(tex.q, qkv, r, r + 1, 3 * C);
        defer_rows(tex.k, qkv + C, r, r + 1, 3 * C);
        defer_rows(tex.v, qkv + 2 * C, r, r + 1, 3 * C);
        for (int h = 0; h < heads; ++h) defer_rows(tex.raw_scores[h], tr.raw_scores[h].data(), r, r + 1);
    }
    // Key j's column of q k^T: every query row, masked or not (the raw scores are shown
    // before the mask).
    for (int j : columns)
        for (int h = 0; h < heads; ++h) defer_column(tex.raw_scores[h], tr.raw_scores[h].data(), j);
    if (req.row0 >= 0 && req.row0 < T) {
        // Rows row0..T-1 of everything that mixes positions.
        const int r0 = req.row0;
        for (int h = 0; h < heads; ++h) defer_rows(tex.probs[h], tr.att[h].data(), r0, T);
        defer_rows(tex.concat, tr.concat.data(), r0, T);
        defer_rows(tex.y, tr.y.data(), r0, T);
    }
}

void destroy(TraceTextures& tex) {
    for (Texture* t : {&tex.x, &tex.q, &tex.k, &tex.v, &tex.w_q, &tex.w_k, &tex.w_v, &tex.concat, &tex.y,
                       &tex.w_proj})
        destroy(*t);
    resize(tex.raw_scores, 0);
    resize(tex.probs, 0);
}

} // namespace attnviz
