#!/usr/bin/env python3
"""Rewrites a .cu file's kernel launches for a host compiler.

    name<T, U><<<grid, block, shared, stream>>>(args)
becomes
    ::stowage::cuda_emulation::launch_kernel([=] { name<T, U>(args); }, grid, block, shared, stream)

so that the CUDA sources compile with g++ against cuda_emulation.h (forced
in with -include) and run on the host's emulated blocks. The call sits in
a lambda so that template arguments the launch leaves to deduction are
deduced from the arguments as nvcc deduces them. The lambda copies the
variables at the launch, but the argument expressions are evaluated by
each thread when its stream runs the launch (the project's launches pass
variables and pure expressions, for which that is the same). Only the launch syntax
needs rewriting: everything else a kernel uses is C++ once the emulation
header defines CUDA's keywords and built-ins.

Usage: translate_launches.py IN.cu OUT.cpp
"""
import sys

IDENTIFIER = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:")


def kernel_start(text, end):
    """Where the kernel expression ending just before `end` begins: an
    identifier (namespaces included), with template arguments if any."""
    i = end
    while i > 0 and text[i - 1].isspace():
        i -= 1
    if i > 0 and text[i - 1] == ">":  # template arguments: match the brackets back
        depth = 0
        while i > 0:
            i -= 1
            if text[i] == ">":
                depth += 1
            elif text[i] == "<":
                depth -= 1
                if depth == 0:
                    break
        else:
            raise ValueError("unbalanced template arguments before a launch")
    while i > 0 and text[i - 1] in IDENTIFIER:
        i -= 1
    return i


def call_end(text, at):
    """The index just past the parenthesised argument list starting at `at`
    (after whitespace)."""
    i = at
    while text[i].isspace():
        i += 1
    if text[i] != "(":
        raise ValueError("a launch without its argument list")
    depth = 0
    while i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced parentheses in a launch's arguments")


def translate(text):
    out, at = [], 0
    while True:
        open_ = text.find("<<<", at)
        if open_ < 0:
            out.append(text[at:])
            return "".join(out)
        close = text.find(">>>", open_)
        if close < 0:
            raise ValueError("<<< without >>>")
        start = kernel_start(text, open_)
        if start < at:
            raise ValueError("a launch inside another launch's kernel expression")
        kernel = text[start:open_]
        config = text[open_ + 3 : close]
        end = call_end(text, close + 3)
        args = text[close + 3 : end].strip()
        out.append(text[at:start])
        # The newlines a launch spans stay, so that #line keeps every line's number.
        breaks = "\n" * (kernel.count("\n") + text[close + 3 : end].count("\n") - args.count("\n"))
        out.append(f"::stowage::cuda_emulation::launch_kernel([=] {{ {kernel.strip()}{args}; }},{breaks} {config})")
        at = end


def main():
    source, target = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    try:
        translated = translate(text)
    except ValueError as e:
        sys.exit(f"{source}: {e}")
    with open(target, "w", encoding="utf-8") as f:
        f.write(f'#line 1 "{source}"\n')
        f.write(translated)


if __name__ == "__main__":
    main()
