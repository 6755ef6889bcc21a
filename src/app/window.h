// window.h: the GLFW window with its OpenGL 3.3 core context, Dear ImGui and the heatmap
// renderer, held by one guard: whatever open() and start() set up, the destructor tears
// down once, in reverse order, however the run ends.
#pragma once
#include "heatmap_renderer.h"
#include "theme.h"
#include "trace_textures.h"
#include <vector>

struct GLFWwindow;

namespace attnviz {

// The GL objects of the window: the heatmap shader and both sets of textures.
struct Gpu {
    HeatmapRenderer renderer;
    TraceTextures tex, base_tex;
    std::vector<Texture> grid_probs; // the Model view: a trained model's weights, [layer * H + head]
};

struct WindowSpec {
    int width = 1280, height = 800;
    bool headless = false;      // hidden, no vsync, no size limits
    bool debug_context = false; // KHR_debug reports every GL error (gl_debug.h)
};

class AppWindow {
public:
    AppWindow() = default;
    AppWindow(const AppWindow&) = delete;
    AppWindow& operator=(const AppWindow&) = delete;
    ~AppWindow();

    // GLFW, the window, its GL functions and an ImGui context (no imgui.ini). Returns 0, or
    // prints one sentence on stderr (no display, no OpenGL 3.3) and returns 2.
    int open(const WindowSpec& spec);
    // The fonts at this text size and the theme, the ImGui backends and the heatmap shader.
    // Returns 0, or prints one sentence and returns 2.
    int start(Theme theme, float font_scale);
    // The desktop's scale for this window (2 on a HiDPI screen), for the default text size.
    float content_scale() const;

    GLFWwindow* glfw() const { return window_; }
    Gpu gpu;
    Fonts fonts;

private:
    bool glfw_ = false, imgui_ = false, backend_ = false, renderer_ = false;
    GLFWwindow* window_ = nullptr;
};

} // namespace attnviz
