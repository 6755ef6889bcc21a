// texture.h: row-major float matrices as R32F textures.
//
// Row r of the matrix is texel row y = r and column c is x = c, so a row-major Mat uploads
// as it is (no transpose) and a shader reads cell (r, c) with texelFetch(tex, ivec2(c, r)).
// Rows and columns are uploaded on their own so that a slider move that changes rows p..T-1
// (and one column of the scores) sends only those.
#pragma once
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

struct Texture {
    unsigned id = 0; // GL texture name; 0 before the first upload
    int rows = 0, cols = 0;
    mutable PendingUpload pending; // sent by send_pending() (drawing takes a const Texture)
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
void destroy(Texture& t);

} // namespace attnviz
