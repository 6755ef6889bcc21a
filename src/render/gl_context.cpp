// gl_context.cpp: see gl_context.h.
#include "gl_context.h"
#include "gl_api.h"
#include <GLFW/glfw3.h>

namespace attnviz {

bool load_gl(std::string& error) {
#ifdef __EMSCRIPTEN__
    (void)error; // WebGL 2's functions are linked in; the context exists once the window does
    return true;
#else
    int version = gladLoadGL(glfwGetProcAddress);
    if (version == 0) {
        error = "could not load the OpenGL functions; the driver needs OpenGL 3.3 (under xvfb-run, Mesa's llvmpipe has it)";
        return false;
    }
    if (GLAD_VERSION_MAJOR(version) < 3 || (GLAD_VERSION_MAJOR(version) == 3 && GLAD_VERSION_MINOR(version) < 3)) {
        error = "OpenGL " + std::to_string(GLAD_VERSION_MAJOR(version)) + "." +
                std::to_string(GLAD_VERSION_MINOR(version)) + " is too old; attnviz needs OpenGL 3.3";
        return false;
    }
    return true;
#endif
}

std::string gl_description() {
    auto text = [](GLenum name) {
        const GLubyte* s = glGetString(name);
        return s ? std::string(reinterpret_cast<const char*>(s)) : std::string("?");
    };
    return text(GL_VERSION) + ", " + text(GL_RENDERER);
}

int max_texture_size() {
    GLint n = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &n);
    return n;
}

void clear_frame(int w, int h, float r, float g, float b) {
    glViewport(0, 0, w, h);
    glClearColor(r, g, b, 1.f);
    glClear(GL_COLOR_BUFFER_BIT);
}

} // namespace attnviz
