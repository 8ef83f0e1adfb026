// `padlock-emu system`: boots a kernel on system mode's patched QEMU with one of our CPU
// models (docs/system.md). QEMU runs the PadLock instructions through libpadlock-system.so,
// the same execution core as `run`; this command only finds the pieces and starts QEMU.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "emulator/cli/cli.hpp"
#include "emulator/cli/install_paths.hpp"
#include "emulator/cli/system_console.hpp"
#include "models/cpu_model.hpp"

namespace padlock::cli {

namespace {

constexpr const char* kUsage =
    "usage: padlock-emu system [--cpu NAME] (--kernel VMLINUZ [--initrd INITRD]\n"
    "                          | --debian-kernel i386|amd64 [--debian-suite SUITE]\n"
    "                            [--module FILE.ko]...)\n"
    "                          [--append ARGS] [--memory MB] [--x86-64] [--stats]\n"
    "                          [--trace FILE] [--check] [--check-jsonl FILE]\n"
    "                          [--check-sarif FILE] [--console]\n"
    "                          [-- QEMU ARGS...]\n"
    "\n"
    "Boots a kernel under system mode's QEMU on a modelled VIA CPU; PadLock instructions\n"
    "run in padlock-emu's models (docs/system.md).\n"
    "  --cpu NAME         CPU model (padlock-emu cpus); default esther, nano for a 64-bit kernel\n"
    "  --kernel, --initrd the kernel and initramfs to boot\n"
    "  --debian-kernel A  Debian's own kernel for A (apt-get download) and an initramfs\n"
    "                     whose init loads padlock-aes, padlock-sha and via-rng and prints\n"
    "                     their /proc/crypto self-tests, AF_ALG known answers and hwrng\n"
    "  --debian-suite S   with --debian-kernel: the kernel pinned for the Debian suite S\n"
    "                     (emulator/system/debian-kernels.txt): bookworm (default; 6.1),\n"
    "                     bookworm-backports (6.12), trixie-backports (6.16), sid (7.2)\n"
    "  --module FILE.ko   with --debian-kernel: put FILE.ko in the initramfs instead of\n"
    "                     Debian's module of the same name\n"
    "  --append ARGS      more kernel command line\n"
    "  --memory MB        guest RAM; default 256\n"
    "  --x86-64           qemu-system-x86_64 for a 64-bit --kernel (implied by amd64)\n"
    "  --stats            PadLock statistics on stderr when QEMU exits\n"
    "  --trace FILE       every PadLock instruction as JSON Lines, as run's --trace\n"
    "                     (cycles: the model's clock, which the guest's TSC reads)\n"
    "  --check            the PadLock checker (docs/checker.md); findings on stderr at exit\n"
    "  --check-jsonl FILE, --check-sarif FILE\n"
    "                     the findings also as JSON Lines and as SARIF 2.1.0 (imply --check)\n"
    "  --console          show the whole console, interactively; by default only the\n"
    "                     result lines (PADLOCK-*, AFALG, the crypto manager's alg:), and\n"
    "                     the console's last lines when the boot fails\n"
    "With --debian-kernel, --trace and the findings name the functions of the kernel's\n"
    "modules (function+offset [module]), from the modules' symbols at the addresses the\n"
    "guest reports on the console.\n"
    "Environment: PADLOCK_QEMU_DIR (the built QEMU), PADLOCK_SYSTEM_LIB (the models).\n";

struct SystemOptions {
  std::string cpu;  // empty: esther, or nano for a 64-bit kernel
  std::string kernel, initrd, append, debian, trace, check_jsonl, check_sarif;
  std::string suite;  // --debian-suite; empty: bookworm
  std::string memory = "256";
  std::vector<std::string> modules, qemu_args;
  bool stats = false;
  bool check = false;
  bool x86_64 = false;   // qemu-system-x86_64 (a 64-bit --kernel)
  bool console = false;  // --console: the whole console (system_console.hpp)
};

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v ? v : fallback;
}

SystemOptions parse_system(const std::vector<std::string>& args) {
  SystemOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError("system: " + a + " needs a value");
      return args[++i];
    };
    if (a == "--") {
      o.qemu_args.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a == "--cpu") {
      o.cpu = value();
    } else if (a == "--kernel") {
      o.kernel = value();
    } else if (a == "--initrd") {
      o.initrd = value();
    } else if (a == "--append") {
      o.append = value();
    } else if (a == "--debian-kernel") {
      o.debian = value();
      if (o.debian != "i386" && o.debian != "amd64")
        throw UsageError("system: --debian-kernel is i386 or amd64");
    } else if (a == "--debian-suite") {
      o.suite = value();
      // A name for a shell command line and a directory: Debian's suites are [a-z0-9-].
      if (o.suite.empty() ||
          o.suite.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
        throw UsageError("system: --debian-suite is a Debian suite's name, such as sid");
    } else if (a == "--module") {
      o.modules.push_back(value());
    } else if (a == "--memory") {
      o.memory = value();
      if (o.memory.empty() || o.memory.find_first_not_of("0123456789") != std::string::npos ||
          std::atol(o.memory.c_str()) < 16)
        throw UsageError("system: invalid --memory '" + o.memory +
                         "': expected megabytes of guest RAM, at least 16, e.g. --memory 256");
    } else if (a == "--x86-64") {
      o.x86_64 = true;
    } else if (a == "--stats") {
      o.stats = true;
    } else if (a == "--console") {
      o.console = true;
    } else if (a == "--trace") {
      o.trace = value();
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--check-jsonl") {
      o.check_jsonl = value();
      o.check = true;
    } else if (a == "--check-sarif") {
      o.check_sarif = value();
      o.check = true;
    } else {
      throw UsageError("system: unknown argument '" + a + "' (see 'padlock-emu system --help')");
    }
  }
  if (o.kernel.empty() == o.debian.empty())
    throw UsageError("system: give --kernel or --debian-kernel (one of them)");
  // A 64-bit kernel on a CPU without long mode stops at "This kernel requires an x86-64
  // CPU" and halts, so the boot would only end at the wait's limit (docs/system.md).
  const bool bits64 = o.debian == "amd64" || o.x86_64;
  if (o.cpu.empty()) o.cpu = bits64 ? "nano" : "esther";
  const CpuModel* cpu = emu::cpu_by_name(o.cpu);  // the same check and message as run's --cpu
  if (bits64 && !cpu->long_mode)
    throw UsageError("system: --cpu " + o.cpu +
                     " has no long mode and cannot boot a 64-bit kernel; choose a model "
                     "that 'padlock-emu cpus' does not mark 32-bit");
  if (!o.modules.empty() && o.debian.empty())
    throw UsageError("system: --module needs --debian-kernel");
  if (!o.suite.empty() && o.debian.empty())
    throw UsageError("system: --debian-suite needs --debian-kernel");
  return o;
}

