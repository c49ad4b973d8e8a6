"""fpga.report's command line: the seed list."""

import pytest

from fpga.report import main


@pytest.mark.parametrize("text", ["1,1", "a", "1,,2"])
def test_bad_seed_lists_are_refused(text, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--seed", text, "--unit", "scratch"])
    assert exc.value.code == 2
    assert "seed" in capsys.readouterr().err
