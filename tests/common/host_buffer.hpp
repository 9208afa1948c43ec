// Test helper: a host buffer holding given values, of the element type of their C++ type, as a
// CPU reference (built in or in a library) receives one.
#pragma once

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tiletune/reference.hpp"

namespace tiletune::testing {

template <class T>
HostBuffer host_buffer(std::string name, const std::vector<T>& values) {
  HostBuffer b;
  b.name = std::move(name);
  b.type = element_type_of<T>;
  b.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

}  // namespace tiletune::testing
