# Installing attnviz, and the Debian package for lab machines (make package, CPack's DEB generator).
# Included from the top-level CMakeLists.txt after src/app, so that the attnviz target exists.
#
# Always: the binary, the .desktop entry and the scalable icon (cmake --install). With
# ATTNVIZ_PACKAGE=ON (make package, which also turns ATTNVIZ_PORTABLE on): the icon's PNG sizes
# (rsvg-convert, librsvg2-bin), the man page from `attnviz --help` (help2man) and CPack.
# Nothing else is needed at run time: the shaders are embedded in the binary when CMake
# configures (src/render/CMakeLists.txt), the fonts come from fonts-dejavu-core and OpenBLAS is
# loaded with dlopen, so both are declared as dependencies below rather than copied.
option(ATTNVIZ_PACKAGE "Generate the icons and the man page and configure CPack (make package)" OFF)
if(NOT TARGET attnviz OR EMSCRIPTEN)  # the web build installs nothing
  return()
endif()
include(GNUInstallDirs)

set(ATTNVIZ_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/packaging)
set(ATTNVIZ_ICON_DIR ${CMAKE_INSTALL_DATADIR}/icons/hicolor)
install(TARGETS attnviz RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${ATTNVIZ_PACKAGING_DIR}/attnviz.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${ATTNVIZ_PACKAGING_DIR}/attnviz.svg DESTINATION ${ATTNVIZ_ICON_DIR}/scalable/apps)
# The web page attnviz --serve serves (make web's build-web/site), when it was built: found
# by the binary at ../share/attnviz/site (src/serve/serve_address.h).
set(ATTNVIZ_SITE_DIR ${PROJECT_SOURCE_DIR}/build-web/site CACHE PATH "the web page's folder that --serve serves")
if(EXISTS ${ATTNVIZ_SITE_DIR}/index.html)
  install(DIRECTORY ${ATTNVIZ_SITE_DIR}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/attnviz/site)
endif()

if(NOT ATTNVIZ_PACKAGE)
  return()
endif()

find_program(RSVG_CONVERT rsvg-convert REQUIRED)  # librsvg2-bin
find_program(HELP2MAN help2man REQUIRED)          # help2man
set(PACKAGING_OUT ${CMAKE_BINARY_DIR}/packaging)

# The icon at the hicolor theme's usual sizes, drawn from the one SVG.
set(ICON_PNGS "")
foreach(size 48 128 256)
  set(png ${PACKAGING_OUT}/icons/${size}x${size}/attnviz.png)
  add_custom_command(
    OUTPUT ${png}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PACKAGING_OUT}/icons/${size}x${size}
    COMMAND ${RSVG_CONVERT} --width ${size} --height ${size} --output ${png} ${ATTNVIZ_PACKAGING_DIR}/attnviz.svg
    DEPENDS ${ATTNVIZ_PACKAGING_DIR}/attnviz.svg
    COMMENT "Drawing the ${size}x${size} icon"
    VERBATIM)
  list(APPEND ICON_PNGS ${png})
  install(FILES ${png} DESTINATION ${ATTNVIZ_ICON_DIR}/${size}x${size}/apps)
endforeach()

# attnviz(1) from the binary's own --help and each command's --help (packaging/make-manpage).
set(MANPAGE ${PACKAGING_OUT}/attnviz.1.gz)
add_custom_command(
  OUTPUT ${MANPAGE}
  COMMAND ${ATTNVIZ_PACKAGING_DIR}/make-manpage $<TARGET_FILE:attnviz> ${HELP2MAN} ${MANPAGE}
  DEPENDS attnviz ${ATTNVIZ_PACKAGING_DIR}/make-manpage ${ATTNVIZ_PACKAGING_DIR}/attnviz.h2m
  COMMENT "Generating the man page from attnviz --help"
  VERBATIM)
add_custom_target(attnviz_package_files ALL DEPENDS ${ICON_PNGS} ${MANPAGE})
install(FILES ${MANPAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# The .deb: attnviz_VERSION_ARCH.deb in the build directory.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attnviz)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "attnviz maintainers <maintainers@users.noreply.a-seed-31850e02.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "visualizer that teaches causal multi-head self-attention")
# The long description under the summary line; dpkg shows it as written (lines under 80 columns).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "attnviz runs a small causal self-attention module, the one of a transformer
lesson, with PyTorch's random weights and inputs for a seed, and shows every
step of its shape walk: the qkv split, each head's scores before and after the
mask and the softmax, and which outputs move when one input position changes.
It also trains tiny models whose heads become previous-token, duplicate and
induction heads, and reads GPT-2 and nanoGPT weights. Its command line prints
the same numbers as JSON, .npy or .csv.")
set(CPACK_DEBIAN_PACKAGE_SECTION education)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# dpkg-shlibdeps finds the linked libraries (libglfw3, libstb0, libgomp1, libstdc++6, libc6,
# for --serve libwebsockets17 and libqrencode4, for get libcurl4 and libssl3);
# what is opened at run time it cannot see: libGL.so.1 (GLFW opens it for GLX; Mesa's drivers
# come with it through libglx-mesa0), OpenBLAS's pthread build (src/core/model/blas.cpp; without it
# the fast kernel falls back to Eigen's slower products) and the DejaVu fonts (src/ui/theme.cpp;
# without them ImGui's built-in font, which lacks √ ∞ −), and ca-certificates (attnviz get's
# HTTPS to the Hub cannot verify huggingface.co without them; libcurl4 only recommends it).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libgl1, libopenblas0-pthread, fonts-dejavu-core, ca-certificates")
include(CPack)
