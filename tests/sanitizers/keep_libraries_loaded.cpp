// keep_libraries_loaded.cpp: linked into attnviz only in the sanitizer build (ATTNVIZ_SANITIZE,
// see tests/CMakeLists.txt). A dlclose that keeps every library mapped until exit.
//
// Why: glfwTerminate closes the display, and libglvnd / libGLX_mesa then dlclose Mesa's
// driver (swrast_dri.so). Blocks the driver still points to from its own globals (its GLSL
// compiler keeps two small ones after any shader compile) lose their only reference when
// the driver's data segment is unmapped, and LeakSanitizer's exit-time check reports them
// as leaks of "<unknown module>" with a one-frame stack: no suppression by library can name
// them. With the driver kept loaded, LeakSanitizer scans its globals as it does for every
// library still loaded, those blocks are reachable, and anything it still reports has
// stacks through named libraries: ours to fix, or suppressed by library in lsan.supp.
// Libraries' destructors then run at exit instead of at dlclose.
//
// The executable's definition takes precedence over libc's for every library loaded into
// the process (ELF symbol interposition); nothing in attnviz itself calls dlclose.
extern "C" int dlclose(void* handle) {
    (void)handle;
    return 0;
}
