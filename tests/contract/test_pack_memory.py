"""Reading an uploaded pack holds bounded memory whatever its entries claim: a deflate entry
that says it holds 1,000 bytes and expands without end (1 GiB of zeros) raises the peak of the
reading process by a small constant. The reading runs in a child process (this module, run with
`python -m`) whose peak resident memory is measured before and after.
"""

from __future__ import annotations

import json
import sys

from almanac.platform.contract.pack import CodeRefused, read_pack
from tests.contract.test_pack import _bomb
from tests.sandbox.peak_memory import MIB, peak_growth, print_child_answer, run_child

# The issue asks for at most 64 MiB; the entry declares 1,000 bytes, so a reader that inflates
# no further than the declaration grows by next to nothing. 8 MiB is tight enough to fail a
# reader that lets the entry reach the archive's 32 MiB budget instead.
GROWTH_LIMIT = 8 * MIB


def test_an_entry_that_expands_without_end_raises_the_peak_by_at_most_8_mib() -> None:
    answer = run_child("tests.contract.test_pack_memory", {"zeros": 1 << 30, "declared": 1000})
    grew = answer["grew"]
    print(f"\nZIP entry declaring 1000 bytes, inflating to 1 GiB: peak grew {grew / MIB:.1f} MiB")
    assert grew <= GROWTH_LIMIT, f"the peak grew by {grew / MIB:.1f} MiB"
    assert answer["code"] == "PLG-ZIP-UNCOMPRESSED-TOO-LARGE"
    assert "inflating stopped" in answer["message"]


def main() -> None:
    case = json.loads(sys.argv[1])
    archive = _bomb(case["zeros"], declared=case["declared"])

    def attempt() -> dict[str, str]:
        try:
            read_pack(archive)
        except CodeRefused as refused:
            return {"code": refused.code, "message": str(refused)}
        return {"code": "", "message": "read"}

    outcome, grew = peak_growth(attempt)
    print_child_answer({**outcome, "grew": grew, "archive": len(archive)})


if __name__ == "__main__":
    main()
