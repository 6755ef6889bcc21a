// imgui_backend.cpp: see imgui_backend.h.
#include "imgui_backend.h"
#include "gl_api.h"
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

namespace attnviz {

bool init_imgui_backend(GLFWwindow* window) {
    if (!ImGui_ImplGlfw_InitForOpenGL(window, true)) return false;
    // ImGui's shaders take the version line alone; it adds its own precision for ES.
    return ImGui_ImplOpenGL3_Init(shader_version());
}

void shutdown_imgui_backend() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
}

void imgui_backend_new_frame() {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
}

void imgui_backend_render() { ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData()); }

void rebuild_font_texture() {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
}

} // namespace attnviz
