// A result cache from recorded landscapes (see report_fixture.hpp).
#include "report_fixture.hpp"

#include <algorithm>
#include <random>

#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/space.hpp"
#include "tiletune/trial.hpp"

namespace tiletune::testing {

namespace {

std::string header(const Landscape& l, const char* key, const char* fallback = "") {
  return l.header_value(key).value_or(fallback);
}

}  // namespace

std::size_t write_fixture_cache(const std::filesystem::path& db_path, const FixtureOptions& options) {
  CacheDb db = CacheDb::open(db_path);
  std::size_t written = 0;
  std::mt19937_64 random(options.seed);
  for (const auto& path : options.landscapes) {
    const Landscape l = load_landscape(path);
    DeviceRecord d;
    d.uuid = header(l, "device_uuid", "GPU-00000000-0000-0000-0000-000000000000");
    d.name = header(l, "device", "unknown");
    const std::string cc = header(l, "compute_capability", "9.0");
    d.cc_major = std::stoi(cc.substr(0, cc.find('.')));
    d.cc_minor = std::stoi(cc.substr(cc.find('.') + 1));
    const std::int64_t device_id = db.upsert_device(d);
    const std::int64_t kernel_id = db.upsert_kernel(
        {l.kernel, header(l, "source_hash", "fixture"), header(l, "options"), header(l, "nvrtc_version", "")});
    const auto yaml = source_dir() / "configs" / (l.kernel + ".yaml");
    if (std::filesystem::exists(yaml)) {
      const Space space = load_space(yaml);
      if (space.default_config)
        db.set_meta("default_config/" + l.kernel, canonical_config(space, Config{*space.default_config}));
    }
    if (options.synthetic_energy)
      db.set_meta("fixture", "energy values are synthetic (tests/report/report_fixture.cpp)");
    for (const LandscapeProblem& p : l.problems) {
      std::vector<const LandscapeTrial*> order;
      for (const LandscapeTrial& t : p.trials) order.push_back(&t);
      std::shuffle(order.begin(), order.end(), random);
      for (const LandscapeTrial* t : order) {
        TrialRecord r;
        r.key = {device_id, kernel_id, p.problem, t->params};
        r.status = t->status;
        r.detail = t->detail;
        r.time_ms = t->time_ms;
        r.compile_ms = t->compile_ms;
        r.measure_ms = t->measure_ms;
        r.registers = t->registers;
        r.shared_bytes = t->shared_bytes;
        r.occupancy_driver = t->occupancy;
        if (options.synthetic_energy && t->time_ms) {
          // Synthetic: board power rising with occupancy, so the least energy is not always the fastest.
          r.power_w = 180.0 + 420.0 * t->occupancy.value_or(0.5);
          r.energy_mj = *r.power_w * *t->time_ms;
        }
        (void)db.record_trial(r);
        ++written;
      }
    }
  }
  return written;
}

}  // namespace tiletune::testing
