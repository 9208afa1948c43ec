"""The kernel_source argument of a Kernel Tuner script: a file name, code, a list (the first the
kernel, the others files it includes) or a code generator (a function of the params)."""
import os

from ._errors import KernelTunerArgumentError, KernelTunerTypeError


def looks_like_a_filename(text):
    """Kernel Tuner's rule (util.looks_like_a_filename): a short string with a source suffix and
    none of the characters or words code has."""
    if not isinstance(text, str) or len(text) > 250:
        return False
    if any(c in text for c in "();{}\\"):
        return False
    if any(w in text for w in ("__global__ ", "__kernel ", "void ", "float ")):
        return False
    return any(s in text for s in (".c", ".opencl", ".F", ".jl"))


class KernelSource:
    """What kernel_source stands for: `path` (a file, used where it is so that its includes
    resolve), `code` (text to write), or `generator` (called per config)."""

    def __init__(self, kernel_source, lang):
        self.path = None
        self.code = None
        self.generator = None
        self.aux = []
        primary = kernel_source
        if isinstance(kernel_source, (list, tuple)):
            if not kernel_source:
                raise KernelTunerArgumentError("kernel_source", "an empty list")
            primary, self.aux = kernel_source[0], list(kernel_source[1:])
            for aux in self.aux:
                if not looks_like_a_filename(str(aux)) and not isinstance(aux, os.PathLike):
                    raise ValueError("When passing multiple kernel sources, the secondary entries must be filenames")
                if not os.path.isfile(aux):
                    raise KernelTunerArgumentError("kernel_source", f"the auxiliary file {str(aux)!r} does not exist")
        if callable(primary):
            if lang is None:
                raise KernelTunerTypeError("lang", "Please specify language when using a code generator function")
            self.generator = primary
        elif isinstance(primary, os.PathLike) or looks_like_a_filename(primary):
            path = os.fspath(primary)
            if not os.path.isfile(path):
                raise KernelTunerArgumentError("kernel_source", f"the file {path!r} does not exist")
            self.path = os.path.abspath(path)
        elif isinstance(primary, str):
            self.code = primary
        else:
            raise KernelTunerTypeError("kernel_source", "Error kernel_source is not a string nor a callable function")

    def text(self):
        """The source text where there is one (not for a generator)."""
        if self.code is not None:
            return self.code
        if self.path is not None:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                return f.read()
        return None


def detect_language(kernel_source, lang):
    """Kernel Tuner's languages, of which tiletune takes CUDA in its three spellings."""
    if lang is None:
        text = kernel_source.text()
        if text is None:  # a generator: Kernel Tuner asks for lang itself
            raise KernelTunerTypeError("lang", "Please specify language when using a code generator function")
        lowered = text.lower()
        lang = "CUDA" if "__global__" in lowered else "OpenCL" if "__kernel" in lowered else "C"
    upper = str(lang).upper()
    if upper in ("CUDA", "NVCUDA", "CUPY"):
        return upper
    why = _OTHER_LANGUAGES.get(upper, "a language other than CUDA")
    raise KernelTunerArgumentError(
        "lang", f"{lang!r} does not map: {why} is outside CUDA kernel tuning; tiletune tunes CUDA kernels "
                "(lang='CUDA', 'nvcuda' or 'cupy')")


# Kernel Tuner's other languages, and what tuning in each one means there.
_OTHER_LANGUAGES = {
    "C": "host code in C (a function that launches and times its own kernels, Kernel Tuner's C backend)",
    "C++": "host code in C++ (Kernel Tuner's C backend)",
    "FORTRAN": "host code in Fortran (Kernel Tuner's C backend)",
    "OPENCL": "an OpenCL kernel",
    "HIP": "a HIP kernel (AMD GPUs)",
    "JULIA": "a Julia kernel",
    "OPENACC": "OpenACC host code",
}
