// heatmap_renderer.cpp: see heatmap_renderer.h.
#include "heatmap_renderer.h"
#include "embedded_shaders.h"
#include "gl_api.h"
#include <imgui.h>
#include <chrono>
#include <cstring>

namespace attnviz {

namespace {

// The source's own "#version" line gives way to shader_prelude() (gl_api.h: WebGL 2 wants
// "#version 300 es" and precisions).
bool compile(GLenum kind, const char* source, const char* name, GLuint& out, std::string& error) {
    out = glCreateShader(kind);
    if (std::strncmp(source, "#version", 8) == 0 && std::strchr(source, '\n')) source = std::strchr(source, '\n') + 1;
    const char* parts[2] = {shader_prelude(), source};
    glShaderSource(out, 2, parts, nullptr);
    glCompileShader(out);
    GLint ok = 0;
    glGetShaderiv(out, GL_COMPILE_STATUS, &ok);
    if (ok) return true;
    char log[2048] = {0};
    glGetShaderInfoLog(out, sizeof log, nullptr, log);
    error = std::string("the heatmap shader ") + name + " does not compile: " + log;
    return false;
}

void draw_callback(const ImDrawList*, const ImDrawCmd* cmd) {
    const auto* q = static_cast<const QueuedHeatmap*>(cmd->UserCallbackData);
    const HeatmapRenderer& r = *q->renderer;
    const HeatmapDraw& d = q->draw;
    const ImDrawData* dd = ImGui::GetDrawData();
    if (!dd || !d.data || d.data->id == 0) return; // swatches and colour bars bind any texture
    // Cells need values: a lazy texture not sent (or freed) is sent whole now, which may
    // free others not drawn this frame.
    if (!d.colorbar && d.swatch == 0) {
        const auto t0 = std::chrono::steady_clock::now();
        const bool ready = make_resident(*d.data, q->renderer->budget);
        if (d.base) make_resident(*d.base, q->renderer->budget);
        q->renderer->upload_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!ready) return;
    }

    // ImGui coordinates -> framebuffer pixels (y up) for the scissor, and -> NDC for the quad.
    const ImVec2 off = dd->DisplayPos, size = dd->DisplaySize, sc = dd->FramebufferScale;
    const float fb_h = size.y * sc.y;
    const ImVec4 clip = cmd->ClipRect;
    float cx0 = (clip.x - off.x) * sc.x, cy0 = (clip.y - off.y) * sc.y;
    float cx1 = (clip.z - off.x) * sc.x, cy1 = (clip.w - off.y) * sc.y;
    if (cx1 <= cx0 || cy1 <= cy0) return;
    glEnable(GL_SCISSOR_TEST);
    glScissor(int(cx0), int(fb_h - cy1), int(cx1 - cx0), int(cy1 - cy0));

    auto ndc_x = [&](float x) { return (x - off.x) / size.x * 2.f - 1.f; };
    auto ndc_y = [&](float y) { return 1.f - (y - off.y) / size.y * 2.f; };

