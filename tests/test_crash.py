"""Crash battery: bad inputs of every kind to the creation, random and conversion functions must
raise the right Python exception, never crash. The battery runs in a subprocess so that a
segfault or abort shows up as a failed test instead of killing pytest."""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(r'''
    import datetime, gc, pickle, sys
    import numpy as np
    import ctorch as torch

    failures = []
    count = 0

    def check(src, *excs):
        global count
        count += 1
        try:
            eval(src)
        except excs:
            return
        except BaseException as e:
            failures.append(f"{src}: raised {type(e).__name__}: {e}")
            return
        failures.append(f"{src}: no exception")

    T, V, R = TypeError, ValueError, RuntimeError
    HUGE = 2**50  # beyond any address space once multiplied by the item size

    # --- wrong types everywhere
    for fn in ["zeros", "ones", "empty", "rand", "randn"]:
        for arg in ["'a'", "None", "2.5", "float('nan')", "float('inf')", "[1, 'a']", "(2, None)", "[[2]]",
                    "object()", "{}", "np.array([2, 3])", "torch.tensor([2, 3])", "torch.tensor(2.0)", "True",
                    "b'ab'", "2**64", "-2**64", "(2**63,)", "lambda: 1"]:
            check(f"torch.{fn}({arg})", T, R)
        check(f"torch.{fn}(2, dtype='float32')", T)
        check(f"torch.{fn}(2, dtype=3)", T)
        check(f"torch.{fn}(2, dtype=np.complex64)", T)
        check(f"torch.{fn}(2, device=1.5)", T)
        check(f"torch.{fn}(2, device='xpu')", R)
        check(f"torch.{fn}(2, device='cuda:x')", R)
        check(f"torch.{fn}(2, device='cpu:1')", R)
        check(f"torch.{fn}(2, device=-1)", R)
        check(f"torch.{fn}(2, bogus=1)", T)
        check(f"torch.{fn}(2, size=(2,))", T)
        check(f"torch.{fn}(2, out=3)", T)
        check(f"torch.{fn}(3, out=torch.empty(2), dtype=torch.float64)", R)  # another shape is resized
        check(f"torch.{fn}(2, requires_grad='maybe')", T)
        check(f"torch.{fn}(2, pin_memory=1)", T)
    check("torch.full(None, 1)", T)
    check("torch.full((2,), [])", T)
    check("torch.full((2,), 'a')", T)
    check("torch.full((2,), None)", T)
    check("torch.full((2,), 1+2j)", T)
    check("torch.full((2,), 2**70)", T, R, OverflowError)
    check("torch.full((2,), 300, dtype=torch.uint8)", R)
    check("torch.full((2,), float('nan'), dtype=torch.int64)", R)
    check("torch.full((2,), 1e300, dtype=torch.float16)", R)
    check("torch.arange('a')", T)
    check("torch.arange(None)", T)
    check("torch.arange()", T)
    check("torch.arange(0, 1, 0)", R)
    check("torch.arange(0, 1, -1)", R)
    check("torch.arange(0, float('inf'))", R)
    check("torch.arange(float('nan'))", R)
    check("torch.arange(0, 1, float('nan'))", R)
    check("torch.arange(0, 1e300, 1e-300)", R)
    check("torch.arange(-2**63, 2**63 - 1)", R)
    check("torch.arange(5, dtype=torch.bool)", NotImplementedError)
    check("torch.linspace('a', 1, 2)", T)
    check("torch.linspace(0, 1, None)", T)
    check("torch.linspace(0, 1, 2.5)", T)
    check("torch.linspace(0, 1, -5)", R)
    check("torch.linspace(0, 1)", T)
    check("torch.logspace(0, 1, 3, base='x')", T)
    check("torch.eye('a')", T)
    check("torch.eye(2, 'b')", T)
    check("torch.eye(-3)", R)
    check("torch.eye(2, -3)", R)
    check("torch.eye(None)", T)
    check("torch.scalar_tensor('a')", T)
    check("torch.scalar_tensor(None)", T)
    for fn in ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]:
        check(f"torch.{fn}(3)", T)
        check(f"torch.{fn}([1, 2])", T)
        check(f"torch.{fn}(None)", T)
        check(f"torch.{fn}(torch.ones(2), dtype='x')", T)
    check("torch.full_like(torch.ones(2), 'a')", T)
    check("torch.full_like(3, 1)", T)
    check("torch.randint_like(torch.ones(2))", T)
    check("torch.randint_like(torch.ones(2), 'a')", T)
    check("torch.randint_like(torch.ones(2), 5, 1)", R)
    check("torch.ones(2).new_zeros('a')", T)
    check("torch.ones(2).new_full((2,), None)", T)
    check("torch.ones(2).new_tensor([[1], [2, 3]])", V)

    # --- impossible sizes
    for src in ["torch.zeros(HUGE)", "torch.ones(HUGE)", "torch.empty(HUGE)", "torch.rand(HUGE)", "torch.randn(HUGE)",
                "torch.full((HUGE,), 1.0)", "torch.empty(HUGE, dtype=torch.float64)", "torch.arange(HUGE)",
                "torch.linspace(0, 1, HUGE)", "torch.logspace(0, 1, HUGE)", "torch.eye(2**25)", "torch.randperm(HUGE)",
                "torch.randint(0, 5, (HUGE,))", "torch.normal(0.0, 1.0, (HUGE,))", "torch.zeros(2**62)",
                "torch.zeros(2**31, 2**31, 2**31)", "torch.zeros(2**62, 4)", "torch.ones(*([2**3] * 25))",
                "torch.empty(2**63 - 1)", "torch.empty(2**21, 2**21, 2**21, 2**21)", "torch.ones(1, 0, HUGE * HUGE)",
                "torch.empty_like(torch.ones(1).expand(HUGE))", "torch.rand_like(torch.ones(1).expand(HUGE))",
                "torch.ones(2).new_empty(HUGE)"]:
        check(src, R, T, MemoryError)
    for src in ["torch.zeros(-1)", "torch.ones(2, -1)", "torch.empty(-5)", "torch.rand(-1)", "torch.randn(3, -3)",
                "torch.full((-1,), 1)", "torch.randint(3, (-1,))", "torch.randperm(-1)", "torch.eye(-1)",
                "torch.ones(2).new_ones(-1)", "torch.zeros(*([1] * 26))", "torch.zeros([1] * 100)"]:
        check(src, R)

    # --- random-specific bad input
    g = torch.Generator()
    check("torch.Generator(3.5)", T)
    check("torch.Generator('foo')", R)
    check("torch.Generator(device=None).manual_seed(None)", R)
    check("g.manual_seed(2**70)", V)
    check("g.manual_seed(-2**70)", V)
    check("g.manual_seed('1')", R)
    check("g.set_state(3)", T)
    check("g.set_state(torch.zeros(16))", T)
    check("g.set_state(torch.zeros(17, dtype=torch.uint8))", R)
    check("g.set_offset(-1)", OverflowError, V)
    check("g.set_offset('a')", T)
    check("torch.manual_seed('a')", V)
    check("torch.manual_seed(None)", T)
    check("torch.manual_seed(2**70)", V)
    check("torch.set_rng_state('x')", T)
    check("torch.set_rng_state(torch.zeros(5, dtype=torch.uint8))", R)
    check("torch.rand(2, generator=5)", T)
    check("torch.rand(2, generator='cpu')", T)
    check("torch.randint(0, 2, (2,), generator=[])", T)
    check("torch.randint('a', (2,))", T)
    check("torch.randint(0, 2, 'x')", T)
    check("torch.randint(0, float('inf'), (2,))", T)
    check("torch.randint(-2**63, 2**63, (2,))", T)
    check("torch.randint(0, 2**64, (2,))", T)
    check("torch.randint(5, 5, (2,))", R)
    check("torch.randint(0, 300, (2,), dtype=torch.uint8)", R)
    check("torch.randint(0, 2, (2,), dtype=torch.bool, requires_grad=True)", R)
    check("torch.randint(10)", T)
    check("torch.randint()", T)
    check("torch.randint(1, 2, 3, 4)", T)
    check("torch.randperm(None)", T)
    check("torch.randperm(2.5)", T)
    check("torch.randperm(5, dtype=torch.bool)", NotImplementedError)
    check("torch.randperm(1000, dtype=torch.int8)", R)
    check("torch.rand(2, dtype=torch.int32)", NotImplementedError)
    check("torch.randn(2, dtype=torch.bool)", NotImplementedError)
    check("torch.normal('a', 1)", T)
    check("torch.normal(0, 1)", T)
    check("torch.normal(0.0, 1.0, 'x')", T)
    check("torch.normal(0.0, -1.0, (2,))", R)
    check("torch.normal(0.0, float('nan'), (2,))", R)
    check("torch.normal(torch.zeros(3), torch.ones(4))", R)
    check("torch.normal(torch.zeros(3), torch.tensor([1.0, -1.0, 2.0]))", R)
    check("torch.normal(torch.zeros(3, dtype=torch.int64), 1.0)", NotImplementedError)
    check("torch.bernoulli(3)", T)
    check("torch.bernoulli(torch.full((2,), 2.0))", R)
    check("torch.bernoulli(torch.full((2,), float('nan')))", R)
    check("torch.bernoulli(torch.ones(2), p=5)", R)
    check("torch.bernoulli(torch.ones(2, dtype=torch.int64))", NotImplementedError)
    t = torch.ones(3)
    check("t.uniform_('a')", T)
    check("t.uniform_(None, 'b')", T)
    check("t.uniform_(1, 0)", R)
    check("t.uniform_(float('nan'), 1)", R)
    check("t.uniform_(-1e39, 1)", R)
    check("t.normal_(0, -1)", R)
    check("t.normal_([], 1)", T)
    check("t.random_(1.5)", T)
    check("t.random_(5, 2)", R)
    check("t.random_(0, 2**70)", T, OverflowError)
    check("t.bernoulli_(2.0)", R)
    check("t.bernoulli_('x')", T)
    check("t.bernoulli_(torch.ones(7))", R)
    check("t.bernoulli_(torch.tensor([2.0, 0.0, 0.0]))", R)
    check("t.exponential_(0)", R)
    check("t.exponential_(float('nan'))", R)
    check("torch.ones(2, dtype=torch.int32).exponential_()", R)
    check("torch.ones(2, dtype=torch.int32).uniform_()", NotImplementedError)
    check("t.fill_('a')", T)
    check("t.fill_(None)", T)
    check("t.fill_(torch.ones(2))", R)
    check("t.fill_(1e300)", R)
    check("torch.ones(2, dtype=torch.uint8).fill_(1000)", R)

    # --- tensor() and friends
    deep = 1
    for _ in range(1000):
        deep = [deep]
    loop = [1]
    loop.append(loop)
    loop2 = []
    loop2.append(loop2)

    class BadSeq:
        def __len__(self):
            return 3
        def __getitem__(self, i):
            raise ValueError("boom")

    class LyingSeq:
        def __len__(self):
            return 5
        def __getitem__(self, i):
            if i >= 2:
                raise IndexError
            return 1.0

    class BadFloat:
        def __float__(self):
            raise RuntimeError("no float")

    for src, excs in [
        ("torch.tensor([[1, 2], [3]])", (V,)), ("torch.tensor([[1, 2], 3])", (T,)), ("torch.tensor([1, [2, 3]])", (T,)),
        ("torch.tensor([[[1]], [[2, 3]]])", (V,)), ("torch.tensor([[1], []])", (V,)), ("torch.tensor([None])", (R,)),
        ("torch.tensor(None)", (R,)), ("torch.tensor(object())", (R,)), ("torch.tensor({})", (R,)),
        ("torch.tensor(lambda: 1)", (R,)), ("torch.tensor('abc')", (T,)), ("torch.tensor(['a', 'b'])", (V,)),
        ("torch.tensor([1, 'a'])", (T,)), ("torch.tensor([b'a'])", (V,)), ("torch.tensor(deep)", (V,)),
        ("torch.tensor(loop)", (T, V)), ("torch.tensor(loop2)", (V,)), ("torch.tensor([loop])", (T, V)),
        ("torch.tensor(BadSeq())", (V,)), ("torch.tensor(LyingSeq())", (V,)), ("torch.tensor([BadFloat()])", (R,)),
        ("torch.tensor([1.0, BadFloat()], dtype=torch.float32)", (R,)), ("torch.tensor([1j])", (T,)),
        ("torch.tensor(2**64)", (V,)), ("torch.tensor([2**64, 1])", (V,)), ("torch.tensor([10**400, 1.5])", (OverflowError,)),
        ("torch.tensor([1, 2], dtype=torch.float32, device='cuda:x')", (R,)),
        ("torch.tensor([1], dtype='float')", (T,)), ("torch.tensor([300], dtype=torch.uint8)", (R,)),
        ("torch.tensor([float('nan')], dtype=torch.int64)", (R,)), ("torch.tensor([float('inf')], dtype=torch.int8)", (R,)),
        ("torch.tensor(np.array(['a']))", (T,)), ("torch.tensor(np.zeros(2, dtype=[('a', 'i4')]))", (T,)),
        ("torch.tensor(np.array([1, 2], dtype=object))", (T,)), ("torch.tensor(np.arange(4)[::-1])", (V,)),
        ("torch.tensor(np.arange(4, dtype='>f8'))", (V,)), ("torch.tensor(np.zeros(2, np.uint32))", (T,)),
        ("torch.tensor(np.zeros(2, np.complex128))", (T,)), ("torch.tensor([np.zeros(2), np.zeros(3)])", (V,)),
        ("torch.tensor([torch.ones(2), torch.ones(3)])", (V,)), ("torch.tensor([torch.ones(2, 2), torch.ones(2)])", (V,)),
        ("torch.tensor([[1.0], torch.ones(2)])", (V,)), ("torch.tensor(np.zeros([1] * 30))", (R,)),
        ("torch.tensor([1, 2], requires_grad=True)", (R,)), ("torch.tensor()", (T,)), ("torch.tensor(1, 2)", (T,)),
        ("torch.as_tensor(object())", (R,)), ("torch.as_tensor([[1], [1, 2]])", (V,)), ("torch.as_tensor(1, 'x')", (T,)),
        ("torch.asarray(np.arange(3), dtype=torch.float32, copy=False)", (V,)), ("torch.asarray(None)", (R,)),
        ("torch.from_numpy(3)", (T,)), ("torch.from_numpy([1])", (T,)), ("torch.from_numpy(np.float64(1))", (T,)),
        ("torch.from_numpy(np.arange(3)[::-1])", (V,)), ("torch.from_numpy(np.zeros(2, dtype='>i4'))", (V,)),
        ("torch.from_numpy(np.zeros(3, dtype=[('a', 'f4'), ('b', 'i1')]))", (T,)),
        ("torch.frombuffer(3, dtype=torch.uint8)", (T,)), ("torch.frombuffer(b'abc', dtype=torch.int32)", (V,)),
        ("torch.frombuffer(b'', dtype=torch.uint8)", (V,)), ("torch.frombuffer(b'abcd', dtype=torch.uint8, offset=-1)", (V,)),
        ("torch.frombuffer(b'abcd', dtype=torch.uint8, count=100)", (V,)), ("torch.frombuffer(b'abcd')", (T,)),
        ("torch.from_dlpack(None)", (R,)), ("torch.from_dlpack(3)", (R,)), ("torch.from_dlpack(datetime.datetime_CAPI)", (R,)),
        ("torch.from_dlpack(np.zeros(2, np.uint16))", (BufferError,)),
        ("torch.from_dlpack(np.zeros(2, np.complex64))", (BufferError,)),
        ("torch.ones(2).__dlpack__(max_version='x')", (T,)), ("torch.ones(2).__dlpack__(dl_device=(5,))", (T,)),
        ("torch.ones(2).__dlpack__(dl_device=(7, 0))", (BufferError,)),
        ("torch.ones(2, requires_grad=True).__dlpack__()", (BufferError,)),
        ("torch.ones(2).__array__('foo')", (T,)), ("torch.ones(2).__array__(np.int8, copy=False)", (V,)),
        ("np.asarray(torch.ones(2, dtype=torch.bfloat16))", (T,)), ("torch.ones(2, dtype=torch.bfloat16).numpy()", (T,)),
        ("torch.ones(2, requires_grad=True).numpy()", (R,)), ("iter(torch.tensor(1.0))", (T,)),
        ("torch._C._rebuild_tensor(b'abc', torch.float32, (1,), False, 'cpu')", (V,)),
        ("torch._C._rebuild_tensor(b'abcd', 'x', (1,), False, 'cpu')", (T,)),
        ("torch._C._rebuild_tensor(None, None, None, None, None)", (T,)),
        ("torch._C._philox4x32_10((1, 2), (3, 4))", (T,)), ("torch._C._philox4x32_10(None, None)", (T,)),
        ("torch._C._default_generator('xpu')", (R,)),
    ]:
        check(src, *excs)

    # a consumed capsule cannot be consumed twice
    cap = torch.ones(2).__dlpack__()
    torch.from_dlpack(cap)
    check("torch.from_dlpack(cap)", R)

    # the interpreter still works and nothing is left behind
    gc.collect()
    assert torch.zeros(2).tolist() == [0.0, 0.0]
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"OK {count}")
''')


def test_crash_battery():
    import ctorch

    env = dict(os.environ)
    # the subprocess imports the same ctorch as this process (installed or in-place build)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(ctorch.__file__)))
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    assert proc.stdout.startswith("OK")
