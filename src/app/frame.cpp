// frame.cpp: see frame.h.
#include "frame.h"
#include "gl_context.h"
#include "imgui_backend.h"
#include "inputs.h"
#include "text_fit.h"
#include "screenshot.h"
#include "train_view_state.h"
#include "views.h"
#include <GLFW/glfw3.h>
#include <algorithm>
#include <cmath>
#include <imgui.h>
#include <string>

namespace attnviz {

namespace {

// The Model view's grid: every block's softmax weights of a trained model, lazy (sent when
// the grid draws them, under the renderer's budget), reading model_base's buffers.
void sync_grid_textures(AppState& s, std::vector<Texture>& tex) {
    for (Texture& t : tex) destroy(t);
    tex.clear();
    if (shown_model(s) && s.model_run.model_base.compact) {
        // A compact trace's pooled pictures (gpt_model.h).
        for (const PerHead& layer : s.model_run.model_base.att_pooled) tex.resize(tex.size() + layer.size());
        size_t i = 0;
        for (const PerHead& layer : s.model_run.model_base.att_pooled)
            for (const Mat& p : layer) set_lazy(tex[i++], p.data(), int(p.rows()), int(p.cols()));
    } else if (shown_model(s)) {
        for (const Trace& tr : s.model_run.model_base.layers) tex.resize(tex.size() + tr.att.size());
        size_t i = 0;
        for (const Trace& tr : s.model_run.model_base.layers)
            for (const Mat& p : tr.att) set_lazy(tex[i++], p.data(), int(p.rows()), int(p.cols()));
    }
    s.model_view.grid_upload = false;
}

// Sends what recompute() marked as changed.
void sync_textures(AppState& s, Gpu& gpu) {
    if (s.model_view.grid_upload) sync_grid_textures(s, gpu.grid_probs);
    if (s.upload.any()) {
        upload_trace(gpu.tex, s.run.trace, s.run.experiment.weights, s.upload);
        s.upload = UploadRequest{};
    }
    if (s.base_upload) {
        destroy(gpu.base_tex);
        if (s.run.has_base) {
            UploadRequest all;
            all.full = true;
            upload_trace(gpu.base_tex, s.run.base, s.run.experiment.weights, all);
        } else {
            // Only the output is kept unperturbed at this size.
            upload(gpu.base_tex.y, s.run.base_y.data(), int(s.run.base_y.rows()), int(s.run.base_y.cols()));
        }
        s.base_upload = false;
    }
}

// Ctrl+P / the Export section's PNG button: the view's part of the frame just drawn, read
// back before the swap; the result goes to the status line.
void write_png_request(GLFWwindow* window, AppState& s) {
    if (s.screen.png_request.empty()) return;
    int fw = 0, fh = 0, ww = 0, wh = 0;
    glfwGetFramebufferSize(window, &fw, &fh);
    glfwGetWindowSize(window, &ww, &wh);
    // view_rect is in window coordinates; the framebuffer may have more pixels (HiDPI).
    const float sx = ww > 0 ? float(fw) / float(ww) : 1.f, sy = wh > 0 ? float(fh) / float(wh) : 1.f;
    const int x0 = std::clamp(int(std::lround(s.screen.view_rect[0] * sx)), 0, fw);
    const int y0 = std::clamp(int(std::lround(s.screen.view_rect[1] * sy)), 0, fh);
    const int x1 = std::clamp(int(std::lround(s.screen.view_rect[2] * sx)), x0, fw);
    const int y1 = std::clamp(int(std::lround(s.screen.view_rect[3] * sy)), y0, fh);
    std::string error;
    if (write_screenshot_png_region(s.screen.png_request, fw, fh, x0, y0, x1 - x0, y1 - y0, error))
        s.status = std::string("Saved the ") + to_string(s.screen.view) + " view (" + std::to_string(x1 - x0) + " × " +
                   std::to_string(y1 - y0) + " pixels) to " + s.screen.png_request + ".";
    else
        s.status = "Not saved: " + error + ".";
    s.screen.png_request.clear();
}

} // namespace

void frame(AppWindow& w, AppState& s, FrameMarks* marks) {
    GLFWwindow* window = w.glfw();
    Gpu& gpu = w.gpu;
    Fonts& fonts = w.fonts;
    const double t0 = marks ? glfwGetTime() : 0;
    auto mark = [&](double FrameMarks::*at) {
        if (marks) marks->*at = (glfwGetTime() - t0) * 1e3;
    };
    if (s.fonts_dirty) {
        fonts = load_fonts(s.screen.font_scale);
        apply_theme(s.screen.theme, s.screen.font_scale);
        rebuild_font_texture();
        s.fonts_dirty = false;
    }
    recompute(s);
    refresh_train_view(s); // the Train view's copy of its run, and its heads on the probe
    mark(&FrameMarks::recompute);
    sync_textures(s, gpu);
    mark(&FrameMarks::sync);

    imgui_backend_new_frame();
    ImGui::NewFrame();
    begin_heatmap_frame(gpu.renderer);
    s.screen.layout.clear();
    UiContext ui;
    ui.tex = &gpu.tex;
    ui.base_tex = &gpu.base_tex;
    ui.grid_probs = &gpu.grid_probs;
    ui.renderer = &gpu.renderer;
    ui.fonts = &fonts;
    ui.pal = make_palette(s.screen.theme, s.screen.palette);
    gpu.renderer.palette = s.screen.palette == PaletteKind::cb ? 1 : 0;
    ui.scale = s.screen.font_scale;
    ui.layout = &s.screen.layout;
    Minimap overview; // offered by this frame's panels, drawn by the side panel next frame
    ui.minimap = &overview;
    ui.view = int(s.screen.view);
    ui.tokens = &s.tokens.applied;
    ui.row_label_w = widest_position_label(fonts.small, s.tokens.applied);
    draw_app(s, ui);
    s.screen.minimap = overview;
    ImGui::Render();
    mark(&FrameMarks::panels);

    int fw = 0, fh = 0;
    glfwGetFramebufferSize(window, &fw, &fh);
    clear_frame(fw, fh, ui.pal.clear_rgb[0], ui.pal.clear_rgb[1], ui.pal.clear_rgb[2]);
    imgui_backend_render();
    if (marks) marks->uploads = gpu.renderer.upload_ms;
    write_png_request(window, s);
}

} // namespace attnviz
