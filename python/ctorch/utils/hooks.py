"""Handles returned by register_hook, with remove() as in PyTorch."""


class RemovableHandle:
    """Removes a registered hook from the list that holds it."""

    def __init__(self, hooks, hook):
        self._hooks = hooks
        self._hook = hook

    def remove(self):
        if self._hooks is not None:
            try:
                self._hooks.remove(self._hook)
            except ValueError:
                pass
            self._hooks = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _handle_for(owner, hook, output_nr):
    """Called from C: owner is a leaf's hook list, or a node's {output_nr: hooks} dict."""
    hooks = owner if output_nr < 0 else owner[output_nr]
    return RemovableHandle(hooks, hook)
