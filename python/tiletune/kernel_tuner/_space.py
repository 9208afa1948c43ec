"""A Kernel Tuner script's tuning problem written as a tiletune space: the YAML, the kernel's
source, the inputs and expected outputs as .npy files and, where Python must decide, the allowed
configs as CSV. Kernel Tuner's rules are kept exactly (kt_semantics: its #defines, its grid
ceil(problem_size / product of the grid divisors), its default block of 256 x 1 x 1, its cap of
1024 threads per block); what tiletune's own expressions cannot say is said in Python
(`{python: ...}`) or, for Python callables, computed here per config and listed."""
import csv
import hashlib
import math
import os
import re
import shutil

from ._arguments import Argument, check_answer, save_npy, scalar_text, write_answer
from ._errors import KernelTunerArgumentError, KernelTunerTypeError
from ._params import Param, Restrictions, in_tiletune_subset, make_params, product, yaml_quote

DIMS = ("x", "y", "z")
DEFAULT_BLOCK = (256, 1, 1)
MAX_THREADS = 1024                # every CUDA GPU's threads per block, Kernel Tuner's max_threads
MAX_PYTHON_CONFIGS = 10_000_000   # configs evaluated here when Python must decide
DERIVED_PREFIX = "tiletune_kt_"


def _is_int(v):
    import numpy
    return isinstance(v, (int, numpy.integer)) and not isinstance(v, bool)


class Derived:
    """A value computed in Python per config (a callable's answer): a param of its own whose
    value the allowed list pairs with each config. Stripped from the results."""

    def __init__(self, name, compute, integer=True):
        self.name = name
        self.compute = compute      # config dict -> value
        self.integer = integer


