#version 330 core
// heatmap_frag.glsl: a row-major float matrix (an R32F texture, texel (x = col, y = row))
// drawn as coloured cells.
//
//   signed values   diverging blue - near-white - red map (ColorBrewer RdBu, reversed),
//                   centred on 0; colour-blind safe
//   probabilities   sequential viridis from 0 to 1
//   palette cb      the alternative maps: purple - white - orange (ColorBrewer PuOr,
//                   reversed) and cividis, which differ along blue - yellow only and so
//                   read the same to every kind of colour vision
//   masked (-inf)   neutral grey with diagonal stripes: unlike any number
//   NaN             near-black with white cross-hatch: unlike any number and unlike -inf
//   changed         a two-tone outline inside the cell (the fill stays readable)
//
// Masking and scaling are applied here so that the trace's raw scores texture serves the
// "scaled" and "masked" panels too: value = raw * u_scale, and -inf where the mask hides key
// j from query i (j > i for torch.tril, j >= i for the off-by-one mask).
in vec2 v_uv;
out vec4 frag_color;

uniform sampler2D u_data;    // (rows, cols) R32F
uniform sampler2D u_base;    // same shape: the unperturbed values, when u_has_base
uniform int u_has_base;
uniform ivec2 u_size;        // rows, cols of the matrix as shown
uniform ivec2 u_offset;      // texture (row, col) of the shown matrix's cell (0, 0)
uniform int u_transpose;     // 1: shown cell (r, c) is texture cell (c, r), plus the offset
uniform vec4 u_window;       // row0, col0, nrows, ncols: the cells shown in the rectangle
uniform vec2 u_rect_px;      // rectangle size in pixels
uniform int u_colormap;      // 0 diverging, 1 viridis
uniform int u_palette;       // 0 default (RdBu, viridis), 1 cb (PuOr, cividis)
uniform vec2 u_range;        // value at the low and at the high end of the map
uniform float u_scale;       // multiplies every value (scores * head_dim^-1/2)
uniform int u_mask;          // 0 none, 1 causal (j > i masked), 2 off-by-one (j >= i masked)
uniform int u_colorbar;      // 1: ignore the data, draw the map from u_range.x to u_range.y
uniform int u_swatch;        // legend swatches: 1 the masked look, 2 the NaN look
uniform float u_grid_min_px; // draw cell borders when cells are at least this big
uniform vec3 u_grid_color;

// ColorBrewer RdBu (11 classes), reversed so that negative is blue and positive is red.
const vec3 diverging[11] = vec3[11](
    vec3(5, 48, 97), vec3(33, 102, 172), vec3(67, 147, 195), vec3(146, 197, 222),
    vec3(209, 229, 240), vec3(247, 247, 247), vec3(253, 219, 199), vec3(244, 165, 130),
    vec3(214, 96, 77), vec3(178, 24, 43), vec3(103, 0, 31));
// matplotlib's viridis at t = 0, 0.1, ..., 1.
const vec3 viridis[11] = vec3[11](
    vec3(68, 1, 84), vec3(72, 36, 117), vec3(65, 68, 135), vec3(53, 95, 141),
    vec3(42, 120, 142), vec3(33, 145, 140), vec3(34, 168, 132), vec3(68, 191, 112),
    vec3(122, 209, 81), vec3(189, 223, 38), vec3(253, 231, 37));

// ColorBrewer PuOr (11 classes), reversed: negative is purple, positive orange.
const vec3 diverging_cb[11] = vec3[11](
    vec3(45, 0, 75), vec3(84, 39, 136), vec3(128, 115, 172), vec3(178, 171, 210),
    vec3(216, 218, 235), vec3(247, 247, 247), vec3(254, 224, 182), vec3(253, 184, 99),
    vec3(224, 130, 20), vec3(179, 88, 6), vec3(127, 59, 8));
// matplotlib's cividis (Nuñez, Anderton and Renslow, 2018) at t = 0, 0.1, ..., 1.
const vec3 cividis[11] = vec3[11](
    vec3(0, 34, 78), vec3(8, 51, 112), vec3(53, 69, 108), vec3(79, 87, 108),
    vec3(102, 105, 112), vec3(125, 124, 120), vec3(148, 142, 119), vec3(174, 163, 113),
    vec3(200, 184, 102), vec3(229, 207, 82), vec3(254, 232, 56));

