# CMake glue for the Debian packages the project uses. Nothing third-party is vendored:
# Included from the top-level CMakeLists.txt so that the imported targets are visible everywhere.
# The web build takes the same targets from web.cmake.
if(EMSCRIPTEN)
  include(${CMAKE_CURRENT_LIST_DIR}/web.cmake)
  return()
endif()
# glad is generated here at build time, everything else comes from -dev packages.
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(OpenMP)
find_package(nlohmann_json 3 REQUIRED)
find_package(PkgConfig REQUIRED)

# CLI11 (libcli11-dev) is header-only; Debian 12 ships no CMake config for it.
find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
add_library(third_party_cli11 INTERFACE)
target_include_directories(third_party_cli11 SYSTEM INTERFACE ${CLI11_INCLUDE_DIR})
add_library(CLI11::CLI11 ALIAS third_party_cli11)

# GLFW 3.3 (X11 build, libglfw3-dev).
find_package(glfw3 3.3 REQUIRED)

# Dear ImGui 1.86 (libimgui-dev): static libimgui.a with the GLFW and OpenGL3 backends
# inside; it takes stbtt_*/stbrp_* from libstb. Its .pc does not name the backends'
# headers, which Debian puts in backends/ under the .pc's include directory.
pkg_check_modules(IMGUI REQUIRED IMPORTED_TARGET imgui)
find_path(IMGUI_BACKENDS_DIR imgui_impl_glfw.h HINTS ${IMGUI_INCLUDE_DIRS} PATH_SUFFIXES backends REQUIRED)
add_library(third_party_imgui INTERFACE)
target_link_libraries(third_party_imgui INTERFACE PkgConfig::IMGUI glfw)
target_include_directories(third_party_imgui SYSTEM INTERFACE ${IMGUI_BACKENDS_DIR})
add_library(imgui::imgui ALIAS third_party_imgui)

# stb (libstb-dev): stb_image_write's implementation is already in libstb.so.
pkg_check_modules(STB REQUIRED IMPORTED_TARGET stb)
add_library(third_party_stb INTERFACE)
target_link_libraries(third_party_stb INTERFACE PkgConfig::STB)
add_library(stb::stb ALIAS third_party_stb)

# glad 2 (python3-glad): an OpenGL 3.3 core loader plus GL_KHR_debug, generated offline.
# /usr/bin/glad runs Debian's python3, which has the glad module; a glad earlier on PATH
# (a virtualenv's) may run another python3 without it, so /usr/bin is looked in first.
find_program(GLAD_EXECUTABLE glad HINTS /usr/bin REQUIRED)
set(GLAD_OUT ${CMAKE_BINARY_DIR}/glad)
add_custom_command(
  OUTPUT ${GLAD_OUT}/src/gl.c ${GLAD_OUT}/include/glad/gl.h ${GLAD_OUT}/include/KHR/khrplatform.h
  COMMAND ${GLAD_EXECUTABLE} --quiet --reproducible --api gl:core=3.3 --extensions=GL_KHR_debug
          --out-path ${GLAD_OUT} c
  COMMENT "Generating the glad OpenGL 3.3 core loader"
  VERBATIM)
add_library(glad STATIC ${GLAD_OUT}/src/gl.c)
target_include_directories(glad SYSTEM PUBLIC ${GLAD_OUT}/include)
set_target_properties(glad PROPERTIES POSITION_INDEPENDENT_CODE ON)
find_package(OpenGL REQUIRED)
target_link_libraries(glad PUBLIC OpenGL::GL ${CMAKE_DL_LIBS})
