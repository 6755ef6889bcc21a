// web_platform.cpp: see web_platform.h. Built only for the web (make web).
#include "web_platform.h"
#include "train_view_state.h"
#include <GLFW/glfw3.h>
#include <cmath>
#include <dirent.h>
#include <emscripten.h>
#include <emscripten/html5.h>
#include <sys/stat.h>
#include <unistd.h>

// Emscripten's GLFW 3 lacks these two, which the window (window.cpp) calls.
extern "C" int glfwGetError(const char** description) {
    if (description) *description = nullptr;
    return 0; // GLFW_NO_ERROR
}
extern "C" void glfwGetWindowContentScale(GLFWwindow*, float* x, float* y) {
    const float dpr = float(emscripten_get_device_pixel_ratio());
    if (x) *x = dpr;
    if (y) *y = dpr;
}

namespace attnviz {

namespace {

bool ends_with(const std::string& s, const char* tail) {
    const std::string t(tail);
    if (s.size() < t.size()) return false;
    for (size_t i = 0; i < t.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[s.size() - t.size() + i])) != t[i]) return false;
    return true;
}

} // namespace

void web_start_files() {
    mkdir(web_files_dir(), 0755);
    if (chdir(web_files_dir()) != 0) std::perror("attnviz: /files");
}

bool web_canvas_pixels(int& w, int& h) {
    double cw = 0, ch = 0;
    if (emscripten_get_element_css_size("#canvas", &cw, &ch) != EMSCRIPTEN_RESULT_SUCCESS || cw < 1 || ch < 1)
        return false;
    const double dpr = emscripten_get_device_pixel_ratio();
    w = int(std::lround(cw * dpr));
    h = int(std::lround(ch * dpr));
    return true;
}

void web_follow_canvas(GLFWwindow* window) {
    int w = 0, h = 0, ww = 0, wh = 0;
    if (!web_canvas_pixels(w, h)) return;
    glfwGetWindowSize(window, &ww, &wh);
    if (w == ww && h == wh) return;
    // Browser.setCanvasSize sets the canvas's pixels and tells GLFW, which tells ImGui;
    // glfwSetWindowSize would ask for full screen when the size equals the screen's.
    EM_ASM({ Browser.setCanvasSize($0, $1); }, w, h);
}

void web_offer_downloads(std::map<std::string, double>& seen, bool offer) {
    DIR* dir = opendir(web_files_dir());
    if (!dir) return;
    while (const dirent* e = readdir(dir)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        const std::string path = std::string(web_files_dir()) + "/" + name;
        struct stat st;
        if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        const double mtime = double(st.st_mtim.tv_sec) * 1e3 + double(st.st_mtim.tv_nsec) / 1e6;
        auto it = seen.find(name);
        if (it != seen.end() && it->second == mtime) continue;
        seen[name] = mtime;
        if (!offer) continue;
        EM_ASM(
            {
                const name = UTF8ToString($1);
                const blob = new Blob([FS.readFile(UTF8ToString($0))], {type : 'application/octet-stream'});
                const a = document.createElement('a');
                a.href = URL.createObjectURL(blob);
                a.download = name;
                document.body.appendChild(a);
                a.click();
                a.remove();
                setTimeout(function() { URL.revokeObjectURL(a.href); }, 60000);
                console.log('attnviz: offered ' + name + ' as a download');
            },
            path.c_str(), name.c_str());
    }
    closedir(dir);
}

void web_persist_settings() {
    EM_ASM({
        FS.syncfs(false, function(err) {
            if (err) console.warn('attnviz: the settings could not be kept in the browser: ' + err);
        });
    });
}

void web_file_added(AppState& s, const std::string& name) {
    if (ends_with(name, ".safetensors")) {
        s.fields.weights_field = name;
        train_view(s).model_path = name;
        s.status = name + " is in the page: Load weights… shows it in the views; the Train view's Load trains from it.";
    } else if (ends_with(name, ".json")) {
        s.fields.session_path = name;
        s.status = name + " is in the page: Open (Ctrl+O) in the Session section opens it.";
    } else {
        s.status = name + " is in the page, as /files/" + name + ".";
    }
}

} // namespace attnviz
