// texture.h: row-major float matrices as R32F textures.
//
// Row r of the matrix is texel row y = r and column c is x = c, so a row-major Mat uploads
// as it is (no transpose) and a shader reads cell (r, c) with texelFetch(tex, ivec2(c, r)).
// Rows and columns are uploaded on their own so that a slider move that changes rows p..T-1
// (and one column of the scores) sends only those.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace attnviz {

// Changes not sent yet (defer_rows, defer_column): where the values live and which rows
// and columns changed. send_pending() sends them just before the texture is drawn, so a
// texture that no view shows costs nothing while the slider moves.
struct PendingUpload {
    const float* data = nullptr; // element (0, 0) of the source matrix
    int stride = 0;              // floats between its rows
    std::vector<std::pair<int, int>> row_ranges; // [row0, row1)
    std::vector<int> columns;
    bool empty() const { return row_ranges.empty() && columns.empty(); }
};

struct TextureBudget;

struct Texture {
    unsigned id = 0; // GL texture name; 0 before the first upload
    int rows = 0, cols = 0;
    mutable PendingUpload pending; // sent by send_pending() (drawing takes a const Texture)
    bool stored = false;             // GL storage of rows x cols exists
    // Lazy textures (set_lazy) have a GL name from the start, so panels draw them like any
    // other, but storage and values only once drawn (make_resident), and the budget may
    // free the storage again while they are off screen. The renderer's draw callback sees
    // const Textures; these fields, `id` and `stored` change there (the Textures themselves
    // live in non-const TraceTextures).
    const float* source = nullptr;   // element (0, 0) of the whole matrix; null: not lazy
    mutable bool stale = false;      // the GL values are missing or old: send all from source
    mutable uint64_t last_drawn = 0; // budget frame of the last draw
    mutable TextureBudget* budget = nullptr; // the budget counting its storage, if any
};

// Per-head (T, T) textures are many and large (16 x 2048^2 floats are 256 MiB for one
// tensor), and a view shows a few heads at a time. The budget keeps the lazy textures
// with GL storage under `cap_bytes`: before one is sent, the least recently drawn ones not
// drawn this frame are freed until it fits (or none is left to free: what one frame
// draws is always kept).
struct TextureBudget {
    int64_t cap_bytes = 0;
    int64_t resident_bytes = 0;            // GL storage of the lazy textures in `resident`
    uint64_t frame = 1;                    // advanced once per rendered frame
    std::vector<const Texture*> resident;  // lazy textures with GL storage
    int full_sends = 0, evictions = 0;     // since creation (tests and benchmarks)
};

// `data` points at element (0, 0) of a row-major matrix whose rows start `stride` floats
// apart (stride 0 means cols): a column block of a wider matrix uploads without a copy.
//
// (Re)creates the texture when the shape changed, then uploads every row.
void upload(Texture& t, const float* data, int rows, int cols, int stride = 0);
// Uploads rows [row0, row1).
void upload_rows(Texture& t, const float* data, int row0, int row1, int stride = 0);
// Uploads column `col`.
void upload_column(Texture& t, const float* data, int col, int stride = 0);
// Deferred versions: remember the change; the values are read from `data` when
// send_pending() runs, so `data` must stay valid (and current) until then. A full
// upload() or destroy() drops what is pending.
void defer_rows(Texture& t, const float* data, int row0, int row1, int stride = 0);
void defer_column(Texture& t, const float* data, int col, int stride = 0);
// Sends what is pending (rows first, then columns); the texture binding of the active
// texture unit changes.
void send_pending(const Texture& t);
// Frees the GL texture (and takes it out of its budget).
void destroy(Texture& t);

// Makes `t` lazy: the row-major (rows, cols) matrix at `data`, sent whole by
// make_resident() when next drawn; until then deferred changes are not recorded (the
// whole send covers them). `data` must stay valid while `t` is lazy. Existing GL storage
// of the same shape is kept (stale, sent over when drawn); of another shape, freed.
void set_lazy(Texture& t, const float* data, int rows, int cols);
// Before drawing: a lazy texture that is stale gets its storage (evicting as above) and
// every value; a lazy one that is current is marked drawn this frame. Returns whether
// `t` has values to draw. Non-lazy textures: whether they were uploaded.
bool make_resident(const Texture& t, TextureBudget& b);
// Frees the lazy texture `t`'s GL storage (a fresh, empty name replaces the old one); the
// next draw sends it whole again.
void evict(const Texture& t);

} // namespace attnviz
