"""The check every pipeline's CLI tests share: a refused command ends with one line on stderr
and exit status 2, and leaves no run folder behind."""

import pytest


def assert_refused_in_one_line(main, argv, message, tmp_path, capsys, *, game, start):
    """``main(argv + --runs-dir tmp_path)`` exits 2 with one stderr line that begins with
    ``start`` and contains ``message``; ``tmp_path/game`` is never made."""
    with pytest.raises(SystemExit) as e:
        main(argv + ["--runs-dir", str(tmp_path)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(start), err
    assert message in err
    assert not (tmp_path / game).exists()
