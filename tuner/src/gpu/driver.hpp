// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so that tiletune runs
// on machines without a GPU driver, plus checked calls and move-only RAII owners of every
// driver handle (context, module, device memory, event, stream).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "tiletune/error.hpp"

namespace tiletune::cu {

/// Pointers to the driver entry points tiletune uses (names as cuda.h maps them, e.g.
/// cuMemAlloc is cuMemAlloc_v2).
struct Api {
#define TILETUNE_CU_FN(name) decltype(&::name) name = nullptr;
#include "gpu/driver_functions.inc"
#undef TILETUNE_CU_FN
};

/// The loaded driver, or nullptr when libcuda.so.1 cannot be loaded or cuInit fails.
/// Loaded once per process (thread-safe); why it failed is in driver_unavailable_reason().
[[nodiscard]] const Api* api();
[[nodiscard]] std::string driver_unavailable_reason();
/// Number of CUDA devices (0 without a driver).
[[nodiscard]] int device_count();

/// "CUDA_ERROR_ILLEGAL_ADDRESS"
[[nodiscard]] std::string result_name(CUresult r);

/// A failed driver call: carries the CUresult and names the call, file and line.
class DriverError : public Error {
 public:
  DriverError(CUresult result, std::string message) : Error(std::move(message)), result_(result) {}
  [[nodiscard]] CUresult result() const noexcept { return result_; }

 private:
  CUresult result_;
};

/// Throws DriverError("cuXxx(...) failed: CUDA_ERROR_... at file:line [context]").
void check(CUresult r, const char* call, const char* file, int line, std::string_view context = {});

}  // namespace tiletune::cu

/// Calls a driver function through the loaded Api and throws DriverError on failure:
/// TILETUNE_CU(cuMemAlloc(&p, n)). Throws when the driver is not available.
#define TILETUNE_CU(call) ::tiletune::cu::check(::tiletune::cu::detail::require().call, #call, __FILE__, __LINE__)
#define TILETUNE_CU_CTX(call, context) \
  ::tiletune::cu::check(::tiletune::cu::detail::require().call, #call, __FILE__, __LINE__, context)

namespace tiletune::cu::detail {
/// The Api, or throws Error("CUDA driver not available: ...").
const Api& require();
}  // namespace tiletune::cu::detail
