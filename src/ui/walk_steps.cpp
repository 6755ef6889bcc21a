// walk_steps.cpp: see walk_steps.h.
#include "walk_steps.h"
#include "format.h"
#include "model_io.h"
#include <algorithm>

namespace attnviz {

namespace {

// The lesson's forward(), as printed (one indent level less).
std::vector<std::string> lesson_code_lines(const Config& c) {
    std::vector<std::string> lines = {
        "def forward(self, x):",
        "    B, T, C = x.shape",
        "    q, k, v = self.qkv(x).split(C, dim=2)",
        "    q, k, v = (t.view(B, T, self.n_head, self.head_dim).transpose(1, 2) for t in (q, k, v))",
        "    att = (q @ k.transpose(-2, -1)) * self.head_dim ** -0.5",
        "    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))",
        "    att = F.softmax(att.masked_fill(~mask, float(\"-inf\")), dim=-1)",
        "    y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)",
        "    return self.proj(y)",
    };
    // The teaching switches change the code the way one would change it to try them.
    if (c.scale == ScaleMode::n_embd) lines[4] = "    att = (q @ k.transpose(-2, -1)) * C ** -0.5";
    if (c.scale == ScaleMode::none) lines[4] = "    att = (q @ k.transpose(-2, -1))";
    if (c.mask == MaskMode::off_by_one) lines[5] = "    mask = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)";
    if (c.mask == MaskMode::none) lines[5] = "    mask = torch.ones(T, T, dtype=torch.bool)";
    return lines;
}

// `words`: the input comes from words (--text), not from torch.randn.
WalkStep lesson_walk_step(int step, const Config& c, bool words) {
    auto sh = [&](const char* s) { return format_shape(s, c); };
    const std::string scale_code = c.scale == ScaleMode::head_dim ? "* self.head_dim ** -0.5"
                                   : c.scale == ScaleMode::n_embd ? "* C ** -0.5"
                                                                  : "";
    switch (step) {
    case 0:
        return {"the input x", {{1, ""}}, sh("(B, T, C)"), sh("(B, T, C)"),
                words ? "One position per word, C channels each (B = 1 sequence): each distinct word has its own "
                        "seeded N(0, 1) row, so a repeated word repeats its row of x."
                      : "The module takes T positions of C channels each (B = 1 sequence); here x = torch.randn(1, " +
                            std::to_string(c.seq_len) + ", " + std::to_string(c.n_embd) + ")."};
    case 1:
        return {"x → qkv", {{2, "self.qkv(x)"}}, sh("(B, T, C)"), sh("(B, T, 3C)"),
                "One Linear(C, 3C) makes queries, keys and values together: one matmul instead of three."};
    case 2:
        return {"split into q, k, v", {{2, ".split(C, dim=2)"}}, sh("(B, T, 3C)"), "q, k, v: 3 × " + sh("(B, T, C)"),
                "Cutting the last dimension into three blocks of C columns moves no data: q, k and v are views of qkv."};
    case 3:
        return {"view into H heads", {{3, "t.view(B, T, self.n_head, self.head_dim)"}}, sh("(B, T, C)"),
                sh("(B, T, H, head_dim)"),
                "Each head gets its own head_dim = C / H channels: multi-head splits channels, not compute."};
    case 4:
        return {"transpose", {{3, ".transpose(1, 2)"}}, sh("(B, T, H, head_dim)"), sh("(B, H, T, head_dim)"),
                "Heads move in front of positions, so one batched matmul runs all H heads in parallel."};
    case 5:
        return {"q · kᵀ", {{4, "(q @ k.transpose(-2, -1))"}}, sh("(B, H, T, head_dim)") + " · kᵀ", sh("(B, H, T, T)"),
                "Row i, column j says how well query i matches key j: every position scores every position."};
    case 6:
        return {c.scale == ScaleMode::head_dim ? "× head_dim^−½" : c.scale == ScaleMode::n_embd ? "× C^−½" : "no scaling",
                {{4, scale_code}}, sh("(B, H, T, T)"), sh("(B, H, T, T)"),
                c.scale == ScaleMode::head_dim
                    ? "Each head divides by √head_dim, its own width (not √C), so scores stay near unit size and softmax does not saturate."
                : c.scale == ScaleMode::n_embd
                    ? "Scaled by √C instead of √head_dim: the scores come out √H times too small and softmax flattens."
                    : "Unscaled: the scores grow with √head_dim and softmax saturates toward one key."};
    case 7:
        return {"mask", {{5, ""}, {6, "att.masked_fill(~mask, float(\"-inf\"))"}}, sh("(B, H, T, T)"), sh("(B, H, T, T)"),
                c.mask == MaskMode::causal
                    ? "torch.tril keeps keys j ≤ i: every future key is set to −∞, so it can get no weight."
                : c.mask == MaskMode::none
                    ? "No mask: every query sees every key, the future included; training would silently cheat."
                    : "Off-by-one: tril(diagonal=−1) also hides the diagonal, so row 0 sees no key at all."};
    case 8:
        return {"softmax", {{6, "F.softmax("}, {6, ", dim=-1)"}}, sh("(B, H, T, T)"), sh("(B, H, T, T)"),
                c.mask == MaskMode::off_by_one
                    ? "Each row becomes weights that sum to 1, except row 0: all −∞ gives 0 / 0 = NaN."
                    : "Each row becomes weights that sum to 1; e^−∞ = 0, so masked keys get exactly 0."};
    case 9:
        return {"att · v", {{7, "(att @ v)"}}, sh("(B, H, T, T)") + " · v", sh("(B, H, T, head_dim)"),
                "Each query's output is a weighted average of the values it is allowed to see."};
    case 10:
        return {"transpose back, concatenate", {{7, ".transpose(1, 2).contiguous().view(B, T, C)"}},
                sh("(B, H, T, head_dim)"), sh("(B, T, C)"),
                "The heads' outputs are laid side by side again: H × head_dim = C channels per position."};
    default:
        return {"proj", {{8, "self.proj(y)"}}, sh("(B, T, C)"), sh("(B, T, C)"),
                "Linear(C, C) mixes the heads' channels: tensor in, same-shape tensor out."};
    }
}

// The model's forward above the block's (the recipe's ToyModel, as printed).
const char* const model_lines[] = {
    "def forward(self, tok):  # the model",
    "    x = self.wte(tok) + self.wpe(torch.arange(tok.shape[1]))",
    "    for block in self.h:",
    "        x = x + block(x)",
};
constexpr int model_line_count = 4;
const char* const embeddings_code = "self.wte(tok) + self.wpe(torch.arange(tok.shape[1]))";
const char* const residual_code = "x + block(x)";

// nanoGPT's GPT.forward and Block.forward, as printed: the block's attention reads ln_1 of
// the residual stream, and the MLP follows it.
const char* const gpt_lines[] = {
    "def forward(self, tok):  # GPT",
    "    x = self.wte(tok) + self.wpe(torch.arange(tok.shape[1]))",
    "    for block in self.h:",
    "        x = x + block.attn(block.ln_1(x))",
    "        x = x + block.mlp(block.ln_2(x))",
};
constexpr int gpt_line_count = 5;

// A GPT layer's first and last step: where x comes from, and where the output goes.
void gpt_walk_step(const AppState& s, int step, WalkStep& st) {
    for (Span& sp : st.spans) sp.line += gpt_line_count;
    const int L = shown_model(s)->model->config.n_layer, l = s.shown.layer;
    const std::string layer = "layer " + std::to_string(l);
    if (step == 0) {
        st.title = "x = ln_1(residual stream) of " + layer;
        st.spans = {{3, "block.ln_1(x)"}};
        st.why = (l == 0 ? std::string("The embeddings wte[token] + wpe[position]")
                         : "The residual stream after layer " + std::to_string(l - 1)) +
                 ", each row normalized by ln_1 (mean 0, variance 1, weight and bias): x, one row per token.";
    }
    if (step == walk_last_step) {
        st.spans.push_back({3, "x + block.attn("});
        st.spans.push_back({4, "x + block.mlp(block.ln_2(x))"});
        st.why += " Then the residual x + attn(ln_1(x)), and the MLP x + mlp(ln_2(x)): " +
                  (l + 1 < L ? "layer " + std::to_string(l + 1) + "'s residual stream."
                             : std::string("ln_f and the logits over the vocabulary (wte, tied)."));
    }
}

// A toy model's block: its first and last step say where h comes from and where it goes.
void toy_walk_step(const AppState& s, int step, WalkStep& st) {
    for (Span& sp : st.spans) sp.line += model_line_count;
    const int L = shown_model(s)->model->config.n_layer, l = s.shown.layer;
    const std::string block = "block " + std::to_string(l);
    if (step == 0) {
        if (l == 0) {
            st.title = "the embeddings wte + wpe";
            st.spans = {{1, embeddings_code}};
            st.why = "x = wte[token] + wpe[position]: each position's letter picks a row of wte and its position a row "
                     "of wpe; their sum is block 0's input, one row per token (BOS ^ first).";
        } else {
            st.title = "block " + std::to_string(l) + "'s input h + attn(h)";
            st.spans = {{3, residual_code}};
            st.why = "Block " + std::to_string(l) + " reads the residual stream: block " + std::to_string(l - 1) +
                     "'s input plus its attention output, so what block " + std::to_string(l - 1) +
                     " found is added to the embeddings, not put in their place.";
        }
    }
    if (step == walk_last_step) {
        st.spans.push_back({3, residual_code});
        st.why += l + 1 < L ? " Then the residual: h + attn(h) is block " + std::to_string(l + 1) + "'s input."
                            : " Then the residual: h + attn(h), " + block + "'s output, goes to the task heads.";
    }
}

} // namespace

std::vector<std::string> code_lines(const AppState& s) {
    std::vector<std::string> lines = lesson_code_lines(s.config.applied);
    std::visit(Overload{[&](const GptModel&) {
                            lines[0] = "def forward(self, x):  # block.attn: CausalSelfAttention";
                            lines.insert(lines.begin(), gpt_lines, gpt_lines + gpt_line_count);
                        },
                        [&](const ToyModel&) {
                            lines[0] = "def forward(self, x):  # block(x): SelfAttention";
                            lines.insert(lines.begin(), model_lines, model_lines + model_line_count);
                        },
                        [](const auto&) {}},
               s.shown.source);
    return lines;
}

WalkStep walk_step(const AppState& s, int step) {
    WalkStep st = lesson_walk_step(step, s.config.applied, !s.tokens.applied.empty());
    std::visit(Overload{[&](const GptModel&) { gpt_walk_step(s, step, st); }, [&](const ToyModel&) { toy_walk_step(s, step, st); },
                        [](const auto&) {}},
               s.shown.source);
    return st;
}

} // namespace attnviz
