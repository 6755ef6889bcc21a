// texture.cpp: see texture.h.
#include "texture.h"
#include "gl_api.h"
#include <algorithm>
#include <cstddef>

namespace attnviz {

// Rows of the source are `stride` floats apart; GL reads them with UNPACK_ROW_LENGTH.
static void set_unpack(int stride) {
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, stride);
}

void upload(Texture& t, const float* data, int rows, int cols, int stride) {
    if (rows <= 0 || cols <= 0) return;
    t.pending = PendingUpload{}; // every value is sent now
    bool fresh = t.id == 0 || !t.stored || t.rows != rows || t.cols != cols;
    if (t.id == 0) glGenTextures(1, &t.id);
    glBindTexture(GL_TEXTURE_2D, t.id);
    set_unpack(stride == cols ? 0 : stride);
    if (fresh) {
        // Cells are read with texelFetch: no filtering, no mipmaps.
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, cols, rows, 0, GL_RED, GL_FLOAT, data);
        t.rows = rows;
        t.cols = cols;
        t.stored = true;
    } else {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, cols, rows, GL_RED, GL_FLOAT, data);
    }
    set_unpack(0);
}

void upload_rows(Texture& t, const float* data, int row0, int row1, int stride) {
    if (t.id == 0 || !t.stored || row0 >= row1 || row0 < 0 || row1 > t.rows) return;
    if (stride == 0) stride = t.cols;
    glBindTexture(GL_TEXTURE_2D, t.id);
    set_unpack(stride);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, row0, t.cols, row1 - row0, GL_RED, GL_FLOAT,
                    data + size_t(row0) * size_t(stride));
    set_unpack(0);
}

void upload_column(Texture& t, const float* data, int col, int stride) {
    if (t.id == 0 || !t.stored || col < 0 || col >= t.cols) return;
    if (stride == 0) stride = t.cols;
    glBindTexture(GL_TEXTURE_2D, t.id);
    // A 1-wide sub-image whose rows are `stride` floats apart in memory.
    set_unpack(stride);
    glTexSubImage2D(GL_TEXTURE_2D, 0, col, 0, 1, t.rows, GL_RED, GL_FLOAT, data + col);
    set_unpack(0);
}

// Records `data` as the source of the pending change; a new source replaces an older
// one (the trace's buffers are the same matrices from one slider move to the next).
static bool set_source(Texture& t, const float* data, int stride) {
    if (t.id == 0 || !t.stored || t.stale || !data) return false; // a stale texture is sent whole anyway
    t.pending.data = data;
    t.pending.stride = stride == 0 ? t.cols : stride;
    return true;
}

void defer_rows(Texture& t, const float* data, int row0, int row1, int stride) {
    row0 = row0 < 0 ? 0 : row0;
    row1 = row1 > t.rows ? t.rows : row1;
    if (row0 >= row1 || !set_source(t, data, stride)) return;
    for (auto& r : t.pending.row_ranges)
        if (row0 <= r.second && r.first <= row1) { // overlapping or touching: one range
            r.first = r.first < row0 ? r.first : row0;
            r.second = r.second > row1 ? r.second : row1;
            return;
        }
    t.pending.row_ranges.emplace_back(row0, row1);
}

void defer_column(Texture& t, const float* data, int col, int stride) {
    if (col < 0 || col >= t.cols || !set_source(t, data, stride)) return;
    for (int c : t.pending.columns)
        if (c == col) return;
    t.pending.columns.push_back(col);
}

void send_pending(const Texture& t) {
    if (t.pending.empty()) return;
    PendingUpload p = std::move(t.pending);
    t.pending = PendingUpload{};
    Texture& w = const_cast<Texture&>(t); // only the GL contents change, not the struct's shape
    for (const auto& r : p.row_ranges) upload_rows(w, p.data, r.first, r.second, p.stride);
    for (int c : p.columns) upload_column(w, p.data, c, p.stride);
}

static int64_t bytes_of(const Texture& t) { return int64_t(t.rows) * int64_t(t.cols) * int64_t(sizeof(float)); }

// Takes `t` out of its budget's resident list (it keeps or loses its GL storage elsewhere).
static void leave_budget(const Texture& t) {
    TextureBudget* b = t.budget;
    if (!b) return;
    auto it = std::find(b->resident.begin(), b->resident.end(), &t);
    if (it != b->resident.end()) {
        b->resident.erase(it);
        b->resident_bytes -= bytes_of(t);
    }
    t.budget = nullptr;
}

void destroy(Texture& t) {
    leave_budget(t);
    if (t.id != 0) glDeleteTextures(1, &t.id);
    t = Texture{};
}

void set_lazy(Texture& t, const float* data, int rows, int cols) {
    if (t.stored && (t.rows != rows || t.cols != cols)) destroy(t);
    if (t.id == 0) glGenTextures(1, &t.id);
    t.rows = rows;
    t.cols = cols;
    t.source = data;
    t.stale = true;
    t.pending = PendingUpload{};
}

void evict(const Texture& t) {
    leave_budget(t);
    Texture& w = const_cast<Texture&>(t); // see Texture: the object itself is not const
    if (!w.stored) return;
    glDeleteTextures(1, &w.id); // frees the storage; a new name keeps `t` drawable
    glGenTextures(1, &w.id);
    w.stored = false;
    w.stale = true;
    w.pending = PendingUpload{};
}

bool make_resident(const Texture& t, TextureBudget& b) {
    if (!t.source) return t.stored;
    if (t.rows <= 0 || t.cols <= 0) return false;
    t.last_drawn = b.frame;
    if (!t.stale) return t.stored;
    if (!t.stored) {
        // Room for it: free the least recently drawn textures that this frame has not drawn.
        const int64_t need = bytes_of(t);
        while (b.resident_bytes + need > b.cap_bytes) {
            const Texture* oldest = nullptr;
            for (const Texture* r : b.resident)
                if (r->last_drawn < b.frame && (!oldest || r->last_drawn < oldest->last_drawn)) oldest = r;
            if (!oldest) break; // everything held is on screen: go over rather than show less
            evict(*oldest);
            ++b.evictions;
        }
    }
    Texture& w = const_cast<Texture&>(t);
    upload(w, t.source, t.rows, t.cols); // the whole matrix (new storage, or over the old)
    w.stale = false;
    ++b.full_sends;
    if (t.budget != &b) {
        leave_budget(t);
        b.resident.push_back(&t);
        b.resident_bytes += bytes_of(t);
        t.budget = &b;
    }
    return true;
}

} // namespace attnviz
