// tiletune's <cub/cub.cuh> for NVRTC. CUB's own umbrella header includes its device-wide
// algorithms (cub::DeviceReduce, ...), whose host-side dispatch NVRTC refuses ("a function
// explicitly marked as a __host__ function is not allowed in JIT mode"), so a kernel written
// for nvcc that includes <cub/cub.cuh> for cub::BlockReduce fails every config. This umbrella
// is CUB's list without the host-side parts (device/, grid_queue, the texture iterator and the
// allocator, debug, device and temporary-storage utilities); each header it names compiles
// under NVRTC 13.0 for sm_90. The headers themselves are the toolkit's, found and hashed as
// any other.
#pragma once

#include <string_view>

namespace tiletune::compile_detail {

inline constexpr char kCubUmbrellaName[] = "cub/cub.cuh";

inline constexpr std::string_view kCubUmbrellaText =
    R"(// tiletune's <cub/cub.cuh> under NVRTC: CUB's device-side primitives.
#pragma once
#include <cub/config.cuh>
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_rank.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/grid/grid_even_share.cuh>
#include <cub/grid/grid_mapping.cuh>
#include <cub/thread/thread_load.cuh>
#include <cub/thread/thread_operators.cuh>
#include <cub/thread/thread_reduce.cuh>
#include <cub/thread/thread_scan.cuh>
#include <cub/thread/thread_store.cuh>
#include <cub/warp/warp_exchange.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/warp/warp_merge_sort.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cub/warp/warp_store.cuh>
#include <cub/iterator/arg_index_input_iterator.cuh>
#include <cub/iterator/cache_modified_input_iterator.cuh>
#include <cub/iterator/cache_modified_output_iterator.cuh>
#include <cub/util_ptx.cuh>
#include <cub/util_type.cuh>
)";

}  // namespace tiletune::compile_detail
