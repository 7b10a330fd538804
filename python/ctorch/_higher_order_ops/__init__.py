"""ctorch._higher_order_ops: torch.cond, eagerly (there is no compiler to trace both branches): the
predicate and operands are checked as PyTorch checks them, then one branch runs on the operands."""
from .cond import cond  # noqa: F401
from .while_loop import while_loop  # noqa: F401
