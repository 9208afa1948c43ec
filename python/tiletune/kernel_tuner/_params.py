"""tune_params and restrictions of a Kernel Tuner script as a tiletune space sees them.

Each tunable becomes a param of the same name: integers as integers, numbers as real params,
strings as text params (their -D value is Python's str() of the value, as Kernel Tuner writes its
#defines). A restriction string that tiletune's Python interpreter evaluates exactly as Python
would (tiletune/python_expr.hpp's subset, over integer, real and text params) becomes a
`{python: ...}` constraint; anything else (a callable, a string outside the subset, params of
booleans or of mixed kinds) is evaluated here, in Python, into the allowed configs."""
import ast
import itertools
import math

from ._errors import KernelTunerArgumentError

# The functions tiletune's interpreter knows (tiletune::py::function_names), also as math.NAME.
TILETUNE_FUNCTIONS = frozenset((
    "abs", "all", "any", "bool", "ceil", "exp", "float", "floor", "int", "isqrt", "len", "list", "log", "log10",
    "log2", "max", "min", "pow", "prod", "range", "round", "sorted", "sqrt", "str", "sum", "tuple"))
_MODULES = frozenset(("math", "numpy", "np"))
FORBIDDEN_NAMES = ("grid_size_x", "grid_size_y", "grid_size_z", "time")
# Kernel Tuner's special params that change the GPU's power and clocks (NVMLObserver).
NVML_PARAMS = ("nvml_pwr_limit", "nvml_gr_clock", "nvml_mem_clock")


def _plain(v):
    """A numpy scalar as the Python value it holds."""
    item = getattr(v, "item", None)
    return item() if item is not None and not isinstance(v, (str, bytes)) else v


class Param:
    """One tunable: its Python values and how tiletune spells them."""

    def __init__(self, name, values):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"name is not a valid identifier: {name}")
        if not isinstance(values, (list, tuple)) or len(values) == 0:
            raise KernelTunerArgumentError(f"tune_params[{name!r}]", "expected a non-empty list of values")
        self.name = name
        self.values = [_plain(v) for v in values]
        kinds = {type(v) for v in self.values}
        if kinds <= {int}:
            self.kind = "integer"
        elif kinds <= {int, float} and not any(isinstance(v, bool) for v in self.values):
            self.kind = "real"
        elif kinds <= {str}:
            self.kind = "text"
        elif kinds <= {bool}:
            self.kind = "bool"   # 1 and 0 to tiletune, as import-t1 and import-kt-cache write booleans
        else:
            self.kind = "mixed"  # words too: str() of each value
        for v in self.values:
            if isinstance(v, float) and not math.isfinite(v):
                raise KernelTunerArgumentError(f"tune_params[{name!r}]", f"{v!r} is not a finite number")
            if self.kind != "integer" and self.kind != "real":
                label = str(v)
                if not label or len(label) > 128 or "\n" in label or "\r" in label:
                    raise KernelTunerArgumentError(
                        f"tune_params[{name!r}]", f"the value {label[:40]!r}... is not one line of 1 to 128 characters "
                        "(tiletune passes it as -D" + name + "=VALUE)")
        self.labels = [self.label(v) for v in self.values]
        if len(set(self.labels)) != len(self.labels):
            raise KernelTunerArgumentError(f"tune_params[{name!r}]", "a value is listed twice")
        self.value_of_label = dict(zip(self.labels, self.values))

    def yaml_values(self):
        if self.kind in ("integer", "bool"):
            return "[" + ", ".join(self.labels) + "]"
        if self.kind == "real":
            return "[" + ", ".join(repr(float(v)) if isinstance(v, float) else str(v) for v in self.values) + "]"
        return "[" + ", ".join(yaml_quote(label) for label in self.labels) + "]"

    def label(self, value):
        """A value as the space writes it: a boolean as 1 or 0, anything else as Python's str()."""
        value = _plain(value)
        if self.kind == "bool":
            return "1" if value else "0"
        return str(value)


def yaml_quote(text):
    """A double-quoted YAML scalar (the escapes YAML and JSON share)."""
    out = ['"']
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def make_params(tune_params, simulation=False):
    """The tunables; params that would set the GPU's power or clocks only in simulation, where
    they are data (published energy landscapes have them), as Kernel Tuner allows."""
    if not isinstance(tune_params, dict):
        raise KernelTunerArgumentError("tune_params", "expected a dict of name -> list of values")
    params = []
    for name, values in tune_params.items():
        if name in FORBIDDEN_NAMES:
            raise ValueError("Tune parameter " + name + " with value " + str(values) + " has a forbidden name!")
        if (name in NVML_PARAMS or name.startswith("nvml_")) and not simulation:
            raise KernelTunerArgumentError(
                f"tune_params[{name!r}]", "tiletune never changes the GPU's power limit or clocks "
                "(it measures the card as it finds it): tune this elsewhere")
        params.append(Param(name, values))
    return params


