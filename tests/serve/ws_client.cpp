// ws_client.cpp: see ws_client.h.
#include "ws_client.h"
#include <arpa/inet.h>
#include <chrono>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace attnviz_test {

namespace {

using Clock = std::chrono::steady_clock;

int connect_tcp(const std::string& host, int port, int rcvbuf = 0) {
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) return -1;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf); // before connect: the window
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

bool send_all(int fd, const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (n <= 0) return false;
        done += size_t(n);
    }
    return true;
}

int ms_left(Clock::time_point end) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    return left > 0 ? int(left) : 0;
}

} // namespace

WsClient::~WsClient() { close(); }

WsClient::WsClient(WsClient&& o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)) { o.fd_ = -1; }

void WsClient::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    buf_.clear();
}

bool WsClient::fill(int timeout_ms) {
    if (fd_ < 0) return false;
    pollfd p {fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char tmp[65536];
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
        ::close(fd_);
        fd_ = -1;
        return false;
    }
    buf_.append(tmp, size_t(n));
    return true;
}

bool WsClient::connect(const std::string& host, int port, const std::string& path, const std::string& protocol,
                       int timeout_ms) {
    close();
    fd_ = connect_tcp(host, port, rcvbuf_);
    if (fd_ < 0) return false;
    const std::string hostport = host + ":" + std::to_string(port);
    const std::string h = host_.empty() ? hostport : host_, o = origin_.empty() ? "http://" + hostport : origin_;
    std::string req = "GET " + path + " HTTP/1.1\r\n";
    if (h != "-") req += "Host: " + h + "\r\n";
    if (o != "-") req += "Origin: " + o + "\r\n";
    req += "Upgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
    if (!protocol.empty()) req += "Sec-WebSocket-Protocol: " + protocol + "\r\n";
    req += "\r\n";
    if (!send_all(fd_, req)) return false;
    const auto end = Clock::now() + std::chrono::milliseconds(timeout_ms);
    size_t head_end;
    while ((head_end = buf_.find("\r\n\r\n")) == std::string::npos)
        if (!fill(ms_left(end))) return false;
    head_ = buf_.substr(0, head_end);
    buf_.erase(0, head_end + 4);
    return head_.compare(0, 12, "HTTP/1.1 101") == 0;
}

bool WsClient::send(const std::string& payload, int opcode) {
    if (fd_ < 0) return false;
    std::string f;
    f += char(0x80 | opcode);
    const size_t n = payload.size();
    if (n < 126) {
        f += char(0x80 | n);
    } else if (n < 65536) {
        f += char(0x80 | 126);
        f += char(n >> 8), f += char(n & 0xff);
    } else {
        f += char(0x80 | 127);
        for (int i = 7; i >= 0; --i) f += char((uint64_t(n) >> (8 * i)) & 0xff);
    }
    const unsigned char mask[4] = {0x12, 0x34, 0x56, 0x78};
    for (unsigned char m : mask) f += char(m);
    for (size_t i = 0; i < n; ++i) f += char(payload[i] ^ char(mask[i % 4]));
    return send_all(fd_, f);
}

int WsClient::read(std::string& out, int timeout_ms) {
    const auto end = Clock::now() + std::chrono::milliseconds(timeout_ms);
    out.clear();
    int message_opcode = -1;
    for (;;) {
        // A whole frame in buf_?
        while (buf_.size() < 2)
            if (!fill(ms_left(end))) return -1;
        const auto b0 = static_cast<unsigned char>(buf_[0]), b1 = static_cast<unsigned char>(buf_[1]);
        size_t len = b1 & 0x7f, at = 2;
        if (len == 126) {
            while (buf_.size() < 4)
                if (!fill(ms_left(end))) return -1;
            len = (size_t(static_cast<unsigned char>(buf_[2])) << 8) | static_cast<unsigned char>(buf_[3]);
            at = 4;
        } else if (len == 127) {
            while (buf_.size() < 10)
                if (!fill(ms_left(end))) return -1;
            len = 0;
            for (int i = 0; i < 8; ++i) len = (len << 8) | static_cast<unsigned char>(buf_[size_t(2 + i)]);
            at = 10;
        }
        if (b1 & 0x80) at += 4; // a server never masks; tolerated
        while (buf_.size() < at + len)
            if (!fill(ms_left(end))) return -1;
        const std::string payload = buf_.substr(at, len);
        buf_.erase(0, at + len);
        const int opcode = b0 & 0x0f;
        if (opcode == 9) { // ping: pong
            std::string pong = payload;
            send(pong, 10);
            continue;
        }
        if (opcode == 10) continue;
        if (opcode == 8) {
            out = payload;
            return 8;
        }
        if (opcode != 0) message_opcode = opcode;
        out += payload;
        if (b0 & 0x80) return message_opcode;
    }
}

std::string http_get(int port, const std::string& path, int timeout_ms, const std::string& host) {
    const int fd = connect_tcp("127.0.0.1", port);
    if (fd < 0) return "";
    const std::string req = "GET " + path + " HTTP/1.1\r\n" + (host == "-" ? "" : "Host: " + host + "\r\n") + "Connection: close\r\n\r\n";
    std::string got;
    if (send_all(fd, req)) {
        const auto end = Clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            pollfd p {fd, POLLIN, 0};
            if (::poll(&p, 1, ms_left(end)) <= 0) break;
            char tmp[65536];
            const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
            if (n <= 0) break;
            got.append(tmp, size_t(n));
        }
    }
    ::close(fd);
    return got;
}

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    socklen_t n = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
    ::close(fd);
    return ntohs(a.sin_port);
}

} // namespace attnviz_test
