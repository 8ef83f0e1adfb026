#include "emulator/cli/install_paths.hpp"

#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "emulator/cli/cli.hpp"

namespace padlock::cli {

std::string self_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string exe(buf, static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

std::string first_existing(const std::vector<std::string>& candidates) {
  for (const std::string& c : candidates) {
    if (!c.empty() && access(c.c_str(), F_OK) == 0) return c;
  }
  return "";
}

int show_man_page(FILE* err) {
  // The build writes the page beside the binary (emulator/CMakeLists.txt); `cmake --install`
  // puts it in share/man/man1 beside bin/; a wheel's goes under the environment's prefix,
  // where man finds it from PATH.
  const std::string dir = self_dir();
  const std::string page =
      first_existing({dir + "/padlock-emu.1", dir + "/../share/man/man1/padlock-emu.1"});
  std::fflush(stdout);
  if (!page.empty()) {
    execlp("man", "man", "-l", page.c_str(), static_cast<char*>(nullptr));
  } else {
    execlp("man", "man", "padlock-emu", static_cast<char*>(nullptr));
  }
  std::fprintf(err, "padlock-emu: cannot run man: %s%s%s\n", std::strerror(errno),
               page.empty() ? "" : "; the page is ", page.c_str());
  return 2;
}

}  // namespace padlock::cli
