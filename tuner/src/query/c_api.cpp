// The C API (tiletune.h) over QueryCache: argument checks, status codes, the thread-local last
// error, and a catch (...) at every entry point so that nothing but a status crosses into C.
#include "tiletune/tiletune.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "query/reader.hpp"
#include "query/trials.hpp"
#include "tiletune/query.hpp"

struct tiletune_cache {
  tiletune::QueryCache cache;
};

struct tiletune_result {
  tiletune::QueryResult result;
};

namespace {

using tiletune::QueryStatus;

thread_local std::string last_error;

tiletune_status fail(tiletune_status status, const char* message) noexcept {
  try {
    last_error = message;
  } catch (...) { last_error.clear(); }
  return status;
}

tiletune_status fail(tiletune_status status, const std::string& message) noexcept {
  return fail(status, message.c_str());
}

tiletune_status succeed() noexcept {
  last_error.clear();
  return TILETUNE_OK;
}

tiletune_status to_c(QueryStatus s) noexcept {
  switch (s) {
    case QueryStatus::ok: return TILETUNE_OK;
    case QueryStatus::invalid_argument: return TILETUNE_INVALID_ARGUMENT;
    case QueryStatus::unknown_kernel: return TILETUNE_INVALID_ARGUMENT;
    case QueryStatus::no_device: return TILETUNE_NO_DEVICE;
    case QueryStatus::not_a_cache: return TILETUNE_NOT_A_CACHE;
    case QueryStatus::unsupported_schema: return TILETUNE_UNSUPPORTED_SCHEMA;
    case QueryStatus::io_error: return TILETUNE_IO_ERROR;
    case QueryStatus::internal_error: return TILETUNE_INTERNAL_ERROR;
  }
  return TILETUNE_INTERNAL_ERROR;
}

// The live device, read through the driver once per process (a failure is remembered too).
const std::optional<tiletune::QueryDevice>& live_device(std::string& error) {
  static std::once_flag once;
  static std::optional<tiletune::QueryDevice> device;
  static std::string why;
  std::call_once(once, [] { device = tiletune::QueryDevice::detect(0, &why); });
  error = why;
  return device;
}

tiletune_status open_path(const std::string& path, tiletune_cache** out) {
  tiletune::QueryError error;
  auto cache = tiletune::QueryCache::try_open(path, &error);
  if (!cache) return fail(to_c(error.status), error.message);
  *out = new tiletune_cache{std::move(*cache)};
  return succeed();
}

}  // namespace

