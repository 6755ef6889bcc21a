// web_platform.h: what the page does differently from the desktop, in one place (make web;
// web_main.cpp runs the loop). The panels stay the same: they read and write paths, and
// this layer moves the files between those paths and the browser.
//
//   files     the app's working folder is /files in Emscripten's in-memory file system.
//             A file the user picks in the page (web/index.html's "Open a file" button)
//             is written there and its name put in the matching path field; a file the
//             app writes there (PNG, tensor, session, model) is offered as a download.
//   settings  the settings file (settings.h) lives under /home/web_user/.config, an IDBFS
//             folder kept in the browser's IndexedDB (web/pre.js loads it before main).
//   canvas    the canvas fills the page at the device pixel ratio: the window's size is
//             the canvas's in device pixels, so text is sharp.
#pragma once
#include "app_state.h"
#include <map>
#include <string>

struct GLFWwindow;

namespace attnviz {

// The folder the app reads and writes relative paths in.
inline const char* web_files_dir() { return "/files"; }

// Makes /files and makes it the working folder.
void web_start_files();
// The canvas's size on the page times the device pixel ratio, or false before the page laid it out.
bool web_canvas_pixels(int& w, int& h);
// Resizes the window (and the canvas's pixels) to follow the page; once a frame.
void web_follow_canvas(GLFWwindow* window);
// Offers every file under /files that is new or changed since the last call as a download;
// `seen` keeps each file's last modification. offer = false only records them (after an
// upload, which is not offered back).
void web_offer_downloads(std::map<std::string, double>& seen, bool offer = true);
// Writes the IDBFS folder back to the browser's storage (after the settings changed).
void web_persist_settings();
// A file the page put into /files: its name goes into the path field that reads it
// (weights and trained models: .safetensors; sessions: .json) and the status line says
// which button loads it.
void web_file_added(AppState& s, const std::string& name);

} // namespace attnviz
