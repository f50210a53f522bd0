// Content hashes (SHA-256 through OpenSSL libcrypto) for deduplication and cache keys.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace evald {

// Lower-case hex SHA-256 of the input.
std::string Sha256Hex(std::string_view data);

// Hash of several fields, each length-prefixed so that ("ab","c") and ("a","bc") differ.
std::string Sha256OfFields(const std::vector<std::string_view>& fields);

// n random bytes from the kernel, hex encoded (nonces for testbench hardening).
std::string RandomHex(size_t n_bytes);

}  // namespace evald
