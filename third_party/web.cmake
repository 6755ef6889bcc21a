# The same targets as dependencies.cmake, for the web build (emcmake cmake, `make web`).
# Debian's emscripten ships its system libraries prebuilt; GLFW 3 and WebGL 2 come from it
# (-sUSE_GLFW=3), everything else from the same Debian packages as the native build, as
# headers only, plus Dear ImGui 1.86's source (scripts/web-deps puts it in ATTNVIZ_IMGUI_SRC).
set(ATTNVIZ_IMGUI_SRC "${CMAKE_BINARY_DIR}/imgui-src" CACHE PATH "Dear ImGui's source (scripts/web-deps)")
if(NOT EXISTS "${ATTNVIZ_IMGUI_SRC}/imgui.cpp")
  message(FATAL_ERROR "Dear ImGui's source is not in ${ATTNVIZ_IMGUI_SRC}; run scripts/web-deps (make web does)")
endif()

# Eigen 3.4 (libeigen3-dev): make web passes Eigen3_DIR=/usr/share/eigen3/cmake.
find_package(Eigen3 3.3 REQUIRED NO_MODULE)

# Header-only packages whose targets would add -isystem /usr/include (the host's glibc
# headers, which break the build): each is copied into a folder that holds only it.
function(attnviz_header_copy target dir)
  set(copy ${CMAKE_BINARY_DIR}/web-include/${target})
  file(COPY /usr/include/${dir} DESTINATION ${copy})
  add_library(${target} INTERFACE)
  target_include_directories(${target} SYSTEM INTERFACE ${copy})
endfunction()
attnviz_header_copy(third_party_json nlohmann)
add_library(nlohmann_json::nlohmann_json ALIAS third_party_json)
attnviz_header_copy(third_party_cli11 CLI)
add_library(CLI11::CLI11 ALIAS third_party_cli11)

# GLFW 3 and OpenGL ES 3 / WebGL 2 from emscripten itself.
# web/include/GLFW/glfw3.h (on every target's path, CMakeLists.txt) adds the two GLFW 3.3
# calls the window makes to Emscripten's GLFW 3.2 header.
add_library(glfw INTERFACE)
target_link_options(glfw INTERFACE -sUSE_GLFW=3 -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2)
add_library(glad INTERFACE) # no loader: the browser's WebGL 2 functions are linked directly

# stb_image_write: the header from libstb-dev, its implementation compiled here.
attnviz_header_copy(third_party_stb stb)
set(STB_IMPL ${CMAKE_BINARY_DIR}/web-include/stb_image_write_impl.c)
if(NOT EXISTS ${STB_IMPL}) # written once: rewriting it on every configure would relink the page
  file(WRITE ${STB_IMPL} "#define STB_IMAGE_WRITE_IMPLEMENTATION\n#include <stb/stb_image_write.h>\n")
endif()
add_library(third_party_stb_impl STATIC ${STB_IMPL})
target_link_libraries(third_party_stb_impl PUBLIC third_party_stb)
add_library(stb::stb ALIAS third_party_stb_impl)

# Dear ImGui with its GLFW and OpenGL 3 backends, the latter for OpenGL ES 3 (WebGL 2).
set(IMGUI_SOURCES imgui.cpp imgui_draw.cpp imgui_tables.cpp imgui_widgets.cpp
    misc/cpp/imgui_stdlib.cpp backends/imgui_impl_glfw.cpp backends/imgui_impl_opengl3.cpp)
list(TRANSFORM IMGUI_SOURCES PREPEND ${ATTNVIZ_IMGUI_SRC}/)
add_library(third_party_imgui STATIC ${IMGUI_SOURCES})
target_include_directories(third_party_imgui SYSTEM PUBLIC ${ATTNVIZ_IMGUI_SRC} ${ATTNVIZ_IMGUI_SRC}/backends
                           ${ATTNVIZ_IMGUI_SRC}/misc/cpp)
target_compile_definitions(third_party_imgui PUBLIC IMGUI_IMPL_OPENGL_ES3)
# IMGUI_ENABLE_TEST_ENGINE, in the probes build only (ATTNVIZ_WEB_PROBES): widgets report their
# rectangles and labels to hooks in src/app/web_probe.cpp, for the browser tests; set for every
# file, as it changes ImGuiContext.
if(ATTNVIZ_WEB_PROBES)
  target_compile_definitions(third_party_imgui PUBLIC IMGUI_ENABLE_TEST_ENGINE)
endif()
target_link_libraries(third_party_imgui PUBLIC glfw)
add_library(imgui::imgui ALIAS third_party_imgui)
