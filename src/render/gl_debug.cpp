// gl_debug.cpp: see gl_debug.h.
#include "gl_debug.h"
#include "gl_api.h"
#include <algorithm>

namespace attnviz {

namespace {

void GLAD_API_PTR on_gl_message(GLenum /*source*/, GLenum type, GLuint /*id*/, GLenum /*severity*/, GLsizei length,
                                const GLchar* message, const void* user) {
    if (type != GL_DEBUG_TYPE_ERROR || !user) return;
    auto& c = *static_cast<GlErrorCounter*>(const_cast<void*>(user));
    ++c.debug_errors;
    if (c.first_message.empty() && message)
        c.first_message = length >= 0 ? std::string(message, size_t(length)) : std::string(message);
}

const char* error_name(GLenum e) {
    switch (e) {
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    default: return "an unknown GL error";
    }
}

} // namespace

bool install_gl_debug(GlErrorCounter& counter) {
    counter.debug_output = false;
    // glad is generated for 3.3 core: KHR_debug is the way in (GL 4.3+ drivers list it too).
    if (!GLAD_GL_KHR_debug || !glad_glDebugMessageCallback || !glad_glDebugMessageControl)
        return false;
    glEnable(GL_DEBUG_OUTPUT);
    // Synchronous: the callback runs inside the failing call, on this thread, so the
    // counter needs no lock.
    glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
    glDebugMessageCallback(&on_gl_message, &counter);
    // Only errors: performance and portability notes would cost a call each for nothing.
    glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DONT_CARE, 0, nullptr, GL_FALSE);
    glDebugMessageControl(GL_DONT_CARE, GL_DEBUG_TYPE_ERROR, GL_DONT_CARE, 0, nullptr, GL_TRUE);
    // Setting up must itself be clean; anything it raised would be counted against the run.
    while (glGetError() != GL_NO_ERROR) {
    }
    counter.debug_output = true;
    return true;
}

void remove_gl_debug(GlErrorCounter& counter) {
    if (!counter.debug_output) return;
    glDebugMessageCallback(nullptr, nullptr);
    glDisable(GL_DEBUG_OUTPUT);
    counter.debug_output = false;
}

void poll_gl_errors(GlErrorCounter& counter) {
    // Bounded: a lost context can return GL_CONTEXT_LOST forever on some drivers.
    for (int i = 0; i < 64; ++i) {
        const GLenum e = glGetError();
        if (e == GL_NO_ERROR) return;
        ++counter.polled_errors;
        if (counter.first_message.empty()) counter.first_message = std::string("glGetError returned ") + error_name(e);
    }
}

int64_t gl_error_count(const GlErrorCounter& counter) { return std::max(counter.debug_errors, counter.polled_errors); }

void provoke_gl_error() { glBindTexture(GL_INVALID_ENUM, 0); }

} // namespace attnviz
