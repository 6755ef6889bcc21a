// frame.h: one frame of the window. Recompute what the dirty flags ask for, send the
// textures that changed, draw the panels, render; the back buffer holds the frame after.
#pragma once
#include "app_state.h"
#include "window.h"

namespace attnviz {

// Where one frame's time went (the frame benchmark): ms since the frame began at the end
// of recompute(), of the texture sync and of the panels (ImGui::Render included); the
// render after them (which sends the deferred texture rows, texture.h) is the rest.
struct FrameMarks {
    double recompute = 0, sync = 0, panels = 0;
    double uploads = 0; // part of the render: the deferred texture rows (HeatmapRenderer::upload_ms)
};

void frame(AppWindow& w, AppState& s, FrameMarks* marks = nullptr);

} // namespace attnviz
