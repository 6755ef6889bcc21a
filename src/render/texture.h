// texture.h: row-major float matrices as R32F textures.
//
// Row r of the matrix is texel row y = r and column c is x = c, so a row-major Mat uploads
// as it is (no transpose) and a shader reads cell (r, c) with texelFetch(tex, ivec2(c, r)).
// Rows and columns are uploaded on their own so that a slider move that changes rows p..T-1
// (and one column of the scores) sends only those.
#pragma once

namespace attnviz {

struct Texture {
    unsigned id = 0; // GL texture name; 0 before the first upload
    int rows = 0, cols = 0;
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
void destroy(Texture& t);

} // namespace attnviz
