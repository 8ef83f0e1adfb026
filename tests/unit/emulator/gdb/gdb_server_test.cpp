// The gdb remote protocol server (emulator/gdb/gdb_server.hpp) against a fake target over
// a real TCP connection: framing, acknowledgements, register and memory packets, break- and
// watchpoints, qXfer in pieces, resume actions and signal numbers. Real gdb drives the
// whole stub in tests/integration/test_gdb.py.
#include "emulator/gdb/gdb_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "emulator/gdb/x86_registers.hpp"

namespace padlock::emu::gdb {
namespace {

class FakeTarget : public Target {
 public:
  bool guest64() const override { return true; }
  int pid() const override { return 42; }
  void read_register(size_t regno, uint8_t* out) override {
    std::memset(out, 0, 16);
    out[0] = static_cast<uint8_t>(regno);
  }
  void write_register(size_t regno, const uint8_t* in) override {
    written_reg = static_cast<int>(regno);
    std::memcpy(&written_value, in, 8);
  }
  size_t read_memory(uint64_t addr, uint8_t* out, size_t len) override {
    // Readable: [0x1000, 0x1010) holding its own low address bytes.
    size_t n = 0;
    for (; n < len && addr + n >= 0x1000 && addr + n < 0x1010; ++n) out[n] = uint8_t(addr + n);
    return n;
  }
  bool write_memory(uint64_t addr, const uint8_t* in, size_t len) override {
    mem_addr = addr;
    mem.assign(in, in + len);
    return true;
  }
  bool insert_breakpoint(uint64_t addr) override {
    breaks.push_back(addr);
    return true;
  }
  bool remove_breakpoint(uint64_t) override { return true; }
  bool insert_watchpoint(WatchKind k, uint64_t addr, uint64_t len) override {
    watch_kind = k;
    watch_addr = addr;
    watch_len = len;
    return true;
  }
  bool remove_watchpoint(WatchKind, uint64_t, uint64_t) override { return true; }
  std::string auxv() override { return std::string("\x06\0\0\0#$}*", 8); }
  std::string exec_file() override { return "/bin/prog"; }

  int written_reg = -1;
  uint64_t written_value = 0;
  uint64_t mem_addr = 0;
  std::vector<uint8_t> mem;
  std::vector<uint64_t> breaks;
  WatchKind watch_kind = WatchKind::Write;
  uint64_t watch_addr = 0, watch_len = 0;
};

// A client speaking raw packets to the server running on another thread.
class Client {
 public:
  explicit Client(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;  // small packets at once, as gdb sends them
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  }
  ~Client() { close(fd_); }
  void raw(const std::string& s) {
    ASSERT_EQ(::send(fd_, s.data(), s.size(), 0), ssize_t(s.size()));
  }
  // Sends a packet, expects '+', returns the reply's payload (acknowledged).
  std::string ask(const std::string& payload, bool expect_reply = true) {
    raw(frame_packet(payload));
    EXPECT_EQ(get(), '+');
    return expect_reply ? reply() : "";
  }
  std::string reply() {
    char c;
    while ((c = get()) != '$') {
    }
    std::string body;
    while ((c = get()) != '#') body += c;
    const std::string sum = {get(), get()};
    raw("+");
    unsigned total = 0;
    for (char b : body) total += static_cast<uint8_t>(b);
    char want[3];
    std::snprintf(want, sizeof want, "%02x", total & 0xFF);
    EXPECT_EQ(sum, want) << body;
    // Undo the server's escapes for comparison.
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
      out += body[i] == '}' ? static_cast<char>(body[++i] ^ 0x20) : body[i];
    }
    return out;
  }

