// serve_address.cpp: see serve_address.h.
#include "serve_address.h"
#include "follow_guard.h"
#include "config.h"
#include "text_util.h"
#include <arpa/inet.h>
#include <sys/socket.h>
#include <cstring>
#include <cerrno>
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

bool parse_serve_limits(const std::string& per_address, const std::vector<std::string>& allow_hosts, ServeConfig& c,
                        std::string& error) {
    int64_t v = 0;
    std::string why;
    if (!per_address.empty()) {
        if (!parse_int(per_address, "--per-address", 0, 1000, v, why)) {
            error = "--per-address " + quote(per_address, 40) +
                    " is not a number of pages; use 0 to 1000 (the default is 8; 0 for no limit)";
            return false;
        }
        c.per_address = int(v);
    }
    for (const std::string& h : allow_hosts) {
        if (h.find(':') != std::string::npos || host_name_of(h).empty()) {
            error = "--allow-host " + quote(h, 60) +
                    " is not a host name; give the name pages use for this machine, such as laptop.school.lan, "
                    "without a port";
            return false;
        }
        c.allow_hosts.push_back(h);
    }
    return true;
}

std::string url_with_code(const std::string& url, const std::string& code) {
    return code.empty() ? url : url + "?code=" + code;
}

// Binds a plain socket to the address and port once, to name what is wrong in one sentence
// before libwebsockets tries (it only logs a line).
bool check_bind(const ServeConfig& c, std::string& error) {
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(c.port));
    if (::inet_pton(AF_INET, c.bind.c_str(), &a.sin_addr) != 1) {
        error = "--bind " + c.bind + " is not an IPv4 address; use one of this machine's addresses or 0.0.0.0";
        return false;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        error = std::string("cannot open a socket (") + std::strerror(errno) + ")";
        return false;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const int r = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    const int e = errno;
    ::close(fd);
    if (r == 0) return true;
    const std::string port = std::to_string(c.port);
    if (e == EADDRINUSE)
        error = "port " + port + " is in use on " + c.bind + "; choose another with --port, such as " +
                std::to_string(c.port == 65535 ? 8642 : c.port + 1);
    else if (e == EADDRNOTAVAIL)
        error = "--bind " + c.bind + " is not an address of this machine; use one that ip -4 addr lists, or 0.0.0.0";
    else if (e == EACCES)
        error = "port " + port + " needs root; use a port from 1024 to 65535, such as 8642";
    else
        error = "cannot listen on " + c.bind + ":" + port + " (" + std::strerror(e) + "); choose another --port or --bind";
    return false;
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