class _Subset(ast.NodeVisitor):
    """Whether an expression is in the part of Python tiletune's interpreter evaluates exactly."""

    _BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitOr, ast.BitXor,
               ast.BitAnd, ast.LShift, ast.RShift)
    _CMPOPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)

    def __init__(self, params):
        self.params = params
        self.ok = True
        self.locals = set()

    def fail(self):
        self.ok = False

    def generic_visit(self, node):
        allowed = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.USub, ast.UAdd, ast.Invert,
                   ast.Not, ast.Compare, ast.IfExp, ast.List, ast.Tuple, ast.Load, ast.Store) + self._BINOPS + \
            self._CMPOPS + (ast.BinOp,)
        if not isinstance(node, allowed):
            self.fail()
            return
        super().generic_visit(node)

    def visit_Constant(self, node):
        v = node.value
        if isinstance(v, bool) or v is None or isinstance(v, float):
            return
        if isinstance(v, int):
            if not -2**63 <= v < 2**63:
                self.fail()
            return
        if not isinstance(v, str) or not v.isascii():
            self.fail()

    def visit_Name(self, node):
        if node.id in self.locals:
            return
        p = self.params.get(node.id)
        if p is None or p.kind not in ("integer", "real", "text"):
            self.fail()

    def visit_BinOp(self, node):
        # Kernel Tuner keeps a config whose restriction divides by zero; tiletune drops it. Same
        # answer only where no divisor can be zero.
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and not self._nonzero(node.right):
            self.fail()
        self.generic_visit(node)

    def _nonzero(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value != 0
        if isinstance(node, ast.Name) and node.id in self.params and self.params[node.id].kind in ("integer", "real"):
            return all(v != 0 for v in self.params[node.id].values)
        return False

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Attribute):
            if not (isinstance(f.value, ast.Name) and f.value.id in _MODULES and f.attr in TILETUNE_FUNCTIONS):
                return self.fail()
        elif not (isinstance(f, ast.Name) and f.id in TILETUNE_FUNCTIONS):
            return self.fail()
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return self.fail()
        if isinstance(f, ast.Name) and f.id == "round" and len(node.args) != 1:
            return self.fail()
        for a in node.args:
            self.visit(a)

    def visit_Subscript(self, node):
        if isinstance(node.slice, ast.Slice):
            return self.fail()
        self.visit(node.value)
        self.visit(node.slice)

    def _comprehension(self, node, elements):
        saved = set(self.locals)
        for gen in node.generators:
            if gen.is_async:
                return self.fail()
            self.visit(gen.iter)
            targets = gen.target.elts if isinstance(gen.target, ast.Tuple) else [gen.target]
            for t in targets:
                if not isinstance(t, ast.Name):
                    return self.fail()
                self.locals.add(t.id)
            for cond in gen.ifs:
                self.visit(cond)
        for e in elements:
            self.visit(e)
        self.locals = saved

    def visit_ListComp(self, node):
        self._comprehension(node, [node.elt])

    def visit_GeneratorExp(self, node):
        self._comprehension(node, [node.elt])


def in_tiletune_subset(text, params):
    """True when tiletune evaluates `text` over these params exactly as Python does."""
    if "\\" in text or not text.isascii() or "#" in text:
        return False
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return False
    checker = _Subset({p.name: p for p in params})
    checker.visit(tree)
    return checker.ok


class Restrictions:
    """The restrictions split into tiletune constraints (Python text) and what Python decides."""

    def __init__(self, restrictions, params):
        self.constraints = []    # strings tiletune evaluates
        self.in_python = []      # (kind, object): "str", "dict" (called with the params dict),
        #                          "positional" (called with every value), "tuple" (f, names)
        if restrictions is None:
            return
        if callable(restrictions) and not isinstance(restrictions, (list, tuple)):
            self.in_python.append(("dict", restrictions))
            return
        if isinstance(restrictions, str):
            restrictions = [restrictions]
        if not isinstance(restrictions, (list, tuple)):
            raise ValueError(f"Unknown restriction type {type(restrictions)} ({restrictions})")
        seen = set()
        for r in restrictions:
            if isinstance(r, str):
                key = r.replace(" ", "")
                if key in seen:
                    continue
                seen.add(key)
                if in_tiletune_subset(r, params):
                    self.constraints.append(r.strip())
                else:
                    self.in_python.append(("str", r))
            elif isinstance(r, tuple) and len(r) == 2 and callable(r[0]):
                self.in_python.append(("tuple", r))
            elif callable(r):
                lam = getattr(r, "__name__", "") == "<lambda>"
                self.in_python.append(("dict" if lam else "positional", r))
            else:
                raise ValueError(f"Unknown restriction type {type(r)} ({r})")

    def check(self, config, namespace):
        """Whether config (a dict) passes the restrictions that Python decides. A string that
        divides by zero passes, as in Kernel Tuner (util.check_restrictions)."""
        for kind, r in self.in_python:
            if kind == "str":
                try:
                    if not eval(r, namespace, dict(config)):
                        return False
                except ZeroDivisionError:
                    continue
            elif kind == "dict":
                if not r(config):
                    return False
            elif kind == "positional":
                if not r(*config.values()):
                    return False
            else:
                f, names = r
                if not f(*[config[n] for n in names]):
                    return False
        return True


def product(params):
    """Every config of the params' product as a dict, the first param varying slowest (Kernel
    Tuner's order)."""
    names = [p.name for p in params]
    for values in itertools.product(*[p.values for p in params]):
        yield dict(zip(names, values))
