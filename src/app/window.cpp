// window.cpp: see window.h.
#include "window.h"
#include "gl_context.h"
#include "imgui_backend.h"
#include <GLFW/glfw3.h>
#include <cstdio>
#include <cstdlib>
#include <imgui.h>
#include <string>

namespace attnviz {

namespace {

// glfwInit failed: say why in one line and how to run without a desktop.
int no_display() {
    const char* display = std::getenv("DISPLAY");
    const char* hint = "run it on a desktop, or headless as: xvfb-run -a attnviz --screenshot out.png";
    if (!display || !*display) {
        std::fprintf(stderr, "attnviz: no X display (DISPLAY is not set); %s\n", hint);
    } else {
        const char* why = nullptr;
        glfwGetError(&why);
        std::fprintf(stderr, "attnviz: cannot open the X display '%s' (%s); %s\n", display, why ? why : "unknown error",
                     hint);
    }
    return 2;
}

} // namespace

int AppWindow::open(const WindowSpec& spec) {
    if (!glfwInit()) return no_display();
    glfw_ = true;
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_VISIBLE, spec.headless ? GLFW_FALSE : GLFW_TRUE);
    if (spec.debug_context) glfwWindowHint(GLFW_OPENGL_DEBUG_CONTEXT, GLFW_TRUE);
    window_ = glfwCreateWindow(spec.width, spec.height, "attnviz: causal self-attention", nullptr, nullptr);
    if (!window_) {
        const char* why = nullptr;
        glfwGetError(&why);
        std::fprintf(stderr, "attnviz: could not open an OpenGL 3.3 window (%s); under xvfb-run Mesa's llvmpipe provides one\n",
                     why ? why : "unknown error");
        return 2;
    }
    glfwMakeContextCurrent(window_);
    glfwSwapInterval(spec.headless ? 0 : 1);
    if (!spec.headless) glfwSetWindowSizeLimits(window_, 640, 400, GLFW_DONT_CARE, GLFW_DONT_CARE);
    std::string error;
    if (!load_gl(error)) {
        std::fprintf(stderr, "attnviz: %s\n", error.c_str());
        return 2;
    }
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    imgui_ = true;
    ImGui::GetIO().IniFilename = nullptr;
    return 0;
}

int AppWindow::start(Theme theme, float font_scale) {
    fonts = load_fonts(font_scale);
    if (!fonts.warning.empty()) std::fprintf(stderr, "%s\n", fonts.warning.c_str());
    apply_theme(theme, font_scale);
    init_imgui_backend(window_);
    backend_ = true;
    std::string error;
    if (!create_heatmap_renderer(gpu.renderer, error)) {
        std::fprintf(stderr, "attnviz: %s\n", error.c_str());
        return 2;
    }
    renderer_ = true;
    return 0;
}

float AppWindow::content_scale() const {
    float sx = 1, sy = 1;
    glfwGetWindowContentScale(window_, &sx, &sy);
    return sx;
}

AppWindow::~AppWindow() {
    if (renderer_) {
        destroy(gpu.tex);
        destroy(gpu.base_tex);
        for (Texture& t : gpu.grid_probs) destroy(t);
        destroy_heatmap_renderer(gpu.renderer);
    }
    if (backend_) shutdown_imgui_backend();
    if (imgui_) ImGui::DestroyContext();
    if (window_) glfwDestroyWindow(window_);
    if (glfw_) glfwTerminate();
}

} // namespace attnviz
