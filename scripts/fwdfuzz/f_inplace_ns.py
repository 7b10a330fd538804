"""torch.<name>_ module in-place forms and Tensor.<name>_ on strided views: value, identity, base written."""
from core import *  # noqa

names = sorted(n for n in dir(torch) if n.endswith("_") and not n.startswith("_") and hasattr(ctorch, n))
for n in names:
    for d in ["float32", "int64"]:
        def f(L, n=n, d=d):
            base = make(L, d, "contig", (4, 6), seed=3, special=False)
            v = base[1:, ::2]
            fn = getattr(L, n)
            try:
                r = fn(v)
            except TypeError:
                try:
                    r = fn(v, make(L, d, "contig", (3,), seed=4, special=False))
                except TypeError:
                    r = fn(v, 0.5)
            return r, base, r is v
        check(f"ns inplace {n}", d, f)
tnames = sorted(n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("_") and hasattr(ctorch.Tensor, n))
skip = {"requires_grad_", "share_memory_", "resize_", "set_", "retain_grad_", "record_stream_", "pin_memory_", "uniform_",
        "normal_", "random_", "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "resize_as_", "as_strided_"}
for n in tnames:
    if n in skip:
        continue
    for d in ["float32", "int64", "bool"]:
        def f(L, n=n, d=d):
            base = make(L, d, "contig", (4, 6), seed=3, special=False)
            v = base[1:, ::2]
            m = getattr(v, n)
            for args in [(), (make(L, d, "contig", (3,), seed=4, special=False),), (1,), (0.5,), (0, 1)]:
                try:
                    r = m(*args)
                    break
                except TypeError:
                    continue
            else:
                return "notype"
            return r, base, r is v
        check(f"tensor inplace {n}", d, f)
report(maxper=3)
