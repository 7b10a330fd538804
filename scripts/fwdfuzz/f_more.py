from core import *  # noqa

F = lambda L, shape=(3, 4), d="float32", seed=0: make(L, d, "contig", shape, seed=seed, special=False)  # noqa

# in-place broadcasting: self cannot grow
for op in ["add_", "mul_", "sub_", "div_", "pow_", "clamp_", "copy_", "masked_fill_", "lerp_", "addcmul_"]:
    for shp in [(3, 1), (1, 4), (4,), (3, 4, 1), (2, 3, 4), ()]:
        def f(L):
            x = F(L, shp)
            o = F(L, (3, 4), seed=1)
            if op == "clamp_":
                return x.clamp_(o, None)
            if op == "masked_fill_":
                return x.masked_fill_(o > 0, 1.0)
            if op == "lerp_":
                return x.lerp_(o, 0.5)
            if op == "addcmul_":
                return x.addcmul_(o, o)
            return getattr(x, op)(o)
        check(f"inplace bcast {op}", f"{shp}", f)
# out= arguments
for fn, args in [("add", 2), ("mul", 2), ("sum", 1), ("matmul", 2), ("cat", 0), ("exp", 1), ("where", 3), ("clamp", 1)]:
    for oshape, od in [((3, 4), "float32"), ((2,), "float32"), ((3, 4), "float64"), ((3, 4), "int64"), ((12,), "float32"),
                       ((0,), "float32")]:
        def f(L):
            out = L.zeros(*oshape, dtype=dt(L, od)) if oshape else L.zeros(())
            a = F(L)
            if fn == "cat":
                r = L.cat([a, a], out=out)
            elif fn == "sum":
                r = L.sum(a, 1, out=out)
            elif fn == "matmul":
                r = L.matmul(a, F(L, (4, 4)), out=out)
            elif fn == "where":
                r = L.where(a > 0, a, F(L, seed=2), out=out)
            elif fn == "clamp":
                r = L.clamp(a, 0, 1, out=out)
            elif args == 1:
                r = getattr(L, fn)(a, out=out)
            else:
                r = getattr(L, fn)(a, F(L, seed=3), out=out)
            return r, out, r is out
        check(f"out= {fn}", f"{oshape} {od}", f)
