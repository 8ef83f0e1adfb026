// A gdb remote stub: the GDB Remote Serial Protocol (the GDB manual, appendix "Remote
// Protocol") over TCP, written for padlock-emu. One connection, one thread, all-stop.
// The server knows packets, not CPUs: a Target reads and writes registers and memory,
// sets breakpoints and watchpoints and gives the qXfer objects; the run loop calls
// serve() at every stop and gets back how to resume. docs/debugging.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace padlock::emu::gdb {

enum class WatchKind : uint8_t { Write, Read, Access };

// Why the guest stopped, as gdb is told (a T stop reply).
struct Stop {
  enum class Kind : uint8_t { Signal, SwBreak, HwBreak, Watch, Step };
  Kind kind = Kind::Signal;
  int linux_signal = 5;  // SIGTRAP for breakpoints, steps and watchpoints
  WatchKind watch = WatchKind::Write;
  uint64_t watch_addr = 0;
  int thread = 0;  // the thread that stopped (Target::current_thread; 0: not named)
};

// What gdb asked for when it let the guest go on.
struct Resume {
  enum class Kind : uint8_t { Continue, Step, Detach, Kill };
  Kind kind = Kind::Continue;
  int linux_signal = 0;  // a signal to deliver first (0: none)
};

class Target {
 public:
  virtual ~Target() = default;
  virtual bool guest64() const = 0;
  virtual int pid() const = 0;
  // Register `regno` of x86_registers(guest64()) in target byte order (little-endian).
  virtual void read_register(size_t regno, uint8_t* out) = 0;
  virtual void write_register(size_t regno, const uint8_t* in) = 0;
  // How many bytes from `addr` were copied (short at the first unreadable page).
  virtual size_t read_memory(uint64_t addr, uint8_t* out, size_t len) = 0;
  virtual bool write_memory(uint64_t addr, const uint8_t* in, size_t len) = 0;
  virtual bool insert_breakpoint(uint64_t addr) = 0;
  virtual bool remove_breakpoint(uint64_t addr) = 0;
  virtual bool insert_watchpoint(WatchKind k, uint64_t addr, uint64_t len) = 0;
  virtual bool remove_watchpoint(WatchKind k, uint64_t addr, uint64_t len) = 0;
  virtual std::string auxv() = 0;       // the initial auxiliary vector's bytes
  virtual std::string exec_file() = 0;  // the program as the guest sees it
  // Threads (qfThreadInfo, qC, H, T), by their IDs in creation order; a target that
  // returns none has one thread, "1", and these are not asked.
  virtual std::vector<int> threads() { return {}; }
  virtual int current_thread() { return 0; }  // the one that runs (and stopped)
  // Hg: register packets read and write thread `id` from now on (0: the current one);
  // false: no such thread.
  virtual bool select_thread(int id) { return id == 0; }
  // A signal from the host (Ctrl-C, SIGTERM, SIGHUP) ends the run: stop waiting for gdb.
  virtual bool ending() { return false; }
};

// Linux signal numbers and gdb's (the protocol's) differ above 6; 0 maps to 0.
int to_gdb_signal(int linux_signal);
int from_gdb_signal(int gdb_signal);

// The resume action at p[pos]: c, s, C sig or S sig (a c/s/C/S packet, or a vCont action).
Resume resume_action(const std::string& p, size_t pos);

// Framing: "$data#xx" with the modulo-256 checksum and '}' escapes of '#', '$', '}', '*'.
std::string frame_packet(const std::string& payload);

class Server {
 public:
  // Listens on 127.0.0.1:port (0: a free port, see port()). Throws std::runtime_error with
  // a one-line reason ("cannot listen on port 1234: Address already in use").
  explicit Server(int port);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const { return port_; }
  bool connected() const { return fd_ >= 0; }
  // Waits for gdb, then answers it until it resumes the guest (the stop is the start).
  Resume attach(Target& t);
  // The guest stopped: tell gdb and answer it until it resumes the guest.
  Resume serve(Target& t, const Stop& stop);
  // The guest ended: W (exit status) or X (killed by a signal); closes the connection.
  void exited(int code);
  void killed(int linux_signal);
  // Whether gdb sent ^C (0x03) while the guest ran; reads what is waiting, never blocks.
  bool interrupt_requested();
  int socket_fd() const { return fd_; }

 private:
  Resume loop(Target& t);
  bool read_packet(std::string& out);  // false: connection closed (or the run ends)
  // Waits until `fd` is readable; false when the target is ending first.
  bool wait_readable(int fd);
  void send(const std::string& payload);
  std::string handle(Target& t, const std::string& p, Resume& resume, bool& resumed);
  std::string stop_reply() const;
  std::string thread_packet(Target& t, const std::string& p);
  std::string xfer(Target& t, const std::string& object, const std::string& annex, uint64_t offset,
                   uint64_t length);
  void close_connection();

  int listen_fd_ = -1;
  int fd_ = -1;
  int port_ = 0;
  bool no_ack_ = false;
  bool start_no_ack_ = false;  // QStartNoAckMode answered
  Stop last_stop_;
  std::string pending_;       // bytes read ahead of a packet
  Target* target_ = nullptr;  // the one attach() serves, asked whether it is ending
};

}  // namespace padlock::emu::gdb
