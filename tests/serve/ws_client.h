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

    // Connects to HOST:port, asks for `path` with the subprotocol; true on "101 Switching
    // Protocols". `timeout_ms` bounds the whole handshake.
    bool connect(const std::string& host, int port, const std::string& path = "/follow",
                 const std::string& protocol = "attnviz-follow", int timeout_ms = 2000);
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
};

// GET `path` on 127.0.0.1:port with the raw path as given (no encoding); the whole response
// (status line, headers, body), "" when the connection failed.
std::string http_get(int port, const std::string& path, int timeout_ms = 2000);

// A port that was free a moment ago on 127.0.0.1.
int free_port();

// Waits until `pred` holds, for at most `ms`: its last answer.
template <class Pred> bool eventually(Pred pred, int ms = 2000) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return pred();
}

} // namespace attnviz_test
