// libFuzzer target: the function harness's object loader (emulator/harness/object_loader.hpp)
// on any file: relocatable objects (ET_REL, laid out section by section with their
// relocations and imports), shared objects and PIEs (ET_DYN) and executables (ET_EXEC).
// A bad file must end in MachineError (one line), never a crash; the ELF class picks a 32-
// or 64-bit Machine. Each input gets a fresh loader; the Machine is made again every 256
// inputs, before its allocation arena or its stubs could run out.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "emulator/harness/object_loader.hpp"
#include "models/cpu_model.hpp"

using namespace padlock;
using padlock::emu::Machine;
using padlock::emu::MachineError;
using padlock::emu::ObjectLoader;

namespace {

struct Slot {
  std::unique_ptr<Machine> machine;
  unsigned uses = 0;
};

Machine& machine(bool is64) {
  static Slot slots[2];
  Slot& s = slots[is64];
  if (!s.machine || ++s.uses % 256 == 0) {
    s.machine.reset();
    s.machine =
        std::make_unique<Machine>(*find_cpu_model("nano"), is64 ? 64 : 32, PadlockConfig{}, 0.0);
  }
  return *s.machine;
}

// The loader reads a file by name: one memory file, rewritten for each input.
const std::string& input_path() {
  static const std::string path = [] {
    const int fd = memfd_create("fuzz-object", 0);
    return "/proc/self/fd/" + std::to_string(fd);
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool is64 = size > 4 && data[4] == 2;  // EI_CLASS: ELFCLASS64
  const std::string& path = input_path();
  const int fd = std::stoi(path.substr(path.rfind('/') + 1));
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  Machine& m = machine(is64);
  ObjectLoader loader(m);
  try {
    const emu::LoadedObject& obj = loader.load(path);
    // Give the memory back: the next input starts from the same arena contents.
    if (obj.end > obj.start) m.memory().unmap(obj.start, obj.end - obj.start);
  } catch (const MachineError&) {
  }
  return 0;
}
