// gl_api.h: the OpenGL header every file of the render layer includes. Natively glad's
// OpenGL 3.3 core loader; in the web build (make web) the browser's WebGL 2, which is
// OpenGL ES 3.0: the same calls the render layer makes, with its shaders' first line and
// precision given by shader_prelude().
#pragma once
#ifdef __EMSCRIPTEN__
#include <GLES3/gl3.h>
#else
#include <glad/gl.h>
#endif

namespace attnviz {

// What replaces a shader source's "#version 330 core" line: the same natively, and
// "#version 300 es" with float and sampler precision for WebGL 2.
inline const char* shader_prelude() {
#ifdef __EMSCRIPTEN__
    return "#version 300 es\nprecision highp float;\nprecision highp sampler2D;\n";
#else
    return "#version 330 core\n";
#endif
}

// The version line alone, for ImGui's OpenGL 3 backend.
inline const char* shader_version() {
#ifdef __EMSCRIPTEN__
    return "#version 300 es";
#else
    return "#version 330 core";
#endif
}

} // namespace attnviz
