#version 330 core
// heatmap_vert.glsl: one screen rectangle drawn as a 4-vertex triangle strip built from
// gl_VertexID, so no vertex buffer is needed (core profile still wants a bound VAO).
uniform vec4 u_rect_ndc; // x0, y0 (top-left corner), x1, y1 (bottom-right) in NDC
out vec2 v_uv;           // (0, 0) at the top-left of the rectangle, (1, 1) at the bottom-right

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
    v_uv = corner;
    gl_Position = vec4(mix(u_rect_ndc.x, u_rect_ndc.z, corner.x),
                       mix(u_rect_ndc.y, u_rect_ndc.w, corner.y), 0.0, 1.0);
}
