"""The arguments, cmem_args and answer of a Kernel Tuner script as tiletune buffers, globals and
scalar arguments, their data written as .npy files, losslessly (each array's own dtype and
bytes; each scalar's exact value)."""
import os

from ._errors import KernelTunerArgumentError, KernelTunerTypeError

# numpy dtype name -> (tiletune element type, lanes): complex numbers are CUDA's float2/double2.
_TYPES = {
    "bool": ("uint8", 1), "int8": ("int8", 1), "uint8": ("uint8", 1), "int16": ("int16", 1),
    "uint16": ("uint16", 1), "int32": ("int", 1), "uint32": ("uint", 1), "int64": ("int64", 1),
    "uint64": ("uint64", 1), "float16": ("half", 1), "float32": ("float", 1), "float64": ("double", 1),
    "complex64": ("float2", 2), "complex128": ("double2", 2),
}


def _numpy():
    import numpy
    return numpy


def host_array(value, where):
    """A numpy array for an ndarray, a cupy array or a torch tensor; None for anything else."""
    np = _numpy()
    if isinstance(value, np.ndarray):
        return value
    module = type(value).__module__.split(".")[0]
    if module == "cupy":
        return value.get()
    if module == "torch":
        return value.detach().cpu().numpy()
    return None


def is_scalar(value):
    np = _numpy()
    return isinstance(value, np.generic)


def tiletune_type(dtype, where):
    name = dtype.name
    if name not in _TYPES:
        raise KernelTunerArgumentError(where, f"dtype {name} has no tiletune type (bool, int8 ... int64, uint8 ... "
                                              "uint64, float16, float32, float64, complex64, complex128 do)")
    return _TYPES[name]


def scalar_text(value):
    """A numpy scalar as YAML: its exact value (a float32 as the double it is, which reads back
    to the same float32)."""
    np = _numpy()
    if isinstance(value, np.bool_):
        return "1" if bool(value) else "0"
    if isinstance(value, np.integer):
        return str(int(value))
    if isinstance(value, np.floating):
        f = float(value)
        if f != f or f in (float("inf"), float("-inf")):
            raise KernelTunerArgumentError("arguments", f"the scalar {f!r} is not a finite number")
        return repr(f)
    raise KernelTunerArgumentError("arguments", f"a scalar of dtype {value.dtype} does not map")


def save_npy(path, array):
    """The array as a little-endian, C-ordered, one-dimensional .npy file (complex numbers as
    their real and imaginary parts, CUDA's float2 layout)."""
    np = _numpy()
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.dtype.byteorder == ">":
        flat = flat.astype(flat.dtype.newbyteorder("<"))
    if flat.dtype.kind == "c":
        flat = flat.view(np.float32 if flat.dtype.itemsize == 8 else np.float64)
    elif flat.dtype == np.bool_:
        flat = flat.view(np.uint8)
    np.save(path, flat, allow_pickle=False)


class Argument:
    """One kernel argument: an array (a buffer) or a numpy scalar."""

    def __init__(self, index, value):
        self.index = index
        self.name = f"arg{index}"
        self.original = value
        from .accuracy import Tunable
        if isinstance(value, Tunable):
            raise KernelTunerArgumentError(
                f"arguments[{index}]", f"a {type(value).__name__} (an array chosen per config by the param "
                f"{value.param_key!r}) does not map: a tiletune buffer has one type and content per space; tune each "
                "choice as a tune_kernel call of its own")
        self.array = host_array(value, f"arguments[{index}]")
        if self.array is None and not is_scalar(value):
            raise KernelTunerTypeError(f"arguments[{index}]", f"Argument at position {index} of type: {type(value)} should be of type np.ndarray, numpy "
                            "scalar, or HIP Python DeviceArray type")
        where = f"arguments[{index}]"
        if self.array is not None:
            if self.array.size == 0:
                raise KernelTunerArgumentError(where, "an empty array: tiletune allocates at least one element")
            self.type, self.lanes = tiletune_type(self.array.dtype, where)
        else:
            if isinstance(value, _numpy().complexfloating):
                raise KernelTunerArgumentError(where, "a complex scalar does not map onto a tiletune scalar argument")
            self.type, self.lanes = tiletune_type(value.dtype, where)

    @property
    def is_array(self):
        return self.array is not None

    def count(self):
        return int(self.array.size)


def check_answer(arguments, answer):
    """Kernel Tuner's checks of `answer` against the arguments (core._default_verify_function),
    made before any tuning."""
    np = _numpy()
    for i, (arg, ans) in enumerate(zip(arguments, answer)):
        if ans is None:
            continue
        expected = host_array(ans, f"answer[{i}]")
        if expected is None or not arg.is_array:
            raise KernelTunerTypeError(f"answer[{i}]", f"Element {i} of the expected results list is not a numpy/cupy ndarray, torch Tensor or "
                            "numpy scalar.")
        if not np.can_cast(arg.array.dtype, expected.dtype):
            raise KernelTunerTypeError(f"answer[{i}]", f"Element {i} of the expected results list has a dtype that is not compatible with the "
                            f"dtype of the kernel output: {expected.dtype} != {arg.array.dtype}.")
        if expected.size != arg.array.size:
            raise KernelTunerTypeError(f"answer[{i}]", f"Element {i} of the expected results list has a size different from the kernel argument: "
                            f"{expected.size} != {arg.array.size}.")


def write_answer(directory, arg, expected):
    """The expected output in the argument's own dtype (tiletune compares like types)."""
    np = _numpy()
    path = os.path.join(directory, f"answer{arg.index}.npy")
    save_npy(path, np.asarray(host_array(expected, "answer")).astype(arg.array.dtype, copy=False))
    return os.path.basename(path)