 private:
  char get() {
    char c = 0;
    EXPECT_EQ(recv(fd_, &c, 1, 0), 1);
    return c;
  }
  int fd_ = -1;
};

TEST(GdbFraming, ChecksumAndEscapes) {
  EXPECT_EQ(frame_packet("OK"), "$OK#9a");
  EXPECT_EQ(frame_packet(""), "$#00");
  // '#', '$', '}' and '*' travel as '}' and the byte XOR 0x20; the sum covers what is sent.
  EXPECT_EQ(frame_packet("a#b"),
            "$a}\x03"
            "b#43");  // 0x61 + 0x7d + 0x03 + 0x62 = 0x143
  EXPECT_EQ(frame_packet("*").substr(0, 3), "$}\x0a");
}

TEST(GdbSignals, LinuxAndGdbNumbersRoundTrip) {
  EXPECT_EQ(to_gdb_signal(11), 11);  // SIGSEGV
  EXPECT_EQ(to_gdb_signal(4), 4);    // SIGILL
  EXPECT_EQ(to_gdb_signal(7), 10);   // SIGBUS
  EXPECT_EQ(to_gdb_signal(10), 30);  // SIGUSR1
  EXPECT_EQ(to_gdb_signal(17), 20);  // SIGCHLD
  for (int s = 1; s < 32; ++s) {
    if (s != 16) EXPECT_EQ(from_gdb_signal(to_gdb_signal(s)), s) << s;  // SIGSTKFLT: none
  }
}

TEST(GdbResume, Actions) {
  EXPECT_EQ(resume_action("c", 0).kind, Resume::Kind::Continue);
  EXPECT_EQ(resume_action("s", 0).kind, Resume::Kind::Step);
  const Resume r = resume_action("vCont;C0b:1", 6);
  EXPECT_EQ(r.kind, Resume::Kind::Continue);
  EXPECT_EQ(r.linux_signal, 11);
  EXPECT_EQ(resume_action("S1e", 0).linux_signal, 10);  // gdb's SIGUSR1 is Linux's 10
}

TEST(GdbRegisters, LayoutMatchesTheDescription) {
  for (bool g64 : {false, true}) {
    const auto regs = x86_registers(g64);
    const std::string xml = x86_target_xml(g64);
    // Every register once, numbered in order: the g packet follows this order.
    for (size_t i = 0; i < regs.size(); ++i) {
      const std::string tag = std::string("<reg name=\"") + regs[i].name + "\"";
      const size_t at = xml.find(tag);
      ASSERT_NE(at, std::string::npos) << regs[i].name;
      EXPECT_NE(xml.find("regnum=\"" + std::to_string(i) + "\"", at), std::string::npos);
    }
    EXPECT_EQ(regs.size(), g64 ? 24u + 16u + 17u + 1u + 2u : 16u + 16u + 9u + 1u);
    EXPECT_EQ(std::string(regs[g64 ? 16 : 8].name), g64 ? "rip" : "eip");
  }
}

TEST(GdbServer, PacketsAgainstAFakeTarget) {
  FakeTarget t;
  Server server(0);
  ASSERT_GT(server.port(), 0);
  Resume got;
  std::thread th([&] { got = server.attach(t); });
  Client c(server.port());
  EXPECT_NE(c.ask("qSupported:multiprocess+").find("qXfer:features:read+"), std::string::npos);
  EXPECT_EQ(c.ask("?"), "T05thread:1;");
  // g: every register, each its width: the first byte is its number in the fake.
  const auto regs = x86_registers(true);
  const std::string g = c.ask("g");
  size_t width = 0;
  for (const RegDesc& r : regs) width += r.bits / 4;
  EXPECT_EQ(g.size(), width);
  EXPECT_EQ(c.ask("p10"), "10" + std::string(14, '0'));  // rip, 8 bytes
  EXPECT_EQ(c.ask("P2=0102030405060708"), "OK");
  EXPECT_EQ(t.written_reg, 2);
  EXPECT_EQ(t.written_value, 0x0807060504030201u);
  EXPECT_EQ(c.ask("p999"), "E01");
  // m: short at the end of the readable range, an error where nothing is.
  EXPECT_EQ(c.ask("m100c,8"), "0c0d0e0f");
  EXPECT_EQ(c.ask("m2000,4"), "E14");
  EXPECT_EQ(c.ask("M3000,2:abcd"), "OK");
  EXPECT_EQ(t.mem_addr, 0x3000u);
  EXPECT_EQ(t.mem, (std::vector<uint8_t>{0xab, 0xcd}));
  // X: binary; the client escapes '#' and the server undoes it.
  EXPECT_EQ(c.ask("X3004,2:#A"), "OK");
  EXPECT_EQ(t.mem, (std::vector<uint8_t>{'#', 'A'}));
  EXPECT_EQ(c.ask("Z0,401000,1"), "OK");
  EXPECT_EQ(t.breaks, std::vector<uint64_t>{0x401000});
  EXPECT_EQ(c.ask("Z3,5000,4"), "OK");
  EXPECT_EQ(t.watch_kind, WatchKind::Read);
  EXPECT_EQ(t.watch_len, 4u);
  EXPECT_EQ(c.ask("Z9,0,0"), "");  // unknown kinds are unsupported, not errors
  // qXfer in pieces: 'm' while more follows, 'l' for the last piece; binary escaped.
  EXPECT_EQ(c.ask("qXfer:auxv:read::0,4"), std::string("m\x06\0\0\0", 5));
  EXPECT_EQ(c.ask("qXfer:auxv:read::4,100"), "l#$}*");
  EXPECT_EQ(c.ask("qXfer:auxv:read::8,100"), "l");
  EXPECT_EQ(c.ask("qXfer:exec-file:read:2a:0,100"), "l/bin/prog");
  EXPECT_EQ(c.ask("qXfer:features:read:target.xml:0,10"), "m<?xml version=\"1");  // 0x10 bytes
  EXPECT_EQ(c.ask("qXfer:bogus:read::0,10"), "");
  EXPECT_EQ(c.ask("vMustReplyEmpty"), "");
  // No-ack mode: after OK, neither side sends '+'.
  EXPECT_EQ(c.ask("QStartNoAckMode"), "OK");
  c.raw(frame_packet("vCont;S0b"));
  th.join();
  EXPECT_EQ(got.kind, Resume::Kind::Step);
  EXPECT_EQ(got.linux_signal, 11);
  // A stop: the reply names a watchpoint's kind and address.
  Stop s;
  s.kind = Stop::Kind::Watch;
  s.watch = WatchKind::Access;
  s.watch_addr = 0x5000;
  std::thread th2([&] { got = server.serve(t, s); });
  std::string body;
  {
    // In no-ack mode the reply comes alone.
    const std::string r = c.reply();
    body = r;
  }
  EXPECT_EQ(body, "T05awatch:5000;thread:1;");
  c.raw(frame_packet("k"));
  th2.join();
  EXPECT_EQ(got.kind, Resume::Kind::Kill);
}

TEST(GdbServer, PortInUseIsAOneLineError) {
  Server first(0);
  try {
    Server second(first.port());
    FAIL() << "bound twice";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "gdb: cannot listen on port " + std::to_string(first.port()) +
                                         ": Address already in use");
  }
}

}  // namespace
}  // namespace padlock::emu::gdb