class Space:
    """What tune_kernel / run_kernel hand the engine. Attributes the caller reads:
    yaml_path, family, params (the tunables), derived (names), arguments, synced (indexes of
    the arguments whose outputs the check sees), problem (name -> value), notes."""

    def __init__(self, directory, kernel_name, source, lang, problem_size, arguments, tune_params, *,
                 grid_div=(None, None, None), block_size_names=None, restrictions=None, answer=None,
                 verify=None, atol=1e-6, smem_args=None, cmem_args=None, texmem_args=None,
                 compiler_options=None, defines=None, check_command=None, exclude=None, family=None,
                 simulation=False):
        self.directory = directory
        self.kernel_name = kernel_name
        self.notes = []
        self.params = make_params(tune_params, simulation)
        self.by_name = {p.name: p for p in self.params}
        self.block_names = _block_names(block_size_names, tune_params)
        self.family = family or _family_name(kernel_name)
        self.derived = []   # values computed in Python per config (Derived)
        self.options = []   # NVRTC options, Kernel Tuner's #defines first
        if texmem_args:
            raise KernelTunerArgumentError("texmem_args", "texture memory does not map: tiletune passes buffers, "
                                                          "scalars and module globals (cmem_args)")
        self._launch(problem_size, grid_div, smem_args)
        self._defines(defines)
        self._compiler_options(compiler_options)
        self._data(arguments, answer, verify, atol, check_command, cmem_args)
        self.source_path = self._source(source, lang)
        self._configs(restrictions, exclude or set())
        self.yaml_path = os.path.join(directory, "space.yaml")
        with open(self.yaml_path, "w", encoding="utf-8") as f:
            f.write(self.yaml())

    def _launch(self, problem_size, grid_div, smem_args):
        self.problem = {}
        self.grid = [self._grid(d, problem_size, grid_div[d]) for d in range(3)]
        self.block = [self._block(d) for d in range(3)]
        self.shared = self._shared(smem_args)

    def _data(self, arguments, answer, verify, atol, check_command, cmem_args):
        """The arguments as buffers and scalars (their data written), the outputs the check sees
        (Kernel Tuner's should_sync), the answer, the module globals."""
        self.arguments = [Argument(i, a) for i, a in enumerate(arguments)]
        for a in self.arguments:
            if a.is_array:
                save_npy(os.path.join(self.directory, f"{a.name}.npy"), a.array)
        self.answer = answer
        if answer is not None and len(answer) != len(self.arguments):
            raise KernelTunerTypeError("answer", "The length of argument list and provided results do not match.")
        if answer is not None and verify is None:
            check_answer(self.arguments, answer)
        self.verify_python = verify is not None or check_command is not None
        if answer is not None:
            self.synced = [a.index for a in self.arguments if answer[a.index] is not None]
        elif self.verify_python:
            self.synced = [a.index for a in self.arguments if a.is_array]
        else:
            self.synced = []
        self.atol = atol
        self.check_command = check_command
        self.cmem = self._cmem(cmem_args)

    def _configs(self, restrictions, exclude):
        """The constraints tiletune evaluates, and, where Python must decide (a callable, a value
        derived per config, a cache's configs to leave out), the allowed configs."""
        self._restrictions = Restrictions(restrictions, self.params)
        max_threads = self._max_threads()
        self.constraints = ([max_threads] if max_threads else []) + \
            [{"python": c} for c in self._restrictions.constraints]
        self.allowed = None          # configs listed in allowed.csv, when Python decides
        self.valid_keys = []         # then: every valid config's labels, in Kernel Tuner's order
        self.served_keys = []        # then: those a Kernel Tuner cache answers (left out of the list)
        if self._restrictions.in_python or self.derived or exclude:
            self.allowed = self._allowed(self._restrictions, exclude)

    # -- launch ------------------------------------------------------------------------------

    def _name_term(self, name):
        p = self.by_name[name]
        return name if p.kind == "integer" else f"int({name})"

    def _divisor_terms(self, spec, d):
        """Kernel Tuner's grid divisor of dimension d as terms: ("name", n), ("int", v),
        ("expr", text) or ("call", f); no term is a divisor of 1."""
        if spec is None:
            name = self.block_names[d]
            return [("name", name)] if name in self.by_name else []
        if isinstance(spec, (list, tuple)):
            return [t for item in spec for t in self._divisor_terms_item(item, d)]
        return self._divisor_terms_item(spec, d)

    def _divisor_terms_item(self, item, d):
        where = f"grid_div_{DIMS[d]}"
        if item is None:
            return []
        if _is_int(item):
            return [("int", int(item))]
        if isinstance(item, str):
            text = item.strip()
            if text in self.by_name:
                return [("name", text)]
            if not in_tiletune_subset(text, self.params):
                return [("call", _eval_string_divisor(text))]
            return [("expr", text)]
        if callable(item):
            return [("call", item)]
        raise ValueError("Error: unrecognized type in grid divisor list, should be any of int, str, callable, or "
                         f"iterable ({where})")

    def _grid(self, d, problem_size, grid_div):
        """Dimension d of the grid: a tiletune expression, {python: ...}, or a derived param."""
        dim = DIMS[d]
        sizes = _problem_sizes(problem_size)
        terms = self._divisor_terms(grid_div, d)
        size = sizes[d] if sizes is not None else None
        if callable(problem_size) or any(kind == "call" for kind, _ in terms) or \
                (isinstance(size, str) and not in_tiletune_subset(size, self.params)):
            derived = Derived(f"{DERIVED_PREFIX}grid_{dim}", lambda config, d=d: _kt_grid(
                config, problem_size, grid_div, d, self.block_names))
            self.derived.append(derived)
            return derived.name
        if _is_int(size):
            name = f"problem_size_{dim}"
            if name in self.by_name:
                raise KernelTunerArgumentError("tune_params", f"{name!r} is the name tiletune gives problem_size[{d}]: "
                                                              "rename the param")
            if d < len(_as_tuple(problem_size)):
                self.problem[name] = int(size)
                size_term = name
            else:
                size_term = "1"
        else:
            size_term = None  # a string: Python
        native = size_term is not None and all(k == "int" and v > 0 or k == "name" and self.by_name[v].kind == "integer"
                                               for k, v in terms)
        if native:
            divisor = " * ".join(str(v) for _, v in terms)
            return f"ceil_div({size_term}, {divisor})" if divisor else size_term
        size_py = size_term if size_term is not None else f"int({size})"
        parts = [str(v) if k == "int" else self._name_term(v) if k == "name" else f"int({v})" for k, v in terms]
        return {"python": f"ceil({size_py} / ({' * '.join(parts)}))" if parts else size_py}

    def _block(self, d):
        name = self.block_names[d]
        if name in self.by_name:
            return name if self.by_name[name].kind == "integer" else {"python": f"int({name})"}
        return str(DEFAULT_BLOCK[d])

    def _shared(self, smem_args):
        if not smem_args:
            return "0"
        if not isinstance(smem_args, dict) or set(smem_args) - {"size"}:
            raise KernelTunerArgumentError("smem_args", "only {'size': bytes} maps (as in Kernel Tuner)")
        size = smem_args.get("size", 0)
        if _is_int(size):
            return str(int(size))
        if isinstance(size, str) and in_tiletune_subset(size, self.params):
            return {"python": f"int({size})"}
        if isinstance(size, str):
            compute = _eval_string_divisor(size)
        elif callable(size):
            compute = size
        else:
            raise KernelTunerArgumentError("smem_args['size']", f"expected an int, a string or a function, got "
                                                                f"{type(size).__name__}")
        derived = Derived(f"{DERIVED_PREFIX}smem", lambda config, f=compute: int(f(config)))
        self.derived.append(derived)
        return derived.name

    def _max_threads(self):
        """Kernel Tuner's searchspace bound: the default-named block params present multiply to at
        most max_threads."""
        names = [n for n in ("block_size_x", "block_size_y", "block_size_z") if n in self.by_name]
        if not names:
            return None
        if all(self.by_name[n].kind == "integer" for n in names):
            return " * ".join(names) + f" <= {MAX_THREADS}"
        return {"python": " * ".join(f"int({n})" for n in names) + f" <= {MAX_THREADS}"}

    # -- compiler ------------------------------------------------------------------------------

    def _grid_option(self, d):
        g = self.grid[d]
        if isinstance(g, dict):
            return "${python: " + g["python"] + "}"
        return "${" + g + "}"

    def _defines(self, defines):
        """Kernel Tuner's prefix: grid_size_x/y/z, the block names (256, 1, 1 when not tuned),
        then (tiletune's own #defines) the params, then kernel_tuner 1."""
        if defines is None:
            for d in range(3):
                self.options.append(f"-Dgrid_size_{DIMS[d]}={self._grid_option(d)}")
            for d, name in enumerate(self.block_names):
                if name not in self.by_name:
                    self.options.append(f"-D{name}={DEFAULT_BLOCK[d]}")
            self.options.append("-Dkernel_tuner=1")
            return
        if not isinstance(defines, dict):
            raise KernelTunerArgumentError("defines", "expected a dict of name -> value, or None")
        for name, value in defines.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"name is not a valid identifier: {name}")
            if name in self.by_name:
                raise KernelTunerArgumentError(f"defines[{name!r}]", "names a tunable param too: tiletune #defines "
                                                                     "every param itself")
            if callable(value) or (isinstance(value, str) and _names_in(value) & set(self.by_name)):
                compute = value if callable(value) else (lambda config, v=value: _replace_params(v, config))
                self.derived.append(Derived(name, compute, integer=False))
                continue
            text = str(value)
            if "\n" in text or "\r" in text:
                raise KernelTunerArgumentError(f"defines[{name!r}]", "a value of several lines does not map")
            self.options.append(f"-D{name}={text}")

    def _compiler_options(self, compiler_options):
        if compiler_options is None:
            return
        if not isinstance(compiler_options, (list, tuple)):
            raise KernelTunerArgumentError("compiler_options", "expected a list of strings")
        skip_next = False
        for option in compiler_options:
            if skip_next:
                skip_next = False
                continue
            if not isinstance(option, str):
                raise KernelTunerArgumentError("compiler_options", f"{option!r} is not a string")
            if option in ("-arch", "--gpu-architecture", "-code"):
                skip_next = True
                self.notes.append(f"compiler_options: {option} left out: tiletune compiles for the GPU it tunes on")
                continue
            if option.startswith(("-arch=", "--gpu-architecture=", "-code=", "-gencode")):
                self.notes.append(f"compiler_options: {option} left out: tiletune compiles for the GPU it tunes on")
                continue
            if option.startswith(("-Xcompiler", "--compiler-options")):
                self.notes.append(f"compiler_options: {option} left out: it is for nvcc's host compiler, and NVRTC "
                                  "compiles device code only")
                continue
            # nvcc's options for the host side (its optimization level, its host compiler and linker):
            # NVRTC compiles device code only and rejects them, which would fail every config.
            if option in ("-ccbin", "--compiler-bindir", "-Xlinker", "--linker-options"):
                skip_next = True
                self.notes.append(f"compiler_options: {option} left out: it is for nvcc's host side, and NVRTC "
                                  "compiles device code only")
                continue
            if option.lstrip("-") == "allow-unsupported-compiler" or re.fullmatch(r"-O[0-3]?", option) or \
                    option.startswith(("-ccbin=", "--compiler-bindir=", "-Xlinker=", "--linker-options=")):
                self.notes.append(f"compiler_options: {option} left out: it is for nvcc's host side, and NVRTC "
                                  "compiles device code only")
                continue
            self.options.append(option)

    # -- data ----------------------------------------------------------------------------------

    def _cmem(self, cmem_args):
        out = []
        if not cmem_args:
            return out
        if not isinstance(cmem_args, dict):
            raise KernelTunerArgumentError("cmem_args", "expected a dict of symbol name -> numpy array or scalar")
        import numpy
        for k, (symbol, value) in enumerate(cmem_args.items()):
            arg = Argument(0, value)
            array = arg.array if arg.is_array else numpy.asarray(value).reshape(1)
            file = f"cmem{k}.npy"
            save_npy(os.path.join(self.directory, file), array)
            out.append((symbol, arg.type, int(array.size), file))
        return out

    def _source(self, source, lang):
        """The kernel's file: where it is, or the code written out; with auxiliary files (Kernel
        Tuner's source list), the kernel written out with each auxiliary file's name replaced by
        its copy's beside it, as Kernel Tuner replaces it by a temporary copy's path."""
        self._renames = self._copy_aux(source)
        if source.generator is None:
            if source.path is not None and not self._renames:
                return source.path
            # Its other includes still resolve where it is, and (Kernel Tuner writes the copy into the
            # working directory) from there.
            if source.path is not None:
                self.options.append("-I" + os.path.dirname(source.path))
            self.options.append("-I" + os.getcwd())
            path = os.path.join(self.directory, "kernel.cu")
            with open(path, "w", encoding="utf-8") as f:
                f.write(self._renamed(source.text()))
            return path
        # A code generator: each config's source, one file holding each distinct one under #if.
        variants = {}
        name = f"{DERIVED_PREFIX}source"
        self.derived.append(Derived(name, lambda config: variants.setdefault(
            self._renamed(_generated(source.generator, config)), len(variants))))
        self._variants = variants
        return os.path.join(self.directory, "kernel.cu")

    def _copy_aux(self, source):
        renames = []
        for i, aux in enumerate(source.aux):
            name = os.fspath(aux)
            copy = f"aux{i}_{os.path.basename(name)}"
            shutil.copyfile(name, os.path.join(self.directory, copy))
            renames.append((name, copy))
        return renames

    def _renamed(self, text):
        for name, copy in self._renames:
            text = text.replace(name, copy)
        return text

    def _write_variants(self):
        path = os.path.join(self.directory, "kernel.cu")
        with open(path, "w", encoding="utf-8") as f:
            f.write("// The sources a Kernel Tuner code generator returned, one per distinct text: tiletune_kt_source "
                    "(a derived param the allowed configs pair with each config) picks one.\n")
            for text, i in sorted(self._variants.items(), key=lambda kv: kv[1]):
                f.write(f"#{'if' if i == 0 else 'elif'} {DERIVED_PREFIX}source == {i}\n#line 1\n{text}\n")
            f.write("#endif\n")
        if os.path.getsize(path) > 16 << 20:
            raise KernelTunerArgumentError("kernel_source", f"the code generator gave {len(self._variants)} distinct "
                                                            "sources, more than 16 MiB together")

    # -- the configs Python decides ------------------------------------------------------------

    def _allowed(self, restriction_sets, exclude):
        namespace = _namespace()
        count = math.prod(len(p.values) for p in self.params)
        if count > MAX_PYTHON_CONFIGS:
            raise KernelTunerArgumentError(
                "restrictions", f"{count} configs would have to be evaluated in Python (a restriction function, a "
                                "value computed per config, or a cache to resume): at most "
                                f"{MAX_PYTHON_CONFIGS}; write the restrictions as strings")
        every = Restrictions([c["python"] if isinstance(c, dict) else c for c in self.constraints], self.params)
        every.in_python += [("str", c) for c in every.constraints]
        rows = []
        for config in product(self.params):
            if not every.check(config, namespace) or not restriction_sets.check(config, namespace):
                continue
            key = tuple(p.label(config[p.name]) for p in self.params)
            self.valid_keys.append(key)
            if key in exclude:
                self.served_keys.append(key)
                continue
            rows.append([*key, *[_derived_value(d, config) for d in self.derived]])
        if any(d.name.endswith("source") for d in self.derived):
            self._write_variants()
        self.derived_values = {}
        for k, d in enumerate(self.derived):
            values = []
            for row in rows:
                v = row[len(self.params) + k]
                if v not in values:
                    values.append(v)
            self.derived_values[d.name] = values
        path = os.path.join(self.directory, "allowed.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow([p.name for p in self.params] + [d.name for d in self.derived])
            writer.writerows(rows)
        return len(rows)

    def product_keys(self):
        """Every valid config's labels in Kernel Tuner's order (with an allowed list)."""
        return self.valid_keys

    def count_valid(self, limit=1_000_000):
        """The configs that pass every restriction, counted in Python as Kernel Tuner counts them;
        None when the product is over `limit`."""
        if self.allowed is not None:
            return len(self.valid_keys)
        if math.prod(len(p.values) for p in self.params) > limit:
            return None
        namespace = _namespace()
        every = Restrictions([c["python"] if isinstance(c, dict) else c for c in self.constraints], self.params)
        every.in_python += [("str", c) for c in every.constraints]
        return sum(1 for config in product(self.params)
                   if every.check(config, namespace) and self._restrictions.check(config, namespace))

    # -- the YAML ------------------------------------------------------------------------------

    def yaml(self):
        q = yaml_quote
        lines = [f"# Written by tiletune.kernel_tuner from a Kernel Tuner script: tune_kernel({self.kernel_name!r}, ...).",
                 f"kernel: {self.family}",
                 f"source: {q(self.source_path)}",
                 f"entry: {q(self.kernel_name)}"]
        if self.options:
            lines.append("options: [" + ", ".join(q(o) for o in self.options) + "]")
        if self.problem:
            lines.append("problem:")
            lines += [f"  {name}: [{value}]" for name, value in self.problem.items()]
        lines.append("params:")
        lines += [f"  {p.name}: {p.yaml_values()}" for p in self.params]
        for d in self.derived:
            values = self.derived_values.get(d.name, [0]) if self.allowed is not None else [0]
            if all(_is_int(v) for v in values):
                lines.append(f"  {d.name}: [" + ", ".join(str(int(v)) for v in values) + "]   # derived per config")
            else:
                lines.append(f"  {d.name}: [" + ", ".join(q(str(v)) for v in values) + "]   # derived per config")
        if self.constraints:
            lines.append("constraints:")
            lines += [f"  - {_expr(c)}" for c in self.constraints]
        if self.allowed is not None:
            lines.append("allowed: {file: allowed.csv}   # decided in Python per config")
        lines.append("launch:")
        lines.append("  grid: [" + ", ".join(_expr(g) for g in self.grid) + "]")
        lines.append("  block: [" + ", ".join(_expr(b) for b in self.block) + "]")
        lines.append(f"  shared_bytes: {_expr(self.shared)}")
        arrays = [a for a in self.arguments if a.is_array]
        if arrays:
            lines.append("buffers:")
            for a in arrays:
                output = ", output: true" if a.index in self.synced else ""
                lines.append(f"  {a.name}: {{type: {a.type}, count: {a.count()}, init: {{file: {a.name}.npy}}{output}}}")
        if self.cmem:
            lines.append("globals:")
            for symbol, type_, count, file in self.cmem:
                lines.append(f"  {q(symbol)}: {{type: {type_}, count: {count}, init: {{file: {file}}}}}")
        args = [a.name if a.is_array else f"{{value: {scalar_text(a.original)}, type: {a.type}}}"
                for a in self.arguments]
        lines.append("args: [" + ", ".join(args) + "]")
        lines += self._verify_lines()
        return "\n".join(lines) + "\n"

    def _verify_lines(self):
        if not self.synced and not self.verify_python:
            return ["verify: none"]
        lines = ["verify:"]
        if self.answer is not None and not self.verify_python:
            lines.append("  reference:")
            lines.append("    files:")
            for i in self.synced:
                file = write_answer(self.directory, self.arguments[i], self.answer[i])
                lines.append(f"      {self.arguments[i].name}: {file}")
            # numpy.allclose: |got - want| <= atol + 1e-05 * |want|
            lines.append(f"  rtol: 1e-05\n  atol: {float(self.atol)!r}")
        else:
            lines.append("  reference: none")
        if self.check_command is not None:
            lines.append("  command: [" + ", ".join(yaml_quote(c) for c in self.check_command) + "]")
            # Only what Kernel Tuner hands the verify function leaves the GPU for the check: the
            # arguments whose answer entry is not None, else every array. (An answer of only None
            # entries hands it nothing; tiletune needs at least one name, so then it hands all.)
            if self.synced:
                lines.append("  command_buffers: [" + ", ".join(self.arguments[i].name for i in self.synced) + "]")
        return lines


def _expr(e):
    if isinstance(e, dict):
        return "{python: " + yaml_quote(e["python"]) + "}"
    return yaml_quote(e)


def _block_names(block_size_names, tune_params=()):
    """Kernel Tuner's block names: the defaults, spelled as the params spell them in any case
    (BLOCK_SIZE_X), or the ones given, completed with the defaults."""
    defaults = ["block_size_x", "block_size_y", "block_size_z"]
    if block_size_names is None:
        return [next((k for k in tune_params if k.lower() == d), d) for d in defaults]
    if not isinstance(block_size_names, list):
        raise ValueError("block_size_names should be a list of strings!")
    if len(block_size_names) > 3:
        raise ValueError("block_size_names should not contain more than 3 names!")
    if not all(isinstance(n, str) for n in block_size_names):
        raise ValueError("block_size_names should contain only strings!")
    return list(block_size_names) + ["block_size_x", "block_size_y", "block_size_z"][len(block_size_names):]


def _family_name(kernel_name):
    """The family name in tiletune's cache: the kernel's name (its template arguments left out),
    prefixed kt_ so that it never takes a shipped family's name."""
    base = kernel_name.split("<")[0].strip()
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "kernel"
    return "kt_" + base


def _as_tuple(problem_size):
    if isinstance(problem_size, (list, tuple)):
        return tuple(problem_size)
    return (problem_size,)


def _problem_sizes(problem_size):
    """Kernel Tuner's problem size as three entries (padded with 1), None for a callable."""
    if callable(problem_size):
        return None
    sizes = list(_as_tuple(problem_size))
    if not 1 <= len(sizes) <= 3:
        raise KernelTunerArgumentError("problem_size", "expected an int, a string or a tuple of 1 to 3 of them")
    for s in sizes:
        if not (_is_int(s) or isinstance(s, str)):
            raise KernelTunerTypeError("problem_size", "Error: problem_size should only contain strings or integers")
    return sizes + [1] * (3 - len(sizes))


def _names_in(text):
    import re
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def _replace_params(text, config):
    """Kernel Tuner's replace_param_occurrences: every token that is a param's name becomes its value."""
    import re
    return "".join(str(config[t]) if t in config else t for t in re.split("([a-zA-Z0-9_]+)", text))


def _namespace():
    """The names Kernel Tuner's strings are evaluated with: the builtins, numpy (as np) and math."""
    import builtins
    import numpy
    return {"__builtins__": builtins, "np": numpy, "numpy": numpy, "math": math}


def _eval_string_divisor(text):
    """A string Kernel Tuner evaluates (int(eval(...)) of the text with the params substituted)."""
    namespace = _namespace()
    return lambda config: int(eval(_replace_params(text, config), namespace))


def _kt_grid(config, problem_size, grid_div, d, block_names):
    """Kernel Tuner's util.get_grid_dimensions for one dimension, in Python, exactly."""
    import numpy
    sizes = problem_size(config) if callable(problem_size) else problem_size
    sizes = list(_as_tuple(sizes)) + [1, 1, 1]
    size = sizes[d]
    if isinstance(size, str):
        size = _eval_string_divisor(size)(config)

    def divisor(item):
        if item is None:
            return 1
        if callable(item):
            return item(config)
        if isinstance(item, str):
            return _eval_string_divisor(item)(config)
        return item

    if grid_div is None:
        div = config.get(block_names[d], 1)
    elif isinstance(grid_div, (list, tuple)):
        div = numpy.prod([divisor(i) for i in grid_div]) if grid_div else 1
    else:
        div = divisor(grid_div)
    return int(numpy.ceil(float(size) / float(div)))


def _generated(generator, config):
    text = generator(dict(config))
    if not isinstance(text, str):
        raise KernelTunerArgumentError("kernel_source", f"the code generator returned {type(text).__name__}, not a "
                                                        "string of source")
    return text


def _derived_value(derived, config):
    value = derived.compute(config)
    item = getattr(value, "item", None)
    value = item() if item is not None else value
    if derived.integer:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not _is_int(value):
            raise KernelTunerArgumentError(derived.name.replace(DERIVED_PREFIX, ""),
                                           f"the value {value!r} for {config} is not an integer")
    return value if derived.integer else str(value)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()
