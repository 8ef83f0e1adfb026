#include "emulator/gdb/gdb_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "emulator/gdb/x86_registers.hpp"

namespace padlock::emu::gdb {

namespace {

// Linux signal n (1..31) -> gdb's number (gdb's include/gdb/signals.def, the numbers the
// protocol carries). SIGSTKFLT has none: gdb's "unknown signal", 143.
constexpr int kLinuxToGdb[32] = {0,   1,  2,  3,  4,  5,  6,  10, 8,  9,  30, 11, 31, 13, 14, 15,
                                 143, 20, 19, 17, 18, 21, 22, 16, 24, 25, 26, 27, 28, 23, 32, 12};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const char kHex[] = "0123456789abcdef";

std::string to_hex(const uint8_t* p, size_t n) {
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = kHex[p[i] >> 4];
    s[2 * i + 1] = kHex[p[i] & 15];
  }
  return s;
}

bool from_hex(const std::string& s, size_t pos, size_t n, uint8_t* out) {
  if (pos + 2 * n > s.size()) return false;
  for (size_t i = 0; i < n; ++i) {
    const int hi = hex_digit(s[pos + 2 * i]), lo = hex_digit(s[pos + 2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

// A hex number at s[pos...], stopping at the first non-hex character; pos moves past it.
bool parse_hex(const std::string& s, size_t& pos, uint64_t& v) {
  v = 0;
  const size_t start = pos;
  while (pos < s.size() && hex_digit(s[pos]) >= 0) v = v << 4 | hex_digit(s[pos++]);
  return pos > start;
}

std::string hex_byte(int v) {
  char b[3] = {kHex[(v >> 4) & 15], kHex[v & 15], 0};
  return b;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::string hex_id(int id) {
  char b[16];
  std::snprintf(b, sizeof b, "%x", static_cast<unsigned>(id));
  return b;
}

}  // namespace

// c, s, C sig, S sig at p[pos] (a packet or a vCont action).
Resume resume_action(const std::string& p, size_t pos) {
  Resume r;
  const char a = pos < p.size() ? p[pos] : 'c';
  r.kind = (a == 's' || a == 'S') ? Resume::Kind::Step : Resume::Kind::Continue;
  if (a == 'C' || a == 'S') {
    uint64_t sig = 0;
    ++pos;
    parse_hex(p, pos, sig);
    r.linux_signal = from_gdb_signal(static_cast<int>(sig));
  }
  return r;
}

int to_gdb_signal(int s) {
  return s >= 0 && s < 32 ? kLinuxToGdb[s] : 143;
}

int from_gdb_signal(int g) {
  for (int s = 0; s < 32; ++s) {
    if (kLinuxToGdb[s] == g) return s;
  }
  return 0;
}

std::string frame_packet(const std::string& payload) {
  std::string out = "$";
  unsigned sum = 0;
  for (char c : payload) {
    if (c == '#' || c == '$' || c == '}' || c == '*') {
      out += '}';
      sum += '}';
      c = static_cast<char>(c ^ 0x20);
    }
    out += c;
    sum += static_cast<uint8_t>(c);
  }
  return out + "#" + hex_byte(static_cast<int>(sum & 0xFF));
}

Server::Server(int port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error(std::string("gdb: socket: ") + strerror(errno));
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      listen(listen_fd_, 1) != 0) {
    const int e = errno;
    close(listen_fd_);
    listen_fd_ = -1;
    throw std::runtime_error("gdb: cannot listen on port " + std::to_string(port) + ": " +
                             strerror(e));
  }
  socklen_t len = sizeof a;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
}

Server::~Server() {
  close_connection();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void Server::close_connection() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Resume Server::attach(Target& t) {
  target_ = &t;
  while (fd_ < 0) {
    if (!wait_readable(listen_fd_)) {
      close(listen_fd_);
      listen_fd_ = -1;
      return Resume{Resume::Kind::Detach, 0};
    }
    fd_ = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd_ < 0 && errno != EINTR && errno != EAGAIN) {
      throw std::runtime_error(std::string("gdb: accept: ") + strerror(errno));
    }
  }
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // One gdb: later connections are refused.
  close(listen_fd_);
  listen_fd_ = -1;
  last_stop_ = Stop{};
  last_stop_.thread = t.threads().empty() ? 0 : t.current_thread();
  return loop(t);
}

Resume Server::serve(Target& t, const Stop& stop) {
  last_stop_ = stop;
  last_stop_.thread = t.threads().empty() ? 0 : t.current_thread();
  if (fd_ < 0) return Resume{};
  send(stop_reply());
  return loop(t);
}

void Server::exited(int code) {
  if (fd_ < 0) return;
  send(std::string("W").append(hex_byte(code & 0xFF)));
  close_connection();
}

void Server::killed(int linux_signal) {
  if (fd_ < 0) return;
  send(std::string("X").append(hex_byte(to_gdb_signal(linux_signal))));
  close_connection();
}

bool Server::interrupt_requested() {
  if (fd_ < 0) return false;
  bool seen = false;
  char buf[256];
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN)) break;
    const ssize_t n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == 0x03)
        seen = true;
      else
        pending_ += buf[i];
    }
  }
  return seen;
}

