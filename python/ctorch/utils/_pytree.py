"""ctorch.utils._pytree: flattening nested Python containers of tensors, as torch.utils._pytree.

A pytree is a tuple, list, dict or namedtuple whose entries are pytrees, or anything else (a
leaf: a tensor, a number, None). tree_flatten returns the leaves in order and a TreeSpec that
tree_unflatten uses to rebuild the same structure around new leaves. The reprs (TreeSpec's and
treespec_pprint's) are PyTorch's, because ctorch.func quotes them in its error messages."""
__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_map",
           "tree_map_", "treespec_pprint"]


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _node_kind(obj):
    """'namedtuple', 'tuple', 'list', 'dict' for a container node, None for a leaf."""
    if _is_namedtuple(obj):
        return "namedtuple"
    if isinstance(obj, tuple):
        return "tuple"
    if isinstance(obj, list):
        return "list"
    if isinstance(obj, dict):
        return "dict"
    return None


class TreeSpec:
    """The structure of a pytree: the node's kind, its context (a dict's keys, a namedtuple's
    class, None for tuple/list) and the specs of its children."""

    def __init__(self, kind, context, children_specs):
        self.kind = kind
        self.context = context
        self.children_specs = list(children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)

    @property
    def num_children(self):
        return len(self.children_specs)

    def is_leaf(self):
        return False

    def __eq__(self, other):
        if not isinstance(other, TreeSpec) or self.is_leaf() != other.is_leaf():
            return False
        if self.is_leaf():
            return True
        return (self.kind == other.kind and self.context == other.context
                and self.children_specs == other.children_specs)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = None

    def _repr(self, indent):
        ctx = repr(self.context)
        children = (",\n" + " " * (indent + 2)).join(c._repr(indent + 2) for c in self.children_specs)
        return f"TreeSpec({self.kind}, {ctx}, [{children}])"

    def __repr__(self):
        return self._repr(0)

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)


class LeafSpec(TreeSpec):
    """The spec of a leaf (printed `*`)."""

    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def is_leaf(self):
        return True

    def _repr(self, indent):
        return "*"


def _children(obj, kind):
    """(children, context) of a container node."""
    if kind == "dict":
        keys = list(obj.keys())
        return [obj[k] for k in keys], keys
    if kind == "namedtuple":
        return list(obj), type(obj)
    return list(obj), None


def tree_flatten(tree):
    """(leaves, spec): the leaves of `tree` in order and its structure."""
    leaves = []

    def visit(node):
        kind = _node_kind(node)
        if kind is None:
            leaves.append(node)
            return LeafSpec()
        children, context = _children(node, kind)
        return TreeSpec(kind, context, [visit(c) for c in children])

    spec = visit(tree)
    return leaves, spec


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_unflatten(leaves, treespec):
    """Rebuilds the structure `treespec` around `leaves` (as many as the spec has)."""
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                         f"refers to a pytree that holds {treespec.num_leaves} items ({treespec}).")
    it = iter(leaves)

    def build(spec):
        if spec.is_leaf():
            return next(it)
        children = [build(c) for c in spec.children_specs]
        if spec.kind == "dict":
            return dict(zip(spec.context, children))
        if spec.kind == "namedtuple":
            return spec.context(*children)
        if spec.kind == "list":
            return children
        return tuple(children)

    return build(treespec)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def tree_map_(fn, tree):
    """Calls fn on every leaf (for its side effects) and returns `tree`."""
    for x in tree_flatten(tree)[0]:
        fn(x)
    return tree


def treespec_pprint(treespec):
    """The structure written as the pytree itself with `*` for leaves: `(*, [*, *])`, `{'a': *}`."""
    if treespec.is_leaf():
        return "*"
    parts = [treespec_pprint(c) for c in treespec.children_specs]
    if treespec.kind == "dict":
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(treespec.context, parts)) + "}"
    if treespec.kind == "namedtuple":
        fields = treespec.context._fields
        return treespec.context.__name__ + "(" + ", ".join(f"{f}={p}" for f, p in zip(fields, parts)) + ")"
    if treespec.kind == "list":
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + (",)" if len(parts) == 1 else ")")


def _broadcast_to_and_flatten(tree, treespec):
    """The leaves of `tree` laid over `treespec`: a leaf of `tree` stands for every leaf of the
    matching subtree of `treespec`. None when the structures do not match."""
    out = []

    def visit(node, spec):
        kind = _node_kind(node)
        if kind is None:
            out.extend([node] * spec.num_leaves)
            return True
        if spec.is_leaf() or kind != spec.kind:
            return False
        children, context = _children(node, kind)
        if context != spec.context or len(children) != spec.num_children:
            return False
        return all(visit(c, s) for c, s in zip(children, spec.children_specs))

    return out if visit(tree, treespec) else None
