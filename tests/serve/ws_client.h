// ws_client.h: a small blocking WebSocket (RFC 6455) and HTTP client over plain sockets, for
// the tests of attnviz --serve. Written apart from libwebsockets on purpose: the tests check
// the server against the protocol, not against the same library's client.
#pragma once
#include <chrono>
#include <string>
#include <thread>

namespace attnviz_test {

class WsClient {
public:
    WsClient() = default;
    ~WsClient();
    WsClient(const WsClient&) = delete;
    WsClient& operator=(const WsClient&) = delete;
    WsClient(WsClient&& o) noexcept;

    // Connects to HOST:port, asks for `path` with the subprotocol, with the Host header
    // HOST:port and the Origin http://HOST:port a browser sends for a page of the server
    // (unless set_headers changed them); true on "101 Switching Protocols". `timeout_ms`
    // bounds the whole handshake (generous: a refusal comes at once, an answer on a loaded
    // machine late). The response's head is in last_head().
    bool connect(const std::string& host, int port, const std::string& path = "/follow",
                 const std::string& protocol = "attnviz-follow", int timeout_ms = 10000);
    // The next connect's Host and Origin ("-" leaves the header out; "" is the default).
    void set_headers(const std::string& host, const std::string& origin) { host_ = host, origin_ = origin; }
    const std::string& last_head() const { return head_; }
    // The next connect's socket receive buffer (bytes; 0: the system's), as a slow laptop's.
    void set_receive_buffer(int bytes) { rcvbuf_ = bytes; }
    // A masked frame (opcode 1 text, 2 binary), unfragmented.
    bool send(const std::string& payload, int opcode = 1);
    // The next whole message: its opcode (1 text, 2 binary, 8 close, with the close frame's
    // payload in `out`), or -1 on a timeout or a closed socket. Pings are answered.
    int read(std::string& out, int timeout_ms);
    void close(); // the socket, without a close frame (a page that vanishes)
    bool is_open() const { return fd_ >= 0; }

private:
    bool fill(int timeout_ms); // more bytes into buf_
    int fd_ = -1;
    std::string buf_;
    std::string host_, origin_, head_;
    int rcvbuf_ = 0;
};

// GET `path` on 127.0.0.1:port with the raw path as given (no encoding); the whole response
// (status line, headers, body), "" when the connection failed. `host` is the Host header.
std::string http_get(int port, const std::string& path, int timeout_ms = 10000, const std::string& host = "127.0.0.1");

// A port that was free a moment ago on 127.0.0.1.
int free_port();

// Waits until `pred` holds, for at most `ms` (generous: a loaded machine is slow, not wrong):
// its last answer.
template <class Pred> bool eventually(Pred pred, int ms = 10000) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return pred();
}

} // namespace attnviz_test
