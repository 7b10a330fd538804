"""Rewrites a CUDA source so that g++ compiles it against cuda_emu.h (see README.md here).

Two constructs of CUDA C++ are not C++: the launch `callee<<<config>>>(args)` and the
declaration `extern __shared__ T name[];`. A launch becomes
    ct_emu::launch(ct_emu::Config(config).named("callee"), [&, ct_emu_args = std::make_tuple(args)]() {
        std::apply([&](auto... a) { callee(a...); }, ct_emu_args); })
(arguments evaluated once, at the launch, each thread calling the kernel with its own copies);
dynamic shared memory becomes a pointer to the launch's buffer. `#include <cub/...>` lines are
dropped: cuda_emu.h has the few CUB algorithms the sources use.

usage: translate.py SRC OUT"""
import re
import sys


def match_forward(text, i, open_ch, close_ch):
    """Index just past the bracket closing the one at text[i]."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced %s%s" % (open_ch, close_ch))


def match_backward(text, end, open_ch, close_ch):
    """Index of the bracket opening the one at text[end - 1]."""
    depth = 0
    i = end
    while True:
        i -= 1
        if text[i] == close_ch:
            depth += 1
        elif text[i] == open_ch:
            depth -= 1
            if depth == 0:
                return i


def callee_start(text, end):
    """Start of the expression that ends just before text[end] (the kernel being launched):
    a possibly qualified name with template arguments, or a parenthesised expression."""
    i = end
    while i > 0 and text[i - 1].isspace():
        i -= 1
    if text[i - 1] == ")":
        return match_backward(text, i, "(", ")")
    if text[i - 1] == ">":
        i = match_backward(text, i, "<", ">")
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_:"):
        i -= 1
    return i


def code_mask(text):
    """in_code[i]: text[i] is neither in a comment nor in a string or character literal."""
    in_code = [True] * len(text)
    i = 0
    while i < len(text):
        two = text[i:i + 2]
        if two in ("//", "/*"):
            end = text.find("\n" if two == "//" else "*/", i + 2)
            end = len(text) if end < 0 else end + (0 if two == "//" else 2)
        elif text[i] in "\"'":
            end = i + 1
            while end < len(text) and text[end] != text[i]:
                end += 2 if text[end] == "\\" else 1
            end += 1
        else:
            i += 1
            continue
        for k in range(i, min(end, len(text))):
            in_code[k] = False
        i = end
    return in_code


def translate(text):
    text = re.sub(r"^\s*#\s*include\s*<cub/[^>]*>.*$", "/* (cub: see cuda_emu.h) */", text, flags=re.M)
    text = re.sub(r"extern\s+__shared__\s+(?:__align__\(\s*\d+\s*\)\s*)?([\w:\s\*]+?)\s+(\w+)\s*\[\s*\]\s*;",
                  r"\1 *\2 = (\1 *)ct_emu::dynamic_shared();", text)
    in_code = code_mask(text)
    out = []
    pos = 0
    while True:
        k = text.find("<<<", pos)
        while k >= 0 and not in_code[k]:
            k = text.find("<<<", k + 3)
        if k < 0:
            out.append(text[pos:])
            break
        start = callee_start(text, k)
        if start < pos:
            raise ValueError("launch callee overlaps the previous launch near: " + text[k - 80:k])
        close = text.find(">>>", k)
        config = text[k + 3:close]
        j = close + 3
        while text[j].isspace():
            j += 1
        if text[j] != "(":
            raise ValueError("launch without arguments near: " + text[k - 80:k + 80])
        args_end = match_forward(text, j, "(", ")")
        args = text[j + 1:args_end - 1]
        callee = text[start:k].strip()
        out.append(text[pos:start])
        name = " ".join(callee.split()).replace("\\", "").replace('"', "'")
        out.append("ct_emu::launch(ct_emu::Config(%s).named(\"%s\"), [&, ct_emu_args = std::make_tuple(%s)]() { "
                   "std::apply([&](auto... ct_emu_a) { %s(ct_emu_a...); }, ct_emu_args); })"
                   % (config, name, args, callee))
        pos = args_end
    return "".join(out)


if __name__ == "__main__":
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        text = f.read()
    with open(dst, "w") as f:
        f.write('#line 1 "%s"\n' % src)
        f.write(translate(text))