// An unnamed file for QEMU's console log (see run_system_command), open across exec.
int console_log() {
  const char* tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/padlock-console-XXXXXX";
  const int fd = mkstemp(name.data());
  if (fd >= 0) unlink(name.c_str());
  return fd;
}

// The .ko files make-initramfs.sh keeps beside the initramfs (ko/), ':'-separated.
std::string modules_of(const std::string& initrd) {
  const std::string dir = initrd.substr(0, initrd.rfind('/')) + "/ko/";
  std::string list;
  FILE* order = std::fopen((dir + "modules.order").c_str(), "r");
  if (order == nullptr) return list;
  char name[256];
  while (std::fscanf(order, "%255s", name) == 1) {
    if (!list.empty()) list += ':';
    list += dir + name + ".ko";
  }
  std::fclose(order);
  return list;
}

// A missing piece of system mode is one line naming how to get it, and status 2.
constexpr int kMissingPiece = 2;

// The models' library: $PADLOCK_SYSTEM_LIB, else lib/ beside an installed CLI's bin/, else
// the build tree's. It is loaded here first because QEMU loads it while it registers its
// CPU types, where its error exit ends in an assertion of its own instead of the message.
std::string system_library(std::string& error) {
  const char* env = std::getenv("PADLOCK_SYSTEM_LIB");
  const std::string installed = self_dir() + "/../lib/libpadlock-system.so";
  const std::string lib =
      env != nullptr && *env ? env : first_existing({installed, PADLOCK_SYSTEM_LIB});
  if (lib.empty()) {
    error = "no libpadlock-system.so at " + installed + " or " + PADLOCK_SYSTEM_LIB +
            " (build it: cmake --build BUILD --target padlock_system; or reinstall padlock-emu)";
    return "";
  }
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr || dlsym(h, "padlock_sys_abi_version") == nullptr) {
    error = std::string("cannot load the models' library ") + lib + ": " +
            (h == nullptr ? dlerror() : "no padlock_sys_abi_version");
    return "";
  }
  dlclose(h);
  return lib;
}

