// gl_context.h: loading OpenGL and the few whole-frame calls the loop needs.
//
// Everything here runs with the window's context current. glad must be loaded before any
// other gl* call (textures, the heatmap shader, read-back).
#pragma once
#include <string>

namespace attnviz {

// gladLoadGL(glfwGetProcAddress). On failure sets `error` to one sentence.
bool load_gl(std::string& error);
// "4.5 (Core Profile) Mesa 22.3.6, llvmpipe (LLVM 15.0.6, 256 bits)"
std::string gl_description();
// Largest texture side the driver accepts (GL_MAX_TEXTURE_SIZE).
int max_texture_size();
// Clears the whole framebuffer (w x h pixels) to one colour.
void clear_frame(int w, int h, float r, float g, float b);

} // namespace attnviz