    // Changes a slider move deferred (texture.h) are sent now that the texture is drawn;
    // timed for --bench-frames (llvmpipe copies the rows in the call; a GPU driver may
    // return sooner and copy later).
    if (!d.data->pending.empty() || (d.base && !d.base->pending.empty())) {
        const auto t0 = std::chrono::steady_clock::now();
        send_pending(*d.data);
        if (d.base) send_pending(*d.base);
        q->renderer->upload_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    glUseProgram(r.program);
    glBindVertexArray(r.vao);
    glUniform4f(r.loc_rect, ndc_x(d.x0), ndc_y(d.y0), ndc_x(d.x1), ndc_y(d.y1));
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, d.base && d.base->id ? d.base->id : d.data->id);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, d.data->id);
    glUniform1i(r.loc_data, 0);
    glUniform1i(r.loc_base, 1);
    glUniform1i(r.loc_has_base, d.base && d.base->id && d.base->stored && d.base->rows == d.data->rows &&
                                        d.base->cols == d.data->cols ? 1 : 0);
    glUniform2i(r.loc_size, d.rows, d.cols);
    glUniform2i(r.loc_offset, d.offset_row, d.offset_col);
    glUniform1i(r.loc_transpose, d.transpose ? 1 : 0);
    glUniform4f(r.loc_window, d.row0, d.col0, d.nrows, d.ncols);
    glUniform2f(r.loc_rect_px, (d.x1 - d.x0) * sc.x, (d.y1 - d.y0) * sc.y);
    glUniform1i(r.loc_colormap, int(d.colormap));
    glUniform1i(r.loc_palette, r.palette);
    glUniform2f(r.loc_range, d.lo, d.hi);
    glUniform1f(r.loc_scale, d.scale);
    glUniform1i(r.loc_mask, int(d.mask));
    glUniform1i(r.loc_colorbar, d.colorbar ? 1 : 0);
    glUniform1i(r.loc_swatch, d.swatch);
    glUniform1f(r.loc_grid_min, d.grid_min_px * sc.x);
    glUniform3f(r.loc_grid_color, d.grid_rgb[0], d.grid_rgb[1], d.grid_rgb[2]);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    ++q->renderer->drawn;
}

} // namespace

bool create_heatmap_renderer(HeatmapRenderer& r, std::string& error) {
    GLuint vs = 0, fs = 0;
    if (!compile(GL_VERTEX_SHADER, shader_heatmap_vert, "heatmap_vert.glsl", vs, error) ||
        !compile(GL_FRAGMENT_SHADER, shader_heatmap_frag, "heatmap_frag.glsl", fs, error)) {
        if (vs) glDeleteShader(vs);
        if (fs) glDeleteShader(fs);
        return false;
    }
    r.program = glCreateProgram();
    glAttachShader(r.program, vs);
    glAttachShader(r.program, fs);
    glLinkProgram(r.program);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(r.program, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048] = {0};
        glGetProgramInfoLog(r.program, sizeof log, nullptr, log);
        error = std::string("the heatmap shaders do not link: ") + log;
        return false;
    }
    auto loc = [&](const char* name) { return glGetUniformLocation(r.program, name); };
    r.loc_rect = loc("u_rect_ndc");
    r.loc_data = loc("u_data");
    r.loc_base = loc("u_base");
    r.loc_has_base = loc("u_has_base");
    r.loc_size = loc("u_size");
    r.loc_offset = loc("u_offset");
    r.loc_transpose = loc("u_transpose");
    r.loc_window = loc("u_window");
    r.loc_rect_px = loc("u_rect_px");
    r.loc_colormap = loc("u_colormap");
    r.loc_palette = loc("u_palette");
    r.loc_range = loc("u_range");
    r.loc_scale = loc("u_scale");
    r.loc_mask = loc("u_mask");
    r.loc_colorbar = loc("u_colorbar");
    r.loc_swatch = loc("u_swatch");
    r.loc_grid_min = loc("u_grid_min_px");
    r.loc_grid_color = loc("u_grid_color");
    r.budget.cap_bytes = head_texture_budget;
    glGenVertexArrays(1, &r.vao); // core profile: a VAO must be bound even with no attributes
    return true;
}

void destroy_heatmap_renderer(HeatmapRenderer& r) {
    if (r.vao) glDeleteVertexArrays(1, &r.vao);
    if (r.program) glDeleteProgram(r.program);
    r.vao = r.program = 0;
    r.queue.clear();
}

void begin_heatmap_frame(HeatmapRenderer& r) {
    r.queue.clear();
    r.drawn = 0;
    r.upload_ms = 0;
    ++r.budget.frame;
}

void add_heatmap(ImDrawList* draw_list, HeatmapRenderer& r, const HeatmapDraw& d) {
    // Drawn this frame: the budget frees none of these while sending others in the render.
    if (d.data && !d.colorbar && d.swatch == 0) {
        d.data->last_drawn = r.budget.frame;
        if (d.base) d.base->last_drawn = r.budget.frame;
    }
    r.queue.push_back(QueuedHeatmap{&r, d});
    draw_list->AddCallback(draw_callback, &r.queue.back());
    draw_list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

} // namespace attnviz
