// GLFW/glfw3.h for the web build (make web): Emscripten's GLFW 3.2 header, plus the two
// GLFW 3.3 functions the window calls, which src/app/web_platform.cpp provides.
#pragma once
#include_next <GLFW/glfw3.h>

#ifdef __cplusplus
extern "C" {
#endif
#ifndef GLFW_NO_ERROR
#define GLFW_NO_ERROR 0
#endif
int glfwGetError(const char** description);
void glfwGetWindowContentScale(GLFWwindow* window, float* xscale, float* yscale);
#ifdef __cplusplus
}
#endif
