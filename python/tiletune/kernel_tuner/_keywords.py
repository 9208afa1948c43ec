"""The keywords of tune_kernel / run_kernel beyond the ones every Kernel Tuner release takes:
Kernel Tuner 1.4's tuning on several GPUs (`parallel`) and its parallel compilation
(`parallel_compile`) mapped
onto tiletune's device pool and compile threads; the distribution options of Kernel Tuner's
development releases and older runners, and what is outside CUDA kernel tuning, refused by name;
any other keyword refused as one Kernel Tuner does not have. Never a bare TypeError: a script
that passes a keyword gets a KernelTunerArgumentError naming it."""
from ._errors import KernelTunerArgumentError

# Keywords a Kernel Tuner script may pass that tiletune does not honour, and why.
REFUSED = {
    "parallel_workers": "Ray workers do not map: parallel=True tunes on every GPU of this host (tiletune's device "
                        "pool), parallel=N on the first N",
    "parallel_mode": "Kernel Tuner's development spelling; use parallel=True (every GPU of this host) or parallel=N",
    "num_gpus": "use parallel=N: tiletune's device pool takes the first N GPUs of this host",
    "remote_mode": "remote GPUs through Ray do not map: tiletune tunes the GPUs of this host (parallel=True), and "
                   "many hosts by shards (`tiletune tune --shard I/N`, docs/guides/many-gpus.md)",
    "ray_address": "Ray does not map: tiletune tunes the GPUs of this host (parallel=True), and many hosts by shards "
                   "(`tiletune tune --shard I/N`)",
    "scheduler": "Kernel Tuner's old Dask scheduler does not map: parallel=True tunes on every GPU of this host",
    "parallel_runner": "Kernel Tuner's old noodles runner does not map: parallel=True tunes on every GPU of this host",
    "call_function": "a Python kernel (a DSL function called per config) is outside CUDA kernel tuning: tiletune "
                     "tunes CUDA C++ kernels",
}


def refuse_extra(kwargs, function):
    """Raises for the first keyword the function does not take (a known one with its reason)."""
    for name in kwargs:
        if name in REFUSED:
            raise KernelTunerArgumentError(name, REFUSED[name])
        raise KernelTunerArgumentError(name, f"not an argument of Kernel Tuner 1.4's {function}")


def device_argv(parallel, device, device_count=None):
    """tiletune tune's device options: --device K, or the device pool for parallel (True: every
    GPU of the host, `--devices all`; N: the first N, `--devices 0,...,N-1`). device_count, when
    known, bounds N."""
    if parallel is False or parallel is None:
        return ["--device", str(device)]
    if parallel is True:
        return ["--devices", "all"]
    import numbers
    if not isinstance(parallel, numbers.Integral) or parallel < 1:
        raise KernelTunerArgumentError("parallel", f"{parallel!r} is neither True/False nor a number of GPUs >= 1")
    if device_count is not None and parallel > device_count:
        raise KernelTunerArgumentError("parallel", f"{int(parallel)} GPUs asked for; this host has {device_count}")
    return ["--devices", ",".join(str(i) for i in range(int(parallel)))]


def compile_threads_argv(parallel_compile):
    """tiletune tune's --threads for parallel_compile (True: one per core, tiletune's default)."""
    if parallel_compile is False or parallel_compile is None or parallel_compile is True:
        return []
    import numbers
    if not isinstance(parallel_compile, numbers.Integral) or not 1 <= parallel_compile <= 256:
        raise KernelTunerArgumentError("parallel_compile", f"{parallel_compile!r} is neither True/False nor a number "
                                                           "of compile threads from 1 to 256")
    return ["--threads", str(int(parallel_compile))]
