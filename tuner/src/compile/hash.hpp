// Internal to the compile stage: XXH3-128 digests as 32 hex characters, for the source
// hash and the cubin cache key. Fields are length-prefixed so that ("ab","c") and
// ("a","bc") hash differently.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tiletune::compile_detail {

inline std::string to_hex(XXH128_hash_t hash) {
  XXH128_canonical_t canonical;  // big-endian bytes: high64 then low64
  XXH128_canonicalFromHash(&canonical, hash);
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(32);
  for (unsigned char byte : canonical.digest) {
    out += digits[byte >> 4];
    out += digits[byte & 0xf];
  }
  return out;
}

/// Hex XXH3-128 of one buffer.
[[nodiscard]] inline std::string xxh3_128_hex(std::string_view bytes) {
  return to_hex(XXH3_128bits(bytes.data(), bytes.size()));
}

/// Streaming XXH3-128 over a sequence of length-prefixed fields.
class FieldHasher {
 public:
  FieldHasher() : state_(XXH3_createState(), &XXH3_freeState) {
    if (!state_) throw std::bad_alloc();
    XXH3_128bits_reset(state_.get());
  }
  void add(std::string_view field) {
    const std::uint64_t size = field.size();
    unsigned char prefix[8];
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(size >> (8 * i));
    XXH3_128bits_update(state_.get(), prefix, sizeof prefix);
    XXH3_128bits_update(state_.get(), field.data(), field.size());
  }
  [[nodiscard]] std::string hex() const { return to_hex(XXH3_128bits_digest(state_.get())); }

 private:
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state_;
};

}  // namespace tiletune::compile_detail
