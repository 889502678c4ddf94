"""The Triton kernels compile for Hopper (sm_90) on this CPU: what the interpreter cannot see.

Runs ``python scripts/triton_compile_check.py --quick`` in a fresh process (the kernels
must not be the interpreted ones the interpreter tests create) and checks that the
matmul kernels use the Hopper tensor-core instruction and that nothing spills registers.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


# find_spec, not import: importing triton here, uninterpreted, during collection would
# force test_kernels_triton.py into its slower fresh-process fallback.
@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton not installed")
@pytest.mark.slow
def test_kernels_compile_for_hopper_with_wgmma_and_no_spills():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    script = Path(__file__).resolve().parents[2] / "scripts" / "triton_compile_check.py"
    run = [sys.executable, str(script), "--quick"]
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["arch"] == 90 and result["fits_shared"]
    kernels = {row["kernel"] for row in result["kernels"]}
    assert {"_attn_fwd", "_block_sparse_fwd", "_pooled_map", "_decode_partial"} <= kernels
    for row in result["kernels"]:
        assert row["stack_bytes"] == 0, f"register spills: {row}"
        if row["kernel"] in ("_attn_fwd", "_block_sparse_fwd", "_pooled_map"):
            assert row["wgmma"], f"no Hopper tensor-core matmul: {row}"