extern "C" {

tiletune_status tiletune_open(const char* path, tiletune_cache** out) {
  try {
    if (!out) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_open: out is NULL");
    *out = nullptr;
    if (!path) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_open: path is NULL");
    if (!*path) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_open: path is empty");
    return open_path(path, out);
  } catch (const std::bad_alloc&) { return fail(TILETUNE_OUT_OF_MEMORY, "out of memory"); } catch (...) {
    return fail(TILETUNE_INTERNAL_ERROR, "tiletune_open: unexpected error");
  }
}

tiletune_status tiletune_open_default(tiletune_cache** out) {
  try {
    if (!out) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_open_default: out is NULL");
    *out = nullptr;
    auto path = tiletune::QueryCache::default_path();
    if (path.empty())
      return fail(TILETUNE_NOT_FOUND, "no default cache path: none of TILETUNE_DB, XDG_CACHE_HOME and HOME is set");
    return open_path(path.string(), out);
  } catch (const std::bad_alloc&) { return fail(TILETUNE_OUT_OF_MEMORY, "out of memory"); } catch (...) {
    return fail(TILETUNE_INTERNAL_ERROR, "tiletune_open_default: unexpected error");
  }
}

tiletune_status tiletune_default_cache_path(char* buffer, size_t size, size_t* needed) {
  try {
    std::string path = tiletune::QueryCache::default_path().string();
    if (path.empty())
      return fail(TILETUNE_NOT_FOUND, "no default cache path: none of TILETUNE_DB, XDG_CACHE_HOME and HOME is set");
    if (needed) *needed = path.size() + 1;
    if (!buffer || size < path.size() + 1)
      return fail(TILETUNE_INVALID_ARGUMENT,
                  "tiletune_default_cache_path: the buffer needs " + std::to_string(path.size() + 1) + " bytes");
    std::memcpy(buffer, path.c_str(), path.size() + 1);
    return succeed();
  } catch (const std::bad_alloc&) { return fail(TILETUNE_OUT_OF_MEMORY, "out of memory"); } catch (...) {
    return fail(TILETUNE_INTERNAL_ERROR, "tiletune_default_cache_path: unexpected error");
  }
}

void tiletune_close(tiletune_cache* cache) { delete cache; }

tiletune_status tiletune_lookup(tiletune_cache* cache, const char* kernel, const char* device_spec, const char* sizes,
                                tiletune_result** out) {
  return tiletune_lookup_objective(cache, kernel, device_spec, sizes, nullptr, out);
}

tiletune_status tiletune_lookup_objective(tiletune_cache* cache, const char* kernel, const char* device_spec,
                                          const char* sizes, const char* objective, tiletune_result** out) {
  try {
    if (!out) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_lookup: out is NULL");
    *out = nullptr;
    if (!cache) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_lookup: cache is NULL");
    if (!kernel) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_lookup: kernel is NULL");
    if (!*kernel) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_lookup: the kernel name is empty");
    if (!sizes) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_lookup: sizes is NULL (pass \"\" for none)");

    tiletune::QueryRequest request;
    request.kernel = kernel;
    if (objective) {
      auto o = tiletune::parse_objective(objective);
      if (!o)
        return fail(TILETUNE_INVALID_ARGUMENT,
                    "tiletune_lookup: objective \"" + std::string(objective) + "\" is not time, energy or edp");
      request.objective = *o;
    }
    std::string why;
    auto parsed = tiletune::query_detail::parse_assignments(sizes, &why);
    if (!parsed)
      return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_lookup: sizes \"" + std::string(sizes) + "\": " + why);
    for (auto& [name, value] : *parsed) request.sizes.emplace(std::move(name), value);

    if (device_spec) {
      request.device = tiletune::QueryDevice::parse(device_spec);
    } else {
      std::string error;
      const auto& live = live_device(error);
      if (!live) return fail(TILETUNE_NO_DEVICE, "tiletune_lookup: no live device (pass a device spec): " + error);
      request.device = *live;
    }

    tiletune::QueryResult result = cache->cache.lookup(request);
    if (!result.ok()) return fail(to_c(result.status), result.message);
    if (result.match == tiletune::MatchLevel::none)
      return fail(TILETUNE_NOT_FOUND, "no tuned config of '" + request.kernel + "' at any match level");
    *out = new tiletune_result{std::move(result)};
    return succeed();
  } catch (const std::bad_alloc&) { return fail(TILETUNE_OUT_OF_MEMORY, "out of memory"); } catch (...) {
    return fail(TILETUNE_INTERNAL_ERROR, "tiletune_lookup: unexpected error");
  }
}

size_t tiletune_result_param_count(const tiletune_result* r) { return r ? r->result.params.size() : 0; }

const char* tiletune_result_param_name(const tiletune_result* r, size_t i) {
  if (!r || i >= r->result.params.size()) return nullptr;
  return r->result.params[i].name.c_str();
}

long tiletune_result_param_value(const tiletune_result* r, size_t i) {
  if (!r || i >= r->result.params.size()) return 0;
  return static_cast<long>(r->result.params[i].value);
}

tiletune_status tiletune_result_param(const tiletune_result* r, const char* name, long* value) {
  if (!r || !name || !value) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_result_param: a NULL argument");
  for (const auto& p : r->result.params) {
    if (p.name == name) {
      *value = static_cast<long>(p.value);
      return succeed();
    }
  }
  try {
    return fail(TILETUNE_NOT_FOUND, std::string("the result has no param ") + name);
  } catch (...) { return TILETUNE_NOT_FOUND; }
}

tiletune_match_level tiletune_result_match_level(const tiletune_result* r) {
  if (!r) return TILETUNE_MATCH_NONE;
  return static_cast<tiletune_match_level>(static_cast<int>(r->result.match));
}

