// A user's CPU reference in a shared library (tiletune/reference.h), built by CMake from
// reference_library.c: it loads, sees the sizes and buffers, fills the outputs, and its
// failures (and those of dlopen and dlsym) come back as errors naming the library and function.
#include <gtest/gtest.h>

#include <cstring>

#include "tiletune/error.hpp"
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
  } catch (const Error& e) {
    return e.what();
  }
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

  const std::string refused = message_of([&] { LibraryReference(kLibrary, "failing_reference").compute({}, {}, outputs); });
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
