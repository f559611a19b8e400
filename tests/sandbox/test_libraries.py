"""Libraries in the sandbox: numpy (the default of `sandbox.libraries`) imports there read-only,
threads start while processes do not, and a library that cannot be found is named, not fatal."""

from __future__ import annotations

import pytest

from synthgen.sandbox import Job, SandboxPool, Status, contest_job, values
from synthgen.sandbox.isolation import default_python, find_libraries

pytest.importorskip("numpy")


def test_numpy_is_importable_and_read_only(pool):
    code = (
        "import numpy as np, os\nprint(int(np.arange(5).sum()))\n"
        "try:\n    open(os.path.join(os.path.dirname(np.__file__), 'x'), 'w')\n    print('writable')\n"
        "except OSError:\n    print('read-only')\n"
    )
    result = pool.run_sync(contest_job(code, [""], mode="stdin", test_timeout_s=5, memory_mb=512))
    assert result.calls[0].status is Status.OK, result.calls
    assert result.calls[0].value.split() == ["10", "read-only"]


def test_an_unknown_library_is_named_and_the_pool_still_starts():
    found = find_libraries(default_python(), ("numpy", "no_such_library_here"))
    assert "numpy" in found.found and "no_such_library_here" in found.missing
    with SandboxPool(workers=1, libraries=("no_such_library_here",)) as pool:
        code = "try:\n    import numpy\n    print('numpy')\nexcept ImportError:\n    print('none')\n"
        result = pool.run_sync(contest_job(code, [""], mode="stdin", test_timeout_s=5, memory_mb=512))
    assert result.calls[0].value == "none\n"  # only what the settings name is bound in


LOADED = "import sys\nNAME = 'num' + 'py'\ndef loaded():\n    return NAME in sys.modules\n"


def test_any_job_can_import_numpy_whether_or_not_its_text_names_it(pool):
    named = pool.run_sync(Job(LOADED + "# uses numpy\n", ("__import__(NAME).arange(3).tolist()",), timeout_s=10))
    unnamed = pool.run_sync(Job(LOADED, ("__import__(NAME).arange(4).tolist()", "loaded()"), timeout_s=10))
    assert [values.decode(c.encoded) for c in named.calls] == [[0, 1, 2]], named.calls
    assert [values.decode(c.encoded) for c in unnamed.calls] == [[0, 1, 2, 3], True], unnamed.calls


def test_without_numpy_bound_no_job_has_it_loaded():
    with SandboxPool(workers=1, libraries=()) as pool:
        result = pool.run_sync(Job(LOADED + "# uses numpy\n", ("loaded()",), timeout_s=10))
    assert [values.decode(c.encoded) for c in result.calls] == [False], result.calls
