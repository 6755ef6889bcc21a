// text_fit.cpp: see text_fit.h.
#include "text_fit.h"
#include "inputs.h"
#include "text_util.h"
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <imgui.h>

namespace attnviz {

std::string fit_text(ImFont* font, const std::string& text, float width) {
    auto w = [font](const std::string& s) { return font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.f, s.c_str()).x; };
    if (w(text) <= width) return text;
    for (size_t n = utf8_count(text); n-- > 1;) {
        std::string cut = text.substr(0, utf8_prefix(text, n)) + "…";
        if (w(cut) <= width) return cut;
    }
    return "";
}

float widest_position_label(ImFont* font, const std::vector<std::string>& tokens) {
    if (tokens.empty() || !font) return 0;
    float best = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
        const std::string word = position_word(tokens, int(t));
        best = std::max(best, font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.f, word.c_str()).x);
    }
    // Long words are cut rather than taking the width of the cells.
    best = std::min(best, std::round(4.5f * font->FontSize));
    // Digits share one width in DejaVu Sans, so the last index is the widest.
    const std::string index = std::to_string(tokens.size() - 1) + " ";
    return best + font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.f, index.c_str()).x;
}

} // namespace attnviz
