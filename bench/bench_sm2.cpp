// SM2 verify model throughput: the model's sm2_verify (models/gmi/) on a signature
// OpenSSL made, valid and with one bit of s flipped, beside OpenSSL 3's EVP_PKEY_verify of
// the same (the baseline), and the clocks the model charges per verify. Rates are per CPU
// second of this process, so that a loaded machine slows both alike.
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "models/cpu_model.hpp"
#include "models/gmi/gmi_units.hpp"

namespace {

constexpr double kMinSeconds = 0.5;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

template <typename Fn>
double ops_per_second(Fn&& fn) {
  size_t iters = 0;
  const double start = cpu_seconds();
  double elapsed = 0;
  do {
    for (int i = 0; i < 16; ++i) fn();
    iters += 16;
    elapsed = cpu_seconds() - start;
  } while (elapsed < kMinSeconds);
  return iters / elapsed;
}

}  // namespace

int main() {
  using namespace padlock;
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "SM2");
  uint8_t pub[65];
  size_t len = 0;
  EVP_PKEY_get_octet_string_param(key, "pub", pub, sizeof pub, &len);
  std::vector<uint8_t> e(32);
  for (size_t i = 0; i < e.size(); ++i) e[i] = static_cast<uint8_t>(i * 37 + 1);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(key, nullptr);
  std::vector<uint8_t> der(128);
  size_t der_len = der.size();
  if (len != 65 || EVP_PKEY_sign_init(ctx) != 1 ||
      EVP_PKEY_sign(ctx, der.data(), &der_len, e.data(), e.size()) != 1)
    std::abort();
  der.resize(der_len);
  const uint8_t* p = der.data();
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der_len));
  uint8_t rs[64], bad[64];
  BN_bn2binpad(ECDSA_SIG_get0_r(sig), rs, 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(sig), rs + 32, 32);
  for (int i = 0; i < 64; ++i) bad[i] = rs[i];
  bad[63] ^= 1;
  if (!sm2_verify(e.data(), pub, rs) || sm2_verify(e.data(), pub, bad)) std::abort();

  const double model_valid = ops_per_second([&] { sm2_verify(e.data(), pub, rs); });
  const double model_invalid = ops_per_second([&] { sm2_verify(e.data(), pub, bad); });
  const double openssl = ops_per_second([&] {
    if (EVP_PKEY_verify_init(ctx) != 1 ||
        EVP_PKEY_verify(ctx, der.data(), der.size(), e.data(), e.size()) != 1)
      std::abort();
  });
  const CpuModel& cpu = *find_cpu_model("kx-6000");
  std::printf(
      "SM2 verify benchmark (F2 0F A6 C0, EDX = 8), one key, a 32-byte digest, per CPU second\n");
  std::printf("  model, valid signature      %8.0f verifies/s\n", model_valid);
  std::printf("  model, s with one bit flipped %6.0f verifies/s\n", model_invalid);
  std::printf("  OpenSSL EVP_PKEY_verify     %8.0f verifies/s   model/OpenSSL = %.2f\n", openssl,
              model_valid / openssl);
  std::printf("  modelled guest: %llu clocks per verify on %s (a documented choice)\n",
              static_cast<unsigned long long>(cpu.gmi.sm2_verify_clocks.value), cpu.name);
  ECDSA_SIG_free(sig);
  EVP_PKEY_CTX_free(ctx);
  EVP_PKEY_free(key);
  return 0;
}