bool Server::wait_readable(int fd) {
  // In slices: a signal that lands just before poll() would otherwise leave it waiting.
  constexpr int kSliceMs = 100;
  for (;;) {
    if (target_ != nullptr && target_->ending()) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, kSliceMs) == 1) return true;
  }
}

bool Server::read_packet(std::string& out) {
  // State: skip to '$', take the payload to '#', then two checksum digits.
  std::string raw;
  bool in_packet = false;
  int sum_digits = -1;
  for (;;) {
    char c;
    if (!pending_.empty()) {
      c = pending_[0];
      pending_.erase(0, 1);
    } else {
      if (!wait_readable(fd_)) return false;
      const ssize_t n = recv(fd_, &c, 1, 0);
      if (n == 0) return false;
      if (n < 0) {
        if (errno == EINTR) continue;
        return false;
      }
    }
    if (!in_packet) {
      if (c == '$') {
        in_packet = true;
        raw.clear();
      }
      // '+', '-' and a stray ^C between packets need no answer.
      continue;
    }
    if (sum_digits < 0) {
      if (c == '#')
        sum_digits = 0;
      else
        raw += c;
      continue;
    }
    if (++sum_digits == 2) break;
  }
  if (!no_ack_) ::send(fd_, "+", 1, MSG_NOSIGNAL);
  // Unescape ('}' x ^ 0x20) and expand run-length encoding ('*' n-29 repeats).
  out.clear();
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '}' && i + 1 < raw.size()) {
      out += static_cast<char>(raw[++i] ^ 0x20);
    } else if (raw[i] == '*' && i + 1 < raw.size() && !out.empty()) {
      out.append(static_cast<size_t>(raw[++i] - 29), out.back());
    } else {
      out += raw[i];
    }
  }
  return true;
}

void Server::send(const std::string& payload) {
  if (fd_ < 0) return;
  const std::string f = frame_packet(payload);
  for (;;) {
    size_t done = 0;
    while (done < f.size()) {
      const ssize_t n = ::send(fd_, f.data() + done, f.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close_connection();
        return;
      }
      done += static_cast<size_t>(n);
    }
    if (no_ack_) return;
    // Wait for the acknowledgement; '-' asks for the packet again.
    char c = 0;
    for (;;) {
      if (!wait_readable(fd_)) return;  // the run ends: the loop's next read says so
      const ssize_t n = recv(fd_, &c, 1, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close_connection();
        return;
      }
      if (c == '+' || c == '-') break;
      if (c == '$') {  // gdb sent a packet without acknowledging: keep it
        pending_ += c;
        return;
      }
    }
    if (c == '+') return;
  }
}

// Hg ID (registers of that thread), Hc ID (what continues: every thread always does), T ID
// (is it alive). ID is hex, 0 any thread, -1 all.
std::string Server::thread_packet(Target& t, const std::string& p) {
  const std::vector<int> ids = t.threads();
  if (ids.empty()) return "OK";  // one thread
  const size_t at = p[0] == 'H' ? 2 : 1;
  if (p[0] == 'H' && (p.size() < 2 || p[1] != 'g')) return "OK";
  int id = 0;
  if (p.compare(at, std::string::npos, "-1") != 0) {
    size_t pos = at;
    uint64_t v = 0;
    if (!parse_hex(p, pos, v) || pos != p.size()) return "E01";
    id = static_cast<int>(v);
  }
  if (p[0] == 'T') {
    for (int k : ids) {
      if (k == id) return "OK";
    }
    return "E01";
  }
  return t.select_thread(id < 0 ? 0 : id) ? "OK" : "E01";
}

