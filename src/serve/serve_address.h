// serve_address.h: what --serve needs besides the server: its options checked into a
// ServeConfig, the addresses the pages can reach, the site folder and a QR code of a URL.
#pragma once
#include "follow_server.h"
#include <string>
#include <vector>

namespace attnviz {

// --port (1..65535), --bind (a dotted IPv4 address) and --max-clients (1..1000) as given on
// the command line ("" for not given); false with one sentence in `error`.
bool parse_serve_options(const std::string& port, const std::string& bind, const std::string& max_clients,
                         ServeConfig& c, std::string& error);

// --per-address (0..1000; "" for not given) and each --allow-host NAME (a host name or an
// address, no port); false with one sentence in `error`.
bool parse_serve_limits(const std::string& per_address, const std::vector<std::string>& allow_hosts, ServeConfig& c,
                        std::string& error);

// The URL a page opens with the class code in it (the QR code's): URL?code=CODE, or URL alone
// without a code.
std::string url_with_code(const std::string& url, const std::string& code);

// Binds a plain socket to c's address and port once, to name what is wrong in one sentence
// before libwebsockets tries (it only logs a line): false with the sentence in `error`.
bool check_bind(const ServeConfig& c, std::string& error);

// This machine's IPv4 addresses that are up and not loopback, in the order the system lists them.
std::vector<std::string> lan_addresses();
// The URLs a page opens: http://ADDR:PORT/ for the bound address, or for each LAN address
// when bound to 0.0.0.0 (127.0.0.1 when there is none).
std::vector<std::string> serve_urls(const ServeConfig& c);

// The web page's folder: `given` when not empty; else beside the binary (DIR/site), the
// installed one (DIR/../share/attnviz/site) or the source tree's make web output
// (DIR/../build-web/site), the first that holds index.html; "" when none does.
std::string find_site_dir(const std::string& given);

// A QR code of `text` (error correction M): size × size modules, row by row, 1 = dark.
// Empty when the text does not fit a QR code.
struct QrCode {
    int size = 0;
    std::vector<unsigned char> modules;
};
QrCode make_qr(const std::string& text);

} // namespace attnviz
