// serve_address.cpp: see serve_address.h.
#include "serve_address.h"
#include "config.h"
#include "text_util.h"
#include <arpa/inet.h>
#include <climits>
#include <cstdlib>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <qrencode.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnviz {

namespace {

bool has_index(const std::string& dir) {
    struct stat st {};
    return !dir.empty() && ::stat((dir + "/index.html").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string exe_dir() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    std::string p(buf, size_t(n));
    const size_t slash = p.rfind('/');
    return slash == std::string::npos ? "" : p.substr(0, slash);
}

} // namespace

bool parse_serve_options(const std::string& port, const std::string& bind, const std::string& max_clients,
                         ServeConfig& c, std::string& error) {
    int64_t v = 0;
    std::string why; // the core's sentence; these options say more
    if (!port.empty()) {
        if (!parse_int(port, "--port", 1, 65535, v, why)) {
            error = "--port " + quote(port, 40) + " is not a port; use a number from 1024 to 65535, such as 8642";
            return false;
        }
        c.port = int(v);
    }
    if (!bind.empty()) {
        in_addr a {};
        if (::inet_pton(AF_INET, bind.c_str(), &a) != 1) {
            error = "--bind " + quote(bind, 60) + " is not an IPv4 address; use one of this machine's addresses (ip -4 addr), "
                    "127.0.0.1 for this machine only, or 0.0.0.0 for every network";
            return false;
        }
        c.bind = bind;
    }
    if (!max_clients.empty()) {
        if (!parse_int(max_clients, "--max-clients", 1, 1000, v, why)) {
            error = "--max-clients " + quote(max_clients, 40) + " is not a number of pages; use 1 to 1000 (the default is 60)";
            return false;
        }
        c.max_clients = int(v);
    }
    return true;
}

std::vector<std::string> lan_addresses() {
    std::vector<std::string> out;
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (ifaddrs* i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
        char text[INET_ADDRSTRLEN] = {};
        const auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
        if (::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text)) out.emplace_back(text);
    }
    ::freeifaddrs(list);
    return out;
}

std::vector<std::string> serve_urls(const ServeConfig& c) {
    std::vector<std::string> hosts;
    if (c.bind == "0.0.0.0") hosts = lan_addresses();
    else hosts.push_back(c.bind);
    if (hosts.empty()) hosts.emplace_back("127.0.0.1");
    std::vector<std::string> urls;
    for (const std::string& h : hosts) urls.push_back("http://" + h + ":" + std::to_string(c.port) + "/");
    return urls;
}

std::string find_site_dir(const std::string& given) {
    if (!given.empty()) return given;
    const std::string dir = exe_dir();
    if (dir.empty()) return "";
    for (const std::string& d : {dir + "/site", dir + "/../share/attnviz/site", dir + "/../build-web/site"})
        if (has_index(d)) return d;
    return "";
}

QrCode make_qr(const std::string& text) {
    QrCode q;
    QRcode* code = QRcode_encodeString(text.c_str(), 0, QR_ECLEVEL_M, QR_MODE_8, 1);
    if (!code) return q;
    q.size = code->width;
    q.modules.resize(size_t(q.size) * size_t(q.size));
    for (size_t i = 0; i < q.modules.size(); ++i) q.modules[i] = code->data[i] & 1;
    QRcode_free(code);
    return q;
}

} // namespace attnviz