std::string Server::stop_reply() const {
  const Stop& s = last_stop_;
  std::string r = std::string("T").append(hex_byte(to_gdb_signal(s.linux_signal)));

  switch (s.kind) {
    case Stop::Kind::SwBreak:
      r += "swbreak:;";
      break;
    case Stop::Kind::HwBreak:
      r += "hwbreak:;";
      break;
    case Stop::Kind::Watch: {
      static const char* const kNames[] = {"watch", "rwatch", "awatch"};
      char a[32];
      std::snprintf(a, sizeof a, "%llx", static_cast<unsigned long long>(s.watch_addr));
      r += std::string(kNames[static_cast<int>(s.watch)]) + ":" + a + ";";
      break;
    }
    case Stop::Kind::Signal:
    case Stop::Kind::Step:
      break;
  }
  return r + "thread:" + (s.thread > 0 ? hex_id(s.thread) : "1") + ";";
}

Resume Server::loop(Target& t) {
  std::string p;
  while (fd_ >= 0) {
    if (!read_packet(p)) {
      // gdb went away: the guest runs on as if detached.
      close_connection();
      return Resume{Resume::Kind::Detach, 0};
    }
    Resume r;
    bool resumed = false;
    const std::string reply = handle(t, p, r, resumed);
    if (resumed) {
      if (r.kind == Resume::Kind::Detach) {
        send("OK");
        close_connection();
      } else if (r.kind == Resume::Kind::Kill && p[0] != 'k') {
        send("OK");  // vKill answers; k does not
      }
      return r;
    }
    send(reply);
    if (start_no_ack_) no_ack_ = true;
  }
  return Resume{Resume::Kind::Detach, 0};
}