// make-initramfs.sh with the test init's sources (tests/system): share/padlock-emu/ beside an
// installed CLI's bin/, else the source tree's.
std::string initramfs_script() {
  const char* rel = "/emulator/system/make-initramfs.sh";
  return first_existing(
      {self_dir() + "/../share/padlock-emu" + rel, std::string(PADLOCK_SOURCE_DIR) + rel});
}

}  // namespace

int run_system_command(const std::vector<std::string>& args, FILE* out, FILE* err) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(kUsage, out);
    return 0;
  }
  SystemOptions o;
  try {
    o = parse_system(args);
  } catch (const UsageError& e) {
    std::fprintf(err, "padlock-emu: %s\n", e.what());
    return 2;
  }
  const CpuModel* cpu = emu::cpu_by_name(o.cpu);
  const bool amd64 = o.debian == "amd64";
  const std::string qemu =
      env_or("PADLOCK_QEMU_DIR", PADLOCK_QEMU_DIR) +
      (amd64 || o.x86_64 ? "/bin/qemu-system-x86_64" : "/bin/qemu-system-i386");
  if (access(qemu.c_str(), X_OK) != 0) {
    std::fprintf(err,
                 "padlock-emu: system: no QEMU at %s (build it in padlock-emu's sources: "
                 "cmake --build BUILD --target padlock-qemu, or scripts/setup.sh)\n",
                 qemu.c_str());
    return kMissingPiece;
  }
  std::string lib_error;
  const std::string lib = system_library(lib_error);
  if (lib.empty()) {
    std::fprintf(err, "padlock-emu: system: %s\n", lib_error.c_str());
    return kMissingPiece;
  }
  const std::string script = initramfs_script();
  if (!o.debian.empty() && script.empty()) {
    std::fprintf(err,
                 "padlock-emu: system: no make-initramfs.sh beside padlock-emu nor in %s "
                 "(reinstall padlock-emu)\n",
                 PADLOCK_SOURCE_DIR);
    return kMissingPiece;
  }
  if (!o.debian.empty()) {
    // Debian's kernel and the test initramfs (emulator/system/make-initramfs.sh), in a
    // directory named by the suite and the modules (system-amd64-sid,
    // system-i386+padlock-aes): boots of other kernels and module sets may run meanwhile.
    std::string dir = env_or("PADLOCK_DEPS_CACHE", PADLOCK_DEPS_CACHE) + "/system-" + o.debian;
    if (!o.suite.empty() && o.suite != "bookworm") dir += "-" + o.suite;
    for (const std::string& m : o.modules) {
      const std::string name = m.substr(m.rfind('/') + 1);
      dir += '+';
      dir.append(name, 0, name.rfind(".ko"));
    }
    std::string cmd = "bash '" + script + "' ";
    if (!o.suite.empty()) cmd += "--suite '" + o.suite + "' ";
    cmd += o.debian + " '" + dir + "'";
    for (const std::string& m : o.modules) cmd += " '" + m + "'";
    cmd += " >&2";
    const int status = std::system(cmd.c_str());
    if (status != 0) {
      // Exit 2 from make-initramfs.sh: a suite with no kernel pinned, said on stderr.
      if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return 2;
      std::fprintf(err, "padlock-emu: system: building the initramfs failed\n");
      return 1;
    }
    o.kernel = dir + "/vmlinuz";
    o.initrd = dir + "/initrd.gz";
  }
  setenv("PADLOCK_SYSTEM_LIB", lib.c_str(), 1);
  if (o.stats) setenv("PADLOCK_SYSTEM_STATS", "1", 1);
  // The output files, created here so that a path that cannot be written fails before the
  // boot; the library writes them when QEMU exits.
  const struct {
    const std::string& path;
    const char* what;
    const char* env;
  } outputs[] = {{o.trace, "trace", "PADLOCK_SYSTEM_TRACE"},
                 {o.check_jsonl, "check JSON Lines", "PADLOCK_SYSTEM_CHECK_JSONL"},
                 {o.check_sarif, "check SARIF", "PADLOCK_SYSTEM_CHECK_SARIF"}};
  for (const auto& out_file : outputs) {
    if (out_file.path.empty()) continue;
    FILE* f = std::fopen(out_file.path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(err, "padlock-emu: system: cannot create %s '%s': %s\n", out_file.what,
                   out_file.path.c_str(), std::strerror(errno));
      return 1;
    }
    std::fclose(f);
    setenv(out_file.env, out_file.path.c_str(), 1);
  }
  if (o.check) setenv("PADLOCK_SYSTEM_CHECK", "1", 1);
  setenv("PADLOCK_SYSTEM_KERNEL", o.kernel.c_str(), 1);
  std::vector<std::string> argv = {qemu,
                                   "-L",
                                   "/usr/share/seabios",
                                   "-L",
                                   "/usr/share/qemu",
                                   "-M",
                                   "pc",
                                   "-cpu",
                                   cpu->name,
                                   "-m",
                                   o.memory,
                                   "-nographic",
                                   "-no-reboot",
                                   "-net",
                                   "none",
                                   "-kernel",
                                   o.kernel};
  if (!o.initrd.empty()) argv.insert(argv.end(), {"-initrd", o.initrd});
  if (!o.debian.empty() && (o.check || !o.trace.empty())) {
    // The modules' names: the test init prints each loaded module's sections on the console
    // (PADLOCK-SECTION lines) and the library reads them from QEMU's log of the console when
    // QEMU exits (docs/system.md, "Kernel symbols"). The log is a file without a name, open
    // across exec: QEMU opens it through /proc/self/fd, nothing is left behind.
    const int log = console_log();
    if (log < 0) {
      std::fprintf(err, "padlock-emu: system: cannot create the console log: %s\n",
                   std::strerror(errno));
      return 1;
    }
    const std::string path = "/proc/self/fd/" + std::to_string(log);
    setenv("PADLOCK_SYSTEM_CONSOLE", path.c_str(), 1);
    setenv("PADLOCK_SYSTEM_MODULES", modules_of(o.initrd).c_str(), 1);
    // What -nographic's "mon:stdio" is, plus the log.
    argv.insert(argv.end(), {"-chardev", "stdio,id=console,mux=on,logfile=" + path, "-serial",
                             "chardev:console", "-mon", "chardev=console,mode=readline"});
  }
  std::string append = "console=ttyS0 panic=-1";
  // Debian's kernel scans for ISA Plug and Play cards, which QEMU's pc has none of: a second
  // of busy-waiting in every boot (initcall_debug: isapnp_init), nothing PadLock sees.
  if (!o.debian.empty()) append += " noisapnp";
  if (!o.append.empty()) append += " " + o.append;
  argv.insert(argv.end(), {"-append", append});
  argv.insert(argv.end(), o.qemu_args.begin(), o.qemu_args.end());
  // A sanitized build (docs/reliability.md, "Sanitizers"): QEMU is not instrumented and
  // the sanitized library it dlopens needs the runtime, which must come first in the
  // process: preloaded into QEMU alone (without it the dlopen fails on the runtime's
  // symbols while QEMU registers its CPU types, too early for its error exit).
  if (PADLOCK_SANITIZER_RUNTIME[0] != '\0') {
    const char* preload = std::getenv("LD_PRELOAD");
    std::string runtime = PADLOCK_SANITIZER_RUNTIME;
    if (preload != nullptr && preload[0] != '\0') runtime += std::string(" ") + preload;
    setenv("LD_PRELOAD", runtime.c_str(), 1);
  }
  return run_qemu(argv, ConsoleOptions{o.console, !o.debian.empty()}, out, err);
}

}  // namespace padlock::cli