# common view errors
cases = {
    "expand bad": lambda L: F(L).expand(3, 5),
    "expand fewer": lambda L: F(L).expand(4),
    "expand -1 new": lambda L: F(L).expand(-1, 3, 4),
    "expand 0": lambda L: F(L, (1, 4)).expand(0, 4),
    "repeat fewer": lambda L: F(L).repeat(2),
    "repeat 0": lambda L: F(L).repeat(0, 2),
    "narrow oob": lambda L: F(L).narrow(1, 3, 2),
    "narrow neg start": lambda L: F(L).narrow(1, -2, 2),
    "narrow neg len": lambda L: F(L).narrow(1, 0, -1),
    "select oob": lambda L: F(L).select(1, 4),
    "split 0": lambda L: F(L).split(0),
    "split bad list": lambda L: F(L).split([1, 2], 1),
    "chunk 0": lambda L: F(L).chunk(0),
    "transpose oob": lambda L: F(L).transpose(0, 2),
    "permute dup": lambda L: F(L).permute(0, 0),
    "permute short": lambda L: F(L).permute(0),
    "squeeze oob": lambda L: F(L).squeeze(2),
    "unsqueeze oob": lambda L: F(L).unsqueeze(-4),
    "flatten bad": lambda L: F(L).flatten(1, 0),
    "view bad": lambda L: F(L).t().view(12),
    "view 2 -1": lambda L: F(L).view(-1, -1),
    "view neg": lambda L: F(L).view(-2, 6),
    "reshape bad": lambda L: F(L).reshape(5, -1),
    "movedim dup": lambda L: F(L).movedim((0, 1), (0, 0)),
    "unflatten bad": lambda L: F(L).unflatten(1, (3, -1)),
    "diagonal same": lambda L: F(L).diagonal(0, 0, 0),
    "tril 1d": lambda L: F(L, (4,)).tril(),
    "t 3d": lambda L: F(L, (2, 3, 4)).t(),
    "T 3d": lambda L: F(L, (2, 3, 4)).T,
    "mT 1d": lambda L: F(L, (4,)).mT,
    "cat dim oob": lambda L: L.cat([F(L), F(L)], 2),
    "cat dtype dev": lambda L: L.cat([F(L), F(L, (3, 4), "int64")], 1),
    "cat 0d": lambda L: L.cat([L.tensor(1.0), L.tensor(2.0)]),
    "cat ndim mismatch": lambda L: L.cat([F(L), F(L, (4,))]),
    "cat empty 1d legacy": lambda L: L.cat([F(L), L.zeros(0)], 1),
    "stack empty": lambda L: L.stack([]),
    "stack 0d": lambda L: L.stack([L.tensor(1.0), L.tensor(2)]),
    "gather ndim": lambda L: F(L).gather(1, L.tensor([0])),
    "gather float idx": lambda L: F(L).gather(1, L.tensor([[0.0]])),
    "index_select 2d": lambda L: F(L).index_select(0, L.tensor([[0]])),
    "roll no dims": lambda L: F(L).roll(1, 0).roll((1, 2), (0,)),
    "flip dup": lambda L: F(L).flip(0, 0),
    "topk k big": lambda L: F(L).topk(5),
    "topk neg": lambda L: F(L).topk(-1),
    "sort oob": lambda L: F(L).sort(2),
    "kthvalue": lambda L: F(L).kthvalue(1),
    "item 0el": lambda L: L.zeros(0).item(),
    "to bad": lambda L: F(L).to("bogus"),
    "to dtype pos": lambda L: F(L).to(L.float64, True),
    "to other": lambda L: F(L).to(F(L, (2,), "int8")),
    "to copy": lambda L: (lambda x: (x.to(L.float32) is x, x.to(L.float32, copy=True) is x))(F(L)),
    "type str": lambda L: F(L).type("torch.DoubleTensor") if L is torch else F(L).type("torch.DoubleTensor"),
    "type none": lambda L: F(L).type(),
    "type dtype": lambda L: F(L).type(L.int32),
    "long": lambda L: F(L).long(),
    "byte": lambda L: F(L).byte(),
    "char": lambda L: F(L).char(),
    "numpy bf16": lambda L: F(L, (2,), "bfloat16").numpy(),
    "numpy req grad": lambda L: F(L).requires_grad_().numpy(),
    "element_size": lambda L: [F(L, (2,), d).element_size() for d in DTYPES],
    "nbytes": lambda L: F(L).t()[::2].nbytes,
    "itemsize": lambda L: F(L, (2,), "int16").itemsize,
    "dim": lambda L: F(L).dim() + F(L).ndimension() + F(L).nelement(),
    "size neg": lambda L: F(L).size(-1),
    "size oob": lambda L: F(L).size(2),
    "stride neg": lambda L: F(L).t().stride(-1),
    "is_contiguous": lambda L: [F(L).t().is_contiguous(), F(L)[:, :1].is_contiguous(), F(L, (1, 4)).expand(3, 4).is_contiguous(), F(L, (3, 1)).t().is_contiguous()],
    "is_floating_point": lambda L: [F(L, (2,), d).is_floating_point() for d in DTYPES],
    "len 0d": lambda L: len(L.tensor(1)),
    "iter 0d": lambda L: list(L.tensor(1)),
    "iter": lambda L: list(F(L)),
    "contains": lambda L: [2.0 in F(L), 100.0 in F(L), F(L)[0, 0] in F(L)],
    "hash": lambda L: isinstance(hash(F(L)), int),
    "eq None": lambda L: F(L) == None,  # noqa
    "eq str": lambda L: F(L) == "a",
    "float 2el": lambda L: float(F(L)),
    "int of float": lambda L: int(L.tensor(2.7)),
    "int of neg float": lambda L: int(L.tensor(-2.7)),
    "index of float": lambda L: [1, 2, 3][L.tensor(1.0)],
    "index of bool": lambda L: [1, 2, 3][L.tensor(True)],
    "complex": lambda L: complex(L.tensor(2.0)),
    "round builtin": lambda L: round(L.tensor(2.5)),
    "abs builtin": lambda L: abs(L.tensor(-2)),
    "matmul scalar": lambda L: F(L) @ 2,
    "rmatmul list": lambda L: [1.0, 2.0, 3.0] @ F(L),
    "pow scalar base": lambda L: 2 ** F(L, (3,), "int64"),
    "pow neg int": lambda L: L.tensor([2, 3]) ** -1,
    "pow neg int t": lambda L: L.tensor([2, 3]) ** L.tensor([-1, 2]),
    "pow 0 0": lambda L: L.tensor([0, 0.0]) ** L.tensor([0, -1.0]),
    "int pow big": lambda L: L.tensor([3], dtype=L.int64) ** 50,
    "float pow int tensor": lambda L: 2.5 ** L.tensor([1, 2]),
    "bool arith": lambda L: L.tensor([True]) + L.tensor([True]),
    "bool sub": lambda L: L.tensor([True]) - L.tensor([True]),
    "bool neg": lambda L: -L.tensor([True]),
    "uint8 neg": lambda L: -L.tensor([1], dtype=L.uint8),
    "shift neg": lambda L: L.tensor([8]) >> -1,
    "shift big": lambda L: L.tensor([1]) << 70,
    "shift int8 big": lambda L: L.tensor([1], dtype=L.int8) << 9,
    "int min / -1": lambda L: L.tensor([-2 ** 63]) // -1,
    "int min % -1": lambda L: L.tensor([-2 ** 63]) % -1,
    "float // 0": lambda L: L.tensor([1.0, -1.0, 0.0]) // 0,
    "float % 0": lambda L: L.tensor([1.0, -1.0, 0.0]) % 0,
    "fmod neg": lambda L: L.fmod(L.tensor([-7.0, 7.0]), -2),
    "remainder neg float": lambda L: L.remainder(L.tensor([-7.0, 7.0, -0.0]), 2.5),
    "remainder scalar self": lambda L: L.remainder(5, L.tensor([3, -3])),
    "abs int min": lambda L: L.tensor([-128], dtype=L.int8).abs(),
    "sign bool": lambda L: L.tensor([True, False]).sign(),
    "sqrt int": lambda L: L.tensor([4, -1]).sqrt(),
    "reciprocal int": lambda L: L.tensor([4, 0]).reciprocal(),
    "isnan int": lambda L: L.tensor([4, 0]).isnan(),
    "nan_to_num int": lambda L: L.tensor([4, 0]).nan_to_num(nan=1.5),
    "clamp min>max": lambda L: L.tensor([1.0, 5.0]).clamp(3, 2),
    "clamp int float bounds": lambda L: L.tensor([1, 5, 3]).clamp(1.5, 4.5),
    "clamp int tensor float bound": lambda L: L.tensor([1, 5, 3]).clamp(L.tensor(1.5)),
    "clamp none none": lambda L: L.tensor([1, 5, 3]).clamp(),
    "clamp nan bound": lambda L: L.tensor([1.0, 5.0]).clamp(float("nan"), 2),
    "clamp uint8 neg": lambda L: L.tensor([1, 5], dtype=L.uint8).clamp(-1, 3),
    "clamp uint8 neg big": lambda L: L.tensor([1, 5], dtype=L.uint8).clamp(-300, 3),
    "clamp int8 big": lambda L: L.tensor([1, 5], dtype=L.int8).clamp(max=300),
    "clamp bool": lambda L: L.tensor([True, False]).clamp(0, 1),
    "round int dec": lambda L: L.tensor([15, 25]).round(decimals=-1),
    "round half": lambda L: L.tensor([2.5, 3.5, -2.5, 0.5]).round(),
    "round f16 dec": lambda L: L.tensor([1.2345, 2.5], dtype=L.float16).round(decimals=2),
    "linspace tensor args": lambda L: L.linspace(L.tensor(0.0), L.tensor(1.0), 5),
    "arange tensor args": lambda L: L.arange(L.tensor(5)),
    "arange float32 accum": lambda L: L.arange(0, 1, 0.1, dtype=L.float32),
    "arange big count": lambda L: L.arange(-1.0, 1.0, 0.1).shape,
    "arange int step float": lambda L: L.arange(0, 5, 1.5),
    "full bool infer": lambda L: L.full((2,), True),
    "full int infer": lambda L: L.full((2,), 3),
    "zeros_like dtype": lambda L: L.zeros_like(F(L), dtype=L.int8),
    "randint dtype": lambda L: L.randint(0, 5, (3,)).dtype,
    "randperm dtype": lambda L: L.randperm(4).dtype,
    "rand int dtype": lambda L: L.rand(3, dtype=L.int64),
    "eye bool": lambda L: L.eye(2, dtype=L.bool),
    "tensor bool+float": lambda L: L.tensor([True, 1.5]),
    "tensor nested mixed": lambda L: L.tensor([[True, 1], [2, 3.5]]),
    "tensor int big float": lambda L: L.tensor([2 ** 53 + 1, 0.5]),
    "tensor uint8 data": lambda L: L.tensor(np.array([250, 3], dtype=np.uint8)) + 10,
    "tensor np bool": lambda L: L.tensor(np.array([True])),
    "tensor np f16": lambda L: L.tensor(np.array([1.5], dtype=np.float16)),
    "tensor np uint16": lambda L: L.tensor(np.array([1], dtype=np.uint16)),
    "tensor np obj": lambda L: L.tensor(np.array([1, "a"], dtype=object)),
    "as_tensor share": lambda L: (lambda a: (L.as_tensor(a).data_ptr() == a.ctypes.data))(np.zeros(3)),
    "as_tensor dtype copy": lambda L: (lambda a: (L.as_tensor(a, dtype=L.float32).data_ptr() == a.ctypes.data))(np.zeros(3)),
    "from_numpy noncontig": lambda L: L.from_numpy(np.arange(12.0).reshape(3, 4)[:, ::2]).stride(),
    "from_numpy neg stride": lambda L: L.from_numpy(np.arange(4.0)[::-1]),
    "from_numpy readonly": lambda L: L.from_numpy(np.broadcast_to(np.arange(3.0), (2, 3))),
    "tolist bf16": lambda L: L.tensor([1.1], dtype=L.bfloat16).tolist(),
    "tolist f16": lambda L: L.tensor([1.1], dtype=L.float16).tolist(),
    "item f32": lambda L: L.tensor(1.1).item(),
    "item u8": lambda L: L.tensor(200, dtype=L.uint8).item(),
}
for name, fn in cases.items():
    check(name, "", fn)

report(maxper=3)
