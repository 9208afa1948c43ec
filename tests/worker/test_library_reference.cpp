// A user's CPU reference in a shared library (tiletune/reference.h), built by CMake from
// reference_library.c: it loads, sees the sizes and buffers, fills the outputs, and its
// failures (and those of dlopen and dlsym) come back as errors naming the library and function.
#include <gtest/gtest.h>

#include <cstring>

#include "host_buffer.hpp"
#include "tiletune/error.hpp"
#include "tiletune/reference.h"
#include "tiletune/reference.hpp"

namespace tiletune {
namespace {

const char* const kLibrary = TILETUNE_TEST_REFERENCE_LIBRARY;

HostBuffer floats(std::string name, std::vector<float> v) {
  HostBuffer b;
  b.name = std::move(name);
  b.type = ElementType::f32;
  b.bytes.resize(v.size() * 4);
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) { return e.what(); }
  return "(no error)";
}

TEST(LibraryReference, ComputesTheOutputsInPlace) {
  const LibraryReference reference(kLibrary, "saxpy_reference");
  const std::vector<HostBuffer> inputs{floats("x", {1, 2, 3, 4})};
  std::vector<HostBuffer> outputs{floats("y", {10, 20, 30, 40})};
  reference.compute({{"N", 3}}, inputs, outputs);
  const auto y = outputs[0].as<const float>();
  EXPECT_EQ(y[0], 10.5f);
  EXPECT_EQ(y[1], 21.0f);
  EXPECT_EQ(y[2], 31.5f);
  EXPECT_EQ(y[3], 40.0f);  // past N: untouched
}

TEST(LibraryReference, NarrowAndWideIntegersArriveWithTheirTypeCodes) {
  // The codes are fixed: the types added later come after half (6).
  EXPECT_EQ(TILETUNE_INT8, 7);
  EXPECT_EQ(TILETUNE_INT16, 8);
  EXPECT_EQ(TILETUNE_UINT16, 9);
  EXPECT_EQ(TILETUNE_UINT64, 10);
  const LibraryReference reference(kLibrary, "widen_reference");
  const std::vector<HostBuffer> inputs{testing::host_buffer<std::int8_t>("a", {-128, 127, -1}),
                                       testing::host_buffer<std::int16_t>("b", {-32768, 32767, 0}),
                                       testing::host_buffer<std::uint16_t>("c", {65535, 0, 1})};
  std::vector<HostBuffer> outputs{testing::host_buffer<std::uint64_t>("out", {0, 0, 0})};
  reference.compute({}, inputs, outputs);
  const auto out = outputs[0].as<const std::uint64_t>();
  EXPECT_EQ(out[0], static_cast<std::uint64_t>(-128 - 32768 + 65535));
  EXPECT_EQ(out[1], 127u + 32767u);
  EXPECT_EQ(out[2], 0u);  // -1 + 0 + 1
  // A type the function does not take is its to refuse.
  std::vector<HostBuffer> wrong{testing::host_buffer<std::int64_t>("out", {0, 0, 0})};
  const std::string refused = message_of([&] { reference.compute({}, inputs, wrong); });
  EXPECT_NE(refused.find("needs int8 a, int16 b, uint16 c and uint64 out"), std::string::npos) << refused;
}

TEST(LibraryReference, ItsMessageComesBack) {
  const LibraryReference reference(kLibrary, "saxpy_reference");
  std::vector<HostBuffer> outputs{floats("y", {1})};
  const std::string wrong_type = message_of([&] {
    std::vector<HostBuffer> inputs{floats("x", {1})};
    inputs[0].type = ElementType::i32;
    reference.compute({{"N", 1}}, inputs, outputs);
  });
  EXPECT_NE(wrong_type.find("x and y must be float"), std::string::npos) << wrong_type;
  EXPECT_NE(wrong_type.find("saxpy_reference"), std::string::npos) << wrong_type;
  EXPECT_NE(wrong_type.find("returned 1"), std::string::npos) << wrong_type;
  const std::string no_size = message_of([&] { reference.compute({{"M", 1}}, {floats("x", {1})}, outputs); });
  EXPECT_NE(no_size.find("needs problem size N"), std::string::npos) << no_size;

  const std::string refused =
      message_of([&] { LibraryReference(kLibrary, "failing_reference").compute({}, {}, outputs); });
  EXPECT_NE(refused.find("the reference refuses this problem"), std::string::npos) << refused;
  const std::string silent = message_of([&] { LibraryReference(kLibrary, "silent_failure").compute({}, {}, outputs); });
  EXPECT_NE(silent.find("returned 7"), std::string::npos) << silent;
  EXPECT_NE(silent.find("gave no message"), std::string::npos) << silent;
}

TEST(LibraryReference, LoadFailuresNameTheLibraryAndFunction) {
  const std::string missing = message_of([] { LibraryReference("/no/such/libref.so", "f"); });
  EXPECT_NE(missing.find("cannot load the reference library /no/such/libref.so"), std::string::npos) << missing;
  const std::string no_function = message_of([] { LibraryReference(kLibrary, "no_such_function"); });
  EXPECT_NE(no_function.find("has no function 'no_such_function'"), std::string::npos) << no_function;
  EXPECT_NE(no_function.find("tiletune/reference.h"), std::string::npos) << no_function;
}

TEST(LibraryReference, MovesKeepTheLibraryLoaded) {
  LibraryReference a(kLibrary, "saxpy_reference");
  LibraryReference b = std::move(a);
  std::vector<HostBuffer> outputs{floats("y", {1})};
  b.compute({{"N", 1}}, {floats("x", {2})}, outputs);
  EXPECT_EQ(outputs[0].as<const float>()[0], 2.0f);
}

}  // namespace
}  // namespace tiletune
