// imgui_backend.h: Dear ImGui's GLFW and OpenGL 3 backends (from libimgui.a), wrapped so that
// the loop in gui_main.cpp needs no GL header.
#pragma once

struct GLFWwindow;

namespace attnviz {

// After the ImGui context exists and the window's GL context is current.
bool init_imgui_backend(GLFWwindow* window);
void shutdown_imgui_backend();
void imgui_backend_new_frame();
// Draws ImGui's draw data (the heatmap callbacks run inside).
void imgui_backend_render();
// Re-creates the font texture after the font atlas was rebuilt (a new font scale).
void rebuild_font_texture();

} // namespace attnviz
