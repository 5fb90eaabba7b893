"""Read the text form (`.xcir`, see text_print) back into an unverified Graph: a small recursive-descent parser.

Syntax errors raise XcvizError at `file:line:col` with a hint. The graph it returns has not been checked
(ops, references, shapes): loaders.xcir sends it through the loaders' verification like any other format."""
from __future__ import annotations

from . import Body, Graph, Node, TensorType, Value, canonical_dtype
from .function import TFFunction
from .containers import container_type
from .text_lex import Tokens
from .text_print import SHORT_DTYPES

_NP_DTYPES = {"object": "object", **{short: long for long, short in SHORT_DTYPES.items()}}
_NODE_PROPS = ("device", "scope", "compile", "op_type", "note", "module")
MAX_DEPTH = 100  # nesting of attribute values (a hostile file must not exhaust Python's stack)


class _Parser(Tokens):
    max_depth = MAX_DEPTH
    type_depth = 0

    def name(self, what: str) -> str:
        tok = self.take(kind="val", what=what)
        return self.string(tok[1:]) if tok[1] == '"' else tok[1:]

    def word_or_string(self, what: str) -> str:
        k = self.toks[self.i][0]
        if k == "str":
            return self.string(self.take())
        return self.take(kind="word", what=what)

    # -- types ------------------------------------------------------------------
    def tensor_type(self) -> TensorType:
        k, t, _ = self.toks[self.i]
        if t == "?" and k == "punct":
            self.i += 1
            if not self.peek("["):
                return TensorType()
            dtype = None
        elif k == "str":
            dtype = self.string(self.take())
        elif t in ("seq", "opt") and self.toks[self.i + 1][1] == "<":
            self.type_depth += 1  # (each level recurses: stop before Python's recursion limit does)
            if self.type_depth > self.max_depth:
                raise self.error(f"type nests deeper than {self.max_depth} levels",
                                 hint="a type is at most opt<seq<T>>; raise the limit with --max-depth")
            try:
                return container_type(self)
            finally:
                self.type_depth -= 1
        else:
            word = self.take(kind="word", what="a type such as f32[1,3] (or ? when unknown)")
            dtype = canonical_dtype(word)
            if dtype is None:
                self.i -= 1
                raise self.error(f"unknown dtype {word!r}", hint="f32, f16, bf16, i64, i32, bool, ... (see `xcviz print`)")
        return TensorType(self.shape(), dtype)

    def shape(self):
        self.take("[", what="'[' and the shape")
        if self.peek("?") and self.toks[self.i + 1][1] == "]":
            self.i += 2
            return None
        dims = []
        while not self.peek("]"):
            k, t, _ = self.toks[self.i]
            if k == "num" and t.lstrip("-").isdigit():
                if len(t) > 20:  # (refused by length before int(): a 5,000-digit number is no dimension)
                    raise self.error(f"dimension of {len(t.lstrip('-')):,} digits is out of range",
                                     hint="dimensions are integers below 2^63, or symbolic names")
                dims.append(int(t))
            elif k == "word" or (k == "punct" and t == "?"):
                dims.append(t)
            elif k == "str":
                dims.append(self.string(t, self.i))
            else:
                raise self.error(f"expected a dimension, found {t!r}" if k != "eof" else "unclosed shape",
                                 hint="dimensions are integers or symbolic names: f32[batch,3,224,224]")
            self.i += 1
            if not self.peek("]"):
                self.take(",", what="',' or ']'")
        self.i += 1
        return tuple(dims)

    # -- values -----------------------------------------------------------------
    def value(self, depth: int = 0):
        if depth > self.max_depth:
            raise self.error(f"value nests deeper than {self.max_depth} levels", hint="flatten it, or raise the limit with --max-depth")
        k, t, _ = self.toks[self.i]
        self.i += 1
        if k == "num":
            if t == "-inf":
                return float(t)
            if "." in t or "e" in t or "E" in t:
                return float(t)
            try:
                return int(t)
            except ValueError:
                self.i -= 1
                raise self.error("integer too long", hint="integers up to 4300 digits") from None
        if k == "str":
            return self.string(t)
        if k == "bytes":
            s = self.string(t[1:])
            if any(ord(c) > 255 for c in s):
                self.i -= 1
                raise self.error("bytes literal holds a character above \\xff", hint="write bytes as \\xNN")
            return s.encode("latin-1")
        if k == "word":
            if t in _WORDS:
                return _WORDS[t]
            if t == "dense" and self.peek("<"):
                return self.dense()
            if t == "body" and self.peek("<"):
                return self.body()
            if t == "function" and self.peek("<"):
                return self.function()
            self.i -= 1
            raise self.error(f"unexpected word {t!r} in a value", hint='strings are quoted: "text"; constants are none, true, false, inf, nan')
        if t == "[":
            return self.items("]", depth)
        if t == "(":
            return tuple(self.items(")", depth))
        if t == "{":
            return self.mapping(depth)
        self.i -= 1
        raise self.error(f"expected a value, found {t!r}" if k != "eof" else "expected a value, found end of text",
                         hint="values are numbers, \"strings\", true/false/none, [lists], {key=value} or dense<...>")

    def items(self, close: str, depth: int) -> list:
        out = []
        while not self.peek(close):
            out.append(self.value(depth + 1))
            if self.peek(","):
                self.i += 1
            elif not self.peek(close):
                self.take(close, what=f"',' or {close!r}")
        self.i += 1
        return out

    def mapping(self, depth: int) -> dict:
        out: dict = {}
        while not self.peek("}"):
            at = self.i
            key = self.word_or_string("a key")
            if key in out:
                self.i = at
                raise self.error(f"repeated key {key!r}", hint="each key may appear once")
            self.take("=", what="'=' after the key")
            out[key] = self.value(depth + 1)
            if not self.peek("}"):
                self.take(",", what="',' or '}'")
        self.i += 1
        return out

    def dense(self):
        import numpy as np

        start = self.i - 1
        self.take("<")
        at = self.i
        word = self.take(kind="word", what="the constant's dtype")
        np_name = _NP_DTYPES.get(word, word)
        if np_name != "object" and canonical_dtype(word) is None:
            self.i = at
            raise self.error(f"unknown dtype {word!r}", hint="f32, i64, bool, ...")
        shape = self.shape()
        if shape is None or not all(type(d) is int and d >= 0 for d in shape):
            self.i = at
            raise self.error("a constant's shape is a list of sizes", hint="dense<f32[2,2] [[1, 2], [3, 4]]>")
        dtype = _np_dtype(np_name)
        if dtype is None:
            self.i = at
            raise self.error(f"numpy cannot hold {word} here", hint="install ml_dtypes for bf16 and float8 constants")
        size = 1
        for d in shape:
            size *= d
        if self.peek(kind="hex"):
            if dtype.hasobject:
                self.i = start
                raise self.error("object constants are written as lists", hint='dense<object[2] ["a", b"b"]>')
            text = self.take()
            try:
                raw = bytes.fromhex("".join(text[2:].split()))
            except ValueError:
                self.i = start
                raise self.error("odd number of hex digits", hint="two hex digits per byte") from None
            if len(raw) != size * dtype.itemsize:
                self.i = start
                raise self.error(f"{len(raw)} bytes for {size} elements of {word}", hint="the hex holds every element")
            arr = np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype).reshape(shape)
        else:
            body = self.value()
            flat: list = []
            _flatten(body, flat)
            if len(flat) != size:
                self.i = start
                raise self.error(f"{len(flat)} values for shape {list(shape)}", hint="give one value per element")
            try:
                arr = np.array(flat, dtype=dtype).reshape(shape) if np_name != "object" else _objects(flat, shape)
            except (TypeError, ValueError, OverflowError) as e:
                self.i = start
                raise self.error(f"bad constant: {e}"[:200], hint="values must fit the dtype") from None
        self.take(">", what="'>' closing dense<...>")
        return arr

    def body(self) -> Body:
        """body<"LABEL">: a control-flow body by its label; its graph stays with the model file."""
        self.take("<", what="'<' opening body<...>")
        k, t, _ = self.toks[self.i]
        if k != "str":
            raise self.error("a body is written as its quoted label", hint='body<"<subgraph body #0123456789>">')
        self.i += 1
        label = self.string(t)
        self.take(">", what="'>' closing body<...>")
        return Body(label)

    def function(self) -> TFFunction:
        """function<"NAME">: a TF library function by its name; its FunctionDef stays with the model file."""
        self.take("<", what="'<' opening function<...>")
        k, t, _ = self.toks[self.i]
        if k != "str":
            raise self.error("a function is written as its quoted name", hint='function<"while_body_12">')
        self.i += 1
        name = self.string(t)
        self.take(">", what="'>' closing function<...>")
        return TFFunction(name)

    # -- the graph --------------------------------------------------------------
    def graph(self) -> Graph:
        self.take("graph", kind="word", what="'graph NAME(...) {'")
        name = self.word_or_string("the graph's name")
        self.take("(", what="'(' and the graph's inputs")
        inputs: list[Value] = []
        seen: set[str] = set()
        while not self.peek(")"):
            at = self.i
            vname = self.name("an input such as %x")
            if vname in seen:
                self.i = at
                raise self.error(f"duplicate graph input {vname!r}", hint="graph input names must be unique")
            seen.add(vname)
            self.take(":", what="':' and the input's type")
            v = Value(vname, self.tensor_type())
            if self.peek("="):
                self.i += 1
                v = Value(vname, v.type, self.value())
            inputs.append(v)
            if not self.peek(")"):
                self.take(",", what="',' or ')'")
        self.i += 1
        dims: dict = {}
        if self.peek("["):
            props = self.props({"dims"})
            dims = props.get("dims", {})
            if not isinstance(dims, dict) or not all(type(d) is int and d >= 0 for d in dims.values()):
                raise self.error("dims maps symbolic names to non-negative integers", hint="[dims={batch=8}]")
        self.take("{", what="'{' opening the graph's body")
        nodes = []
        while self.peek(kind="val"):
            nodes.append(self.node())
        self.take("return", kind="word", what="a node (%name: type = op(...)) or 'return'")
        outputs, output_names = [], {}
        if not self.peek("}"):
            while True:
                ref = self.ref()
                outputs.append(ref)
                if self.peek("as", kind="word"):
                    self.i += 1
                    output_names[ref] = self.word_or_string("the output's own name")
                if not self.peek(","):
                    break
                self.i += 1
        self.take("}", what="'}' closing the graph")
        self.take(kind="eof", what="end of text")
        return Graph(name=name, inputs=inputs, nodes=nodes, outputs=outputs, source=self.source, dims=dims,
                     output_names=output_names)

    def ref(self) -> str:
        if self.peek("none", kind="word"):
            self.i += 1
            return ""
        name = self.name("an input such as %x, %n:1 or none")
        if self.peek(":"):
            self.i += 1
            k, t, _ = self.toks[self.i]
            if k != "num" or not t.isdigit():
                raise self.error("expected an output number after ':'", hint="%node:1 is output 1 of node")
            self.i += 1
            return f"{name}:{t}"
        return name

    def props(self, allowed) -> dict:
        self.take("[")
        out: dict = {}
        while not self.peek("]"):
            at = self.i
            key = self.take(kind="word", what="a field such as device=...")
            if key not in allowed or key in out:
                self.i = at
                raise self.error(f"{'repeated' if key in out else 'unknown'} field {key!r}",
                                 hint="fields: " + ", ".join(sorted(allowed)))
            self.take("=", what="'='")
            out[key] = self.value()
            if not self.peek("]"):
                self.take(",", what="',' or ']'")
        self.i += 1
        return out

    def node(self) -> Node:
        where = self.where()
        name = self.name("a node")
        self.take(":", what="':' and the node's type")
        if self.peek("("):
            self.i += 1
            outputs = []
            while not self.peek(")"):
                outputs.append(self.tensor_type())
                if not self.peek(")"):
                    self.take(",", what="',' or ')'")
            self.i += 1
        else:
            outputs = [self.tensor_type()]
        self.take("=", what="'=' and the op")
        op = self.word_or_string("the op's name")
        self.take("(", what="'(' and the op's inputs")
        inputs, control = [], []
        while not self.peek(")"):
            if self.peek("^"):
                self.i += 1
                control.append(self.name("a control input such as ^%n"))
            else:
                inputs.append(self.ref())
            if not self.peek(")"):
                self.take(",", what="',' or ')'")
        self.i += 1
        attrs = {}
        if self.peek("{"):
            self.i += 1
            attrs = self.mapping(0)
        props = self.props(_NODE_PROPS) if self.peek("[") else {}
        for key in ("device", "scope", "op_type", "note", "module"):
            if key in props and type(props[key]) is not str:
                raise self.error(f"{key} must be a string", hint=f'{key}="..."')
        if "compile" in props and type(props["compile"]) is not bool:
            raise self.error("compile must be true or false", hint="compile=false")
        return Node(name=name, op=op, op_type=props.get("op_type", op), inputs=tuple(inputs),
                    control_inputs=tuple(control), attrs=attrs, device=props.get("device"),
                    compile=props.get("compile"), scope=props.get("scope"), outputs=outputs,
                    note=props.get("note"), where=where, module=props.get("module"))


_WORDS = {"none": None, "true": True, "false": False, "inf": float("inf"), "nan": float("nan")}


def _flatten(x, out: list) -> None:
    if type(x) is list:
        for y in x:
            _flatten(y, out)
    else:
        out.append(x)


def _objects(flat: list, shape):
    import numpy as np

    arr = np.empty(len(flat), dtype=object)
    arr[:] = flat
    return arr.reshape(shape)


def _np_dtype(name: str):
    import numpy as np

    long = canonical_dtype(name) or name
    if long in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        try:
            import ml_dtypes
        except ImportError:
            return None
        return np.dtype(getattr(ml_dtypes, long))
    if long == "string":
        return None
    return np.dtype(long)


def read_graph(text: str, source: str | None = None, max_depth: int = MAX_DEPTH) -> Graph:
    """The text form -> Graph, as written: ops unresolved, references unchecked, shapes as given."""
    from .text_print import NO_WEIGHTS_MARK

    if text.startswith(NO_WEIGHTS_MARK):
        from ..errors import XcvizError

        raise XcvizError("this text was printed without its weights, so it does not read back", where=source,
                         hint="print the model again with `xcviz print --weights`")
    parser = _Parser(text, source)
    parser.max_depth = max_depth
    return parser.graph()
