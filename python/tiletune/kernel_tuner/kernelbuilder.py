"""Kernel Tuner's kernelbuilder.PythonKernel: one config of a CUDA kernel called like a Python
function, its outputs returned as a list of arrays. Each call runs the kernel once through
run_kernel (tiletune's worker, in a process of its own), so a call costs a launch of the CLI, not
a kernel launch: it is for checking a kernel from Python, not for an application's inner loop.
The arguments marked as inputs are those of the call; the others keep the values given at
construction. Arguments that live on the GPU (cupy arrays, torch tensors) are written back in
place, as they are when Kernel Tuner launches on them."""
from . import run_kernel
from ._errors import KernelTunerArgumentError


class PythonKernel:
    def __init__(self, kernel_name, kernel_string, problem_size, arguments, params, inputs=None, outputs=None,
                 device=0, platform=0, block_size_names=None, grid_div_x=None, grid_div_y=None, grid_div_z=None,
                 verbose=True, lang=None):
        for name, flags in (("inputs", inputs), ("outputs", outputs)):
            if flags is not None and len(flags) != len(arguments):
                raise KernelTunerArgumentError(name, f"{len(flags)} flags for {len(arguments)} arguments")
        self.call = dict(kernel_name=kernel_name, kernel_source=kernel_string, problem_size=problem_size,
                         params=dict(params), grid_div_x=grid_div_x, grid_div_y=grid_div_y, grid_div_z=grid_div_z,
                         lang=lang, device=device, platform=platform, block_size_names=block_size_names,
                         quiet=not verbose)
        self.arguments = list(arguments)
        self.inputs = list(inputs) if inputs else [True] * len(arguments)
        self.outputs = list(outputs) if outputs else [True] * len(arguments)

    def run_kernel(self, args):
        """Runs the kernel once on args (the inputs among them) and returns the outputs that are
        arrays, in a list."""
        if len(args) != len(self.arguments):
            raise KernelTunerArgumentError("args", f"{len(args)} arguments for a kernel built with "
                                                   f"{len(self.arguments)}")
        current = [a if self.inputs[i] else self.arguments[i] for i, a in enumerate(args)]
        after = run_kernel(arguments=current, **self.call)
        results = []
        for i, (given, out) in enumerate(zip(args, after)):
            if not self.outputs[i] or not hasattr(given, "shape"):
                continue
            if type(given).__module__.split(".")[0] in ("cupy", "torch"):
                _write_back(given, out)
                results.append(given)
            else:
                results.append(out)
        return results

    def update_gpu_args(self, args):
        """Keeps args as the arguments of the next calls (Kernel Tuner copies them to the GPU)."""
        self.arguments = list(args)
        return self.arguments

    def __call__(self, *args):
        return self.run_kernel(args)


def _write_back(device_array, host):
    module = type(device_array).__module__.split(".")[0]
    if module == "cupy":
        import cupy
        device_array[...] = cupy.asarray(host).reshape(device_array.shape)
    else:
        import torch
        device_array.copy_(torch.from_numpy(host.reshape(tuple(device_array.shape))))


__all__ = ["PythonKernel"]
