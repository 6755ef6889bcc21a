// mock_hub_main.cpp: the mock Hub (mock_hub.h) as a program, for tests written in other
// languages (node) and the window's GUI tests. Serves until killed (SIGTERM, SIGINT).
//
//   mock_hub --repo ID=DIR [--repo ID=DIR ...] [--alias OLD=NEW ...] [--token T] [--slow]
//
//   --repo ID=DIR    serve the files of DIR as the Hub repository ID (e.g. tiny/gpt2=tests/data/hub/tiny-gpt2);
//                    *.safetensors are LFS files (302 to the storage listener), the rest small files
//   --alias OLD=NEW  OLD answers 307 to NEW, as the Hub renamed gpt2 to openai-community/gpt2
//   --token T        every Hub request needs "Authorization: Bearer T" (401 without)
//   --slow           file bytes in 16 KiB chunks, 100 ms apart (a download to watch or cancel)
//
// stdout: the Hub's port on the first line (HF_ENDPOINT=http://127.0.0.1:PORT), the storage
// listener's port on the second, then one line per repository: "ID COMMIT".
#include "mock_hub.h"
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

int main(int argc, char** argv) {
    attnviz_test::MockHub hub;
    std::string error;
    std::vector<std::string> ids;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        const std::string value = has_value ? argv[i + 1] : "";
        const size_t eq = value.find('=');
        if ((arg == "--repo" || arg == "--alias") && has_value && eq != std::string::npos && eq > 0) {
            ++i;
            if (arg == "--alias") {
                hub.add_alias(value.substr(0, eq), value.substr(eq + 1));
            } else if (!hub.add_repo(value.substr(0, eq), value.substr(eq + 1), error)) {
                std::fprintf(stderr, "%s\n", error.c_str());
                return 2;
            } else {
                ids.push_back(value.substr(0, eq));
            }
        } else if (arg == "--slow") {
            hub.set_slow(true); // file bytes in small chunks with pauses: a download to watch, or to cancel
        } else if (arg == "--token" && has_value) {
            hub.require_token(argv[++i]);
        } else {
            std::fprintf(stderr, "mock_hub: unknown argument '%s'; use --repo ID=DIR, --alias OLD=NEW, --token T\n",
                         arg.c_str());
            return 2;
        }
    }
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr); // the server's threads inherit the mask
    if (!hub.start(error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 2;
    }
    std::printf("%d\n%d\n", hub.port(), hub.storage_port());
    for (const std::string& id : ids) std::printf("%s %s\n", id.c_str(), hub.commit(id).c_str());
    std::fflush(stdout);
    int sig = 0;
    sigwait(&signals, &sig);
    hub.stop();
    return 0;
}
