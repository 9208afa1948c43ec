// The scaling model of a sweep (tiletune/scaling.hpp): a discrete-event simulation of the
// compile pools of the hosts and the measurement of the GPUs.
#include "tiletune/scaling.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <queue>
#include <stdexcept>
#include <tuple>

namespace tiletune {
namespace {

// One GPU's shard: its trials in order, how many were submitted to the compile pool and measured.
struct GpuLane {
  std::vector<std::size_t> trials;  // indices into the sweep's trials
  std::vector<bool> compiled;       // per position in `trials`
  std::size_t submitted = 0;
  std::size_t measured = 0;
  bool measuring = false;
};

// Events in time order; ties in the order they were made, so a run is deterministic.
enum class EventKind { compile_done, measure_done };
struct Event {
  double time;
  std::uint64_t seq;
  EventKind kind;
  unsigned gpu;
  std::size_t position;  // in the GPU's lane
  bool operator>(const Event& o) const { return std::tie(time, seq) > std::tie(o.time, o.seq); }
};

class Simulation {
 public:
  Simulation(std::span<const SimulatedTrial> trials, std::span<const std::uint32_t> gpu_of, const ClusterShape& shape)
      : trials_(trials),
        shape_(shape),
        lanes_(shape.gpus()),
        idle_cores_(shape.hosts, shape.cores_per_host),
        pending_(shape.hosts) {
    for (std::size_t i = 0; i < trials.size(); ++i) lanes_.at(gpu_of[i]).trials.push_back(i);
    for (GpuLane& lane : lanes_) lane.compiled.assign(lane.trials.size(), false);
  }

  // The time the last event happened: the sweep's wall time.
  double run() {
    for (unsigned g = 0; g < lanes_.size(); ++g) top_up(g);
    start_compiles();
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      now_ = e.time;
      GpuLane& lane = lanes_[e.gpu];
      if (e.kind == EventKind::compile_done) {
        lane.compiled[e.position] = true;
        ++idle_cores_[host_of(e.gpu)];
      } else {
        lane.measuring = false;
        ++lane.measured;
        top_up(e.gpu);
      }
      start_measure(e.gpu);
      start_compiles();
    }
    return now_;
  }

 private:
  unsigned host_of(unsigned gpu) const { return gpu / shape_.gpus_per_host; }

  void push(double duration, EventKind kind, unsigned gpu, std::size_t position) {
    events_.push(Event{now_ + duration, seq_++, kind, gpu, position});
  }

  // Submits the GPU's next trials while fewer than in_flight are ahead of its measurement.
  void top_up(unsigned gpu) {
    GpuLane& lane = lanes_[gpu];
    while (lane.submitted < lane.trials.size() && lane.submitted - lane.measured < shape_.in_flight)
      pending_[host_of(gpu)].emplace_back(gpu, lane.submitted++);
  }

  // Idle cores take the oldest submitted compiles of their host.
  void start_compiles() {
    for (unsigned h = 0; h < shape_.hosts; ++h) {
      while (idle_cores_[h] > 0 && !pending_[h].empty()) {
        const auto [gpu, position] = pending_[h].front();
        pending_[h].pop_front();
        --idle_cores_[h];
        push(trials_[lanes_[gpu].trials[position]].compile_seconds, EventKind::compile_done, gpu, position);
      }
    }
  }

  // A GPU measures its next trial in order once it is compiled.
  void start_measure(unsigned gpu) {
    GpuLane& lane = lanes_[gpu];
    if (lane.measuring || lane.measured >= lane.trials.size() || !lane.compiled[lane.measured]) return;
    lane.measuring = true;
    push(trials_[lane.trials[lane.measured]].measure_seconds, EventKind::measure_done, gpu, lane.measured);
  }

  std::span<const SimulatedTrial> trials_;
  ClusterShape shape_;
  std::vector<GpuLane> lanes_;
  std::vector<unsigned> idle_cores_;                                   // per host
  std::vector<std::deque<std::pair<unsigned, std::size_t>>> pending_;  // per host: (gpu, position), FIFO
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  double now_ = 0;
};

}  // namespace

SimulatedSweep simulate_sweep(std::span<const SimulatedTrial> trials, std::span<const std::uint32_t> gpu_of,
                              const ClusterShape& shape) {
  if (shape.hosts == 0 || shape.gpus_per_host == 0 || shape.cores_per_host == 0 || shape.in_flight == 0)
    throw std::invalid_argument("simulate_sweep: hosts, GPUs per host, cores per host and in_flight must be >= 1");
  if (trials.size() != gpu_of.size()) throw std::invalid_argument("simulate_sweep: one GPU index per trial is needed");
  SimulatedSweep out;
  std::vector<double> per_gpu(shape.gpus(), 0.0);
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (gpu_of[i] >= shape.gpus()) throw std::invalid_argument("simulate_sweep: a GPU index is out of range");
    out.compile_seconds += trials[i].compile_seconds;
    out.measure_seconds += trials[i].measure_seconds;
    per_gpu[gpu_of[i]] += trials[i].measure_seconds;
  }
  out.busiest_gpu_seconds = per_gpu.empty() ? 0 : *std::max_element(per_gpu.begin(), per_gpu.end());
  out.lower_bound_seconds =
      std::max(out.compile_seconds / double(shape.hosts * shape.cores_per_host), out.busiest_gpu_seconds);
  out.wall_seconds = Simulation(trials, gpu_of, shape).run();
  return out;
}

}  // namespace tiletune
