// gl_debug.h: counting OpenGL errors, for the soak run and anything else that must prove a
// session raised none.
//
// With GL_KHR_debug (glad loads it; GL 4.3 drivers list it) the driver calls back on every message;
// only messages of type ERROR are counted, the rest are switched off at the source. Without
// it, poll_gl_errors() drains glGetError once per call. Polling runs in both cases, so a
// driver that reports through only one of the two paths is still caught.
#pragma once
#include <cstdint>
#include <string>

namespace attnviz {

struct GlErrorCounter {
    bool debug_output = false;  // the KHR_debug callback is installed
    int64_t debug_errors = 0;   // messages of type ERROR seen by the callback
    int64_t polled_errors = 0;  // errors drained by poll_gl_errors
    std::string first_message;  // the first error's text, for the one-line report
};

// Installs the callback on the current context when GL_KHR_debug is there (best with a
// debug context: glfwWindowHint(GLFW_OPENGL_DEBUG_CONTEXT, GLFW_TRUE)). `counter` must
// outlive the context, or remove_gl_debug() must run first. Returns debug_output.
bool install_gl_debug(GlErrorCounter& counter);
void remove_gl_debug(GlErrorCounter& counter);
// Drains glGetError (each call returns and clears one recorded error).
void poll_gl_errors(GlErrorCounter& counter);
// Errors seen: the larger of the two paths' counts (one error usually reaches both).
int64_t gl_error_count(const GlErrorCounter& counter);
// Issues one invalid call (glBindTexture with a target that does not exist), so that a test
// can prove the counting works.
void provoke_gl_error();

} // namespace attnviz
