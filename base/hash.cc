#include "base/hash.h"

#include <openssl/evp.h>
#include <sys/random.h>

#include <cstdint>
#include <stdexcept>

namespace evald {

namespace {
std::string ToHex(const unsigned char* data, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  return out;
}

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("EVP sha256 init failed");
  }
  ~Sha256() { EVP_MD_CTX_free(ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(const void* p, size_t n) { EVP_DigestUpdate(ctx_, p, n); }
  std::string HexDigest() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_, md, &len);
    return ToHex(md, len);
  }

 private:
  EVP_MD_CTX* ctx_;
};
}  // namespace

std::string Sha256Hex(std::string_view data) {
  Sha256 h;
  h.Update(data.data(), data.size());
  return h.HexDigest();
}

std::string Sha256OfFields(const std::vector<std::string_view>& fields) {
  Sha256 h;
  for (std::string_view f : fields) {
    uint64_t len = f.size();
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(len >> (8 * i));
    h.Update(le, sizeof le);
    h.Update(f.data(), f.size());
  }
  return h.HexDigest();
}

std::string RandomHex(size_t n_bytes) {
  std::string raw(n_bytes, '\0');
  size_t got = 0;
  while (got < n_bytes) {
    ssize_t n = getrandom(raw.data() + got, n_bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  return ToHex(reinterpret_cast<const unsigned char*>(raw.data()), n_bytes);
}

}  // namespace evald