// One packet; the answer, or `resumed` with what gdb asked for.
std::string Server::handle(Target& t, const std::string& p, Resume& resume, bool& resumed) {
  if (p.empty()) return "";
  const auto regs = x86_registers(t.guest64());
  auto reg_bytes = [&](size_t i) { return static_cast<size_t>(regs[i].bits / 8); };
  switch (p[0]) {
    case '?':
      return stop_reply();
    case 'g': {
      std::string s;
      uint8_t buf[16];
      for (size_t i = 0; i < regs.size(); ++i) {
        t.read_register(i, buf);
        s += to_hex(buf, reg_bytes(i));
      }
      return s;
    }
    case 'G': {
      size_t pos = 1;
      uint8_t buf[16];
      for (size_t i = 0; i < regs.size() && pos < p.size(); ++i) {
        if (!from_hex(p, pos, reg_bytes(i), buf)) return "E01";
        t.write_register(i, buf);
        pos += 2 * reg_bytes(i);
      }
      return "OK";
    }
    case 'p': {
      size_t pos = 1;
      uint64_t n = 0;
      if (!parse_hex(p, pos, n)) return "E01";
      if (n >= regs.size()) return "E01";
      uint8_t buf[16];
      t.read_register(n, buf);
      return to_hex(buf, reg_bytes(n));
    }
    case 'P': {
      size_t pos = 1;
      uint64_t n = 0;
      if (!parse_hex(p, pos, n) || pos >= p.size() || p[pos] != '=' || n >= regs.size()) {
        return "E01";
      }
      uint8_t buf[16];
      if (!from_hex(p, pos + 1, reg_bytes(n), buf)) return "E01";
      t.write_register(n, buf);
      return "OK";
    }
    case 'm': {
      size_t pos = 1;
      uint64_t addr = 0, len = 0;
      if (!parse_hex(p, pos, addr) || pos >= p.size() || p[pos++] != ',' ||
          !parse_hex(p, pos, len)) {
        return "E01";
      }
      std::vector<uint8_t> buf(std::min<uint64_t>(len, 0x4000));
      const size_t n = t.read_memory(addr, buf.data(), buf.size());
      if (n == 0 && len != 0) return "E14";  // EFAULT
      return to_hex(buf.data(), n);
    }
    case 'M':
    case 'X': {
      size_t pos = 1;
      uint64_t addr = 0, len = 0;
      if (!parse_hex(p, pos, addr) || pos >= p.size() || p[pos++] != ',' ||
          !parse_hex(p, pos, len) || pos >= p.size() || p[pos++] != ':') {
        return "E01";
      }
      std::vector<uint8_t> buf(len);
      if (p[0] == 'M') {
        if (!from_hex(p, pos, len, buf.data())) return "E01";
      } else {
        if (p.size() - pos != len) return "E01";
        std::memcpy(buf.data(), p.data() + pos, len);
      }
      return len == 0 || t.write_memory(addr, buf.data(), len) ? "OK" : "E14";
    }
    case 'Z':
    case 'z': {
      // Z0 software / Z1 hardware breakpoint; Z2 write, Z3 read, Z4 access watchpoint.
      const bool insert = p[0] == 'Z';
      size_t pos = 1;
      uint64_t type = 0, addr = 0, len = 0;
      if (!parse_hex(p, pos, type) || pos >= p.size() || p[pos++] != ',' ||
          !parse_hex(p, pos, addr) || pos >= p.size() || p[pos++] != ',' ||
          !parse_hex(p, pos, len)) {
        return "E01";
      }
      bool ok = false;
      if (type <= 1) {
        ok = insert ? t.insert_breakpoint(addr) : t.remove_breakpoint(addr);
      } else if (type <= 4) {
        const WatchKind k = type == 2   ? WatchKind::Write
                            : type == 3 ? WatchKind::Read
                                        : WatchKind::Access;
        ok = insert ? t.insert_watchpoint(k, addr, len) : t.remove_watchpoint(k, addr, len);
      } else {
        return "";
      }
      return ok ? "OK" : "E01";
    }
    case 'c':
    case 's':
    case 'C':
    case 'S': {
      // An address to resume at is not supported (gdb does not send one).
      resume = resume_action(p, 0);
      resumed = true;
      return "";
    }
    case 'D':
      resume.kind = Resume::Kind::Detach;
      resumed = true;
      return "";
    case 'k':
      resume.kind = Resume::Kind::Kill;
      resumed = true;
      return "";
    case 'H':
    case 'T':
      return thread_packet(t, p);
    case 'q':
    case 'Q':
    case 'v':
      break;
    default:
      return "";
  }

  if (starts_with(p, "qSupported")) {
    return "PacketSize=4000;qXfer:features:read+;qXfer:auxv:read+;qXfer:exec-file:read+;"
           "swbreak+;hwbreak+;QStartNoAckMode+;vContSupported+";
  }
  if (p == "QStartNoAckMode") {
    start_no_ack_ = true;  // after this reply is acknowledged (loop)
    return "OK";
  }
  if (p == "qC") return t.threads().empty() ? "QC1" : "QC" + hex_id(t.current_thread());
  if (p == "qfThreadInfo") {
    const std::vector<int> ids = t.threads();
    if (ids.empty()) return "m1";
    std::string r = "m";
    for (size_t i = 0; i < ids.size(); ++i) r += (i ? "," : "") + hex_id(ids[i]);
    return r;
  }
  if (p == "qsThreadInfo") return "l";
  if (starts_with(p, "qAttached")) return "1";  // gdb detaches on quit: the guest runs on
  if (p == "qSymbol::") return "OK";
  if (p == "vCont?") return "vCont;c;C;s;S";
  if (starts_with(p, "vCont;")) {
    // All-stop with one thread: the first action decides.
    resume = resume_action(p, 6);
    resumed = true;
    return "";
  }
  if (starts_with(p, "vKill")) {
    resume.kind = Resume::Kind::Kill;
    resumed = true;
    return "";
  }
  if (starts_with(p, "qXfer:")) {
    // qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH
    const size_t o_end = p.find(':', 6);
    if (o_end == std::string::npos || p.compare(o_end, 6, ":read:") != 0) return "";
    const std::string object = p.substr(6, o_end - 6);
    const size_t a_begin = o_end + 6;
    const size_t a_end = p.find(':', a_begin);
    if (a_end == std::string::npos) return "E01";
    size_t pos = a_end + 1;
    uint64_t offset = 0, length = 0;
    if (!parse_hex(p, pos, offset) || pos >= p.size() || p[pos++] != ',' ||
        !parse_hex(p, pos, length)) {
      return "E01";
    }
    return xfer(t, object, p.substr(a_begin, a_end - a_begin), offset, length);
  }
  return "";  // not supported: gdb falls back or does without
}

std::string Server::xfer(Target& t, const std::string& object, const std::string& annex,
                         uint64_t offset, uint64_t length) {
  std::string data;
  if (object == "features" && annex == "target.xml") {
    data = x86_target_xml(t.guest64());
  } else if (object == "auxv" && annex.empty()) {
    data = t.auxv();
  } else if (object == "exec-file") {
    data = t.exec_file();
  } else {
    return "";
  }
  if (offset >= data.size()) return "l";
  const std::string part = data.substr(offset, length);
  return (offset + part.size() >= data.size() ? "l" : "m") + part;
}

}  // namespace padlock::emu::gdb
