// get_command.cpp: `attnviz get`; see get_command.h.
#include "get_command.h"
#include "hub_download.h"
#include "options.h" // usage_error
#include <chrono>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace attnviz {

namespace {

struct GetArgs {
    std::string name;            // gpt2, openai-community/gpt2, ORG/NAME
    std::string revision = "main";
};

GetArgs args; // filled by CLI11 while parsing, read once by run_get_command

std::string megabytes(int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MB", double(bytes) / 1e6);
    return buf;
}

std::string duration(double seconds) {
    if (!(seconds >= 0) || seconds > 359999) return "--:--";
    const long s = long(seconds + 0.5);
    char buf[32];
    if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

// The progress on stderr: a redrawn bar on a terminal, else a line every 5 seconds.
struct ProgressPrinter {
    bool terminal = isatty(STDERR_FILENO) == 1;
    bool drew = false;
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

    void operator()(const HubProgress& p) {
        const int64_t total = p.all_total > 0 ? p.all_total : p.file_total;
        const int64_t done = p.all_total > 0 ? p.all_done : p.file_done;
        const double rate = p.bytes_per_second;
        const double left = rate > 0 && total > 0 ? double(total - done) / rate : -1;
        const std::string numbers = megabytes(done) + " / " + megabytes(total) + "  " + megabytes(int64_t(rate)) +
                                    "/s  " + duration(left) + " left";
        if (terminal) {
            constexpr int width = 30;
            const int filled = total > 0 ? int(double(done) / double(total) * width) : 0;
            std::string bar(size_t(std::min(filled, width)), '#');
            bar.resize(width, '.');
            std::fprintf(stderr, "\r%-18.18s [%s] %s   ", p.file.c_str(), bar.c_str(), numbers.c_str());
            std::fflush(stderr);
            drew = true;
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now - last < std::chrono::seconds(5)) return;
        last = now;
        std::fprintf(stderr, "attnviz get: %s, %s\n", p.file.c_str(), numbers.c_str());
    }
    void finish() {
        if (drew) std::fprintf(stderr, "\n");
        drew = false;
    }
};

} // namespace

void add_get_command(CLI::App& app) {
    CLI::App* sub = app.add_subcommand("get", "Download a GPT-2 family model from the Hugging Face Hub into its cache");
    sub->add_option("name", args.name, "the Hub model id: gpt2, distilgpt2, gpt2-medium, openai-community/gpt2, ORG/NAME")
        ->type_name("NAME")
        ->required();
    sub->add_option("--revision", args.revision, "a branch, tag or 40-hex commit (default main)")->type_name("REV");
    sub->footer("Prints the snapshot folder, which --model NAME then opens. The cache is Python's huggingface_hub's:\n"
                "$HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub. HF_ENDPOINT sets the Hub,\n"
                "HF_TOKEN is sent to it for gated or private models, HF_HUB_OFFLINE=1 uses only the cache.\n"
                "An interrupted download resumes where it stopped.");
}

int run_get_command(const CLI::App& sub) {
    if (sub.get_name() != "get") return -1;
    const HubGetOptions options = hub_options_from_env(args.name, args.revision);
    ProgressPrinter printer;
    const HubGetResult r = hub_get(options, [&](const HubProgress& p) { printer(p); });
    printer.finish();
    if (!r.ok) return usage_error(r.error);
    std::cout << r.snapshot << '\n';
    std::cout.flush();
    if (!std::cout) {
        std::fprintf(stderr, "attnviz: could not write the snapshot folder to stdout\n");
        return 1;
    }
    return 0;
}

} // namespace attnviz
