"""The processor's own reciprocal square root estimate, the one ACL's math library starts
from when it normalises a rotation (SSE `rsqrtss`, refined by two Newton steps).

The refined value still carries the estimate in its last bit, and so do ACL's errors: with
the exact value as the start, one of ACL's `max_error`s in eighteen came out 1e-7 cm off.
On an x86 processor the instruction itself is run, compiled once with llvmlite (already the
compiler numba uses); elsewhere, or if that fails, the exact value is the estimate, and
ACL's numbers are matched to float32 rounding instead of to the bit. The estimate differs
between processor makers, as ACL's numbers do.
"""

from __future__ import annotations

import ctypes
import platform
from functools import cache
from typing import Any

import numpy as np

Array = np.ndarray

_IR = r"""
declare <4 x float> @llvm.x86.sse.rsqrt.ss(<4 x float>)
define void @rsqrt(float* %src, float* %dst, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %body]
  %done = icmp sge i64 %i, %n
  br i1 %done, label %exit, label %body
body:
  %p = getelementptr float, float* %src, i64 %i
  %x = load float, float* %p
  %v = insertelement <4 x float> undef, float %x, i32 0
  %r = call <4 x float> @llvm.x86.sse.rsqrt.ss(<4 x float> %v)
  %y = extractelement <4 x float> %r, i32 0
  %q = getelementptr float, float* %dst, i64 %i
  store float %y, float* %q
  %next = add i64 %i, 1
  br label %loop
exit:
  ret void
}
"""
_ENGINES: list[Any] = []  # the compiled code lives as long as its engine


@cache
def _instruction() -> Any:
    """The compiled `rsqrtss` loop, or None where there is none to run."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return None
    try:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        module = llvm.parse_assembly(_IR)
        module.verify()
        machine = llvm.Target.from_default_triple().create_target_machine()
        engine = llvm.create_mcjit_compiler(module, machine)
        engine.finalize_object()
        _ENGINES.append(engine)
        kind = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
        return kind(engine.get_function_address("rsqrt"))
    except Exception:  # no JIT here: the exact estimate
        return None


def estimate(x: Array) -> Array:
    """(...) float32 the processor's estimate of 1 / sqrt(x) (float32 x), or the exact value
    rounded to float32 where the instruction cannot run."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    fn = _instruction()
    if fn is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (1.0 / np.sqrt(x.astype(np.float64))).astype(np.float32)
    out = np.empty_like(x)
    fn(x.ctypes.data, out.ctypes.data, x.size)
    return out
