// Chooses the host AES implementation: AES-NI when the CPU has it, else portable.
#include "models/ace/aes_core.hpp"

namespace padlock::ace {

const Kernels* kernels_for(Backend b) {
  switch (b) {
    case Backend::Portable:
      return &portable_kernels();
    case Backend::AesNi:
      return aesni_kernels();
    case Backend::Auto:
      break;
  }
  const Kernels* k = aesni_kernels();
  return k != nullptr ? k : &portable_kernels();
}

}  // namespace padlock::ace