double tiletune_result_time_ms(const tiletune_result* r) { return r ? r->result.time_ms : -1.0; }
double tiletune_result_energy_mj(const tiletune_result* r) { return r ? r->result.energy_mj : -1.0; }
size_t tiletune_result_tie_count(const tiletune_result* r) { return r ? r->result.tie_count : 0; }
double tiletune_result_tie_spread(const tiletune_result* r) { return r ? r->result.tie_spread : 0.0; }
double tiletune_result_fastest_ms(const tiletune_result* r) { return r ? r->result.fastest_ms : -1.0; }
double tiletune_result_headroom_percent(const tiletune_result* r) { return r ? r->result.headroom_percent : -1.0; }
const char* tiletune_result_bound(const tiletune_result* r) { return r ? r->result.bound.c_str() : ""; }
const char* tiletune_result_pin_scope(const tiletune_result* r) { return r ? r->result.pin_scope.c_str() : ""; }
const char* tiletune_result_pin_reason(const tiletune_result* r) { return r ? r->result.pin_reason.c_str() : ""; }
const char* tiletune_result_problem(const tiletune_result* r) { return r ? r->result.problem.c_str() : ""; }
const char* tiletune_result_device_name(const tiletune_result* r) { return r ? r->result.device_name.c_str() : ""; }
const char* tiletune_result_params_text(const tiletune_result* r) { return r ? r->result.params_text.c_str() : ""; }

void tiletune_result_free(tiletune_result* r) { delete r; }

tiletune_status tiletune_trials_json(tiletune_cache* cache, const char* kernel, const char* device, const char* status,
                                     int all_versions, char** json) {
  try {
    if (!json) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_trials_json: json is NULL");
    *json = nullptr;
    if (!cache) return fail(TILETUNE_INVALID_ARGUMENT, "tiletune_trials_json: cache is NULL");
    tiletune::query_detail::TrialsFilter filter;
    if (kernel) filter.kernel = kernel;
    if (device) filter.device = device;
    if (status) filter.status = status;
    filter.all_versions = all_versions != 0;
    const std::string text = tiletune::query_detail::trials_json(cache->cache, filter);
    char* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (!copy) return fail(TILETUNE_OUT_OF_MEMORY, "out of memory");
    std::memcpy(copy, text.c_str(), text.size() + 1);
    *json = copy;
    return succeed();
  } catch (const tiletune::query_detail::Failure& f) {
    return fail(to_c(f.status()), f.what());
  } catch (const std::bad_alloc&) { return fail(TILETUNE_OUT_OF_MEMORY, "out of memory"); } catch (...) {
    return fail(TILETUNE_INTERNAL_ERROR, "tiletune_trials_json: unexpected error");
  }
}

void tiletune_string_free(char* text) { std::free(text); }

const char* tiletune_status_string(tiletune_status status) {
  switch (status) {
    case TILETUNE_OK: return "ok";
    case TILETUNE_NOT_FOUND: return "not found";
    case TILETUNE_INVALID_ARGUMENT: return "invalid argument";
    case TILETUNE_NOT_A_CACHE: return "not a tiletune cache";
    case TILETUNE_UNSUPPORTED_SCHEMA: return "unsupported cache schema";
    case TILETUNE_IO_ERROR: return "I/O error";
    case TILETUNE_NO_DEVICE: return "no CUDA device";
    case TILETUNE_OUT_OF_MEMORY: return "out of memory";
    case TILETUNE_INTERNAL_ERROR: return "internal error";
  }
  return "unknown status";
}

const char* tiletune_last_error(void) { return last_error.c_str(); }

const char* tiletune_match_level_string(tiletune_match_level level) {
  switch (level) {
    case TILETUNE_MATCH_EXACT: return "exact";
    case TILETUNE_MATCH_NEAREST_PROBLEM: return "nearest_problem";
    case TILETUNE_MATCH_SAME_ARCHITECTURE: return "same_architecture";
    case TILETUNE_MATCH_PORTABLE_DEFAULT: return "portable_default";
    case TILETUNE_MATCH_NONE: return "none";
    case TILETUNE_MATCH_PINNED: return "pinned";
  }
  return "unknown";
}

}  // extern "C"