vec3 stop(int i) {
    if (u_palette == 1) return u_colormap == 1 ? cividis[i] : diverging_cb[i];
    return u_colormap == 1 ? viridis[i] : diverging[i];
}

vec3 lookup(float t) {
    float x = clamp(t, 0.0, 1.0) * 10.0;
    int i = min(int(floor(x)), 9);
    float f = x - float(i);
    return mix(stop(i), stop(i + 1), f) / 255.0;
}

bool is_nan_bits(uint b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0u; }

vec3 map_value(float v) {
    float span = u_range.y - u_range.x;
    float t = span > 0.0 ? (v - u_range.x) / span : 0.5;
    if (isinf(v)) t = v > 0.0 ? 1.0 : 0.0;
    return lookup(t);
}

// -inf: neutral greys in diagonal stripes (no colour map has a neutral mid-grey).
vec3 masked_look(vec2 p) { return mod(p.x + p.y, 10.0) < 4.0 ? vec3(0.52) : vec3(0.74); }
// NaN: near-black with a light cross-hatch.
vec3 nan_look(vec2 p) {
    bool line = mod(p.x + p.y, 8.0) < 2.0 || mod(p.x - p.y + 800.0, 8.0) < 2.0;
    return line ? vec3(0.92) : vec3(0.06);
}

void main() {
    if (u_colorbar == 1) {
        frag_color = vec4(map_value(mix(u_range.x, u_range.y, v_uv.x)), 1.0);
        return;
    }
    if (u_swatch != 0) {
        frag_color = vec4(u_swatch == 1 ? masked_look(gl_FragCoord.xy) : nan_look(gl_FragCoord.xy), 1.0);
        return;
    }
    vec2 pos = vec2(u_window.y, u_window.x) + v_uv * vec2(u_window.w, u_window.z); // (col, row)
    int col = int(floor(pos.x));
    int row = int(floor(pos.y));
    if (row < 0 || col < 0 || row >= u_size.x || col >= u_size.y) discard;

    ivec2 rc = (u_transpose == 1 ? ivec2(col, row) : ivec2(row, col)) + u_offset; // texture (row, col)
    ivec2 texel = ivec2(rc.y, rc.x);
    float raw = texelFetch(u_data, texel, 0).r;
    uint bits = floatBitsToUint(raw);
    bool masked = (u_mask == 1 && col > row) || (u_mask == 2 && col >= row);

    vec2 cell_px = u_rect_px / vec2(u_window.w, u_window.z);     // one cell, in pixels
    vec2 in_cell = fract(pos) * cell_px;                          // pixel offset inside it
    vec2 diag = gl_FragCoord.xy;

    vec3 color;
    if (masked) {
        color = masked_look(diag);
    } else if (is_nan_bits(bits)) {
        color = nan_look(diag);
    } else {
        color = map_value(raw * u_scale);
    }

    // Changed by the perturbation: a dark outer and a yellow inner ring, inside the cell.
    // A masked cell is -inf before and after, whatever its raw score did: never changed.
    if (u_has_base == 1 && !masked && min(cell_px.x, cell_px.y) >= 6.0) {
        uint base_bits = floatBitsToUint(texelFetch(u_base, texel, 0).r);
        if (base_bits != bits) {
            float edge = min(min(in_cell.x, cell_px.x - in_cell.x), min(in_cell.y, cell_px.y - in_cell.y));
            // The pixel's centre, k + 0.5 pixels in (cells start on pixel edges): the ring's
            // edges then never depend on how the GL rounds v_uv. Unsnapped, at 12-pixel cells
            // the yellow's outer edge (2.5 pixels) fell on a centre, and Mesa drew it one pixel
            // wide where Chromium's SwiftShader drew two.
            edge = floor(edge) + 0.5;
            float ring = clamp(min(cell_px.x, cell_px.y) * 0.06, 1.0, 2.0);
            if (edge < ring) color = vec3(0.0);
            else if (edge < 2.5 * ring) color = vec3(0.941, 0.894, 0.259); // Okabe-Ito yellow
        }
    }
    // Cell borders: one pixel on the top and left of every cell.
    if (min(cell_px.x, cell_px.y) >= u_grid_min_px && (in_cell.x < 1.0 || in_cell.y < 1.0))
        color = u_grid_color;
    frag_color = vec4(color, 1.0);
}
