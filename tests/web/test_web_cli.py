"""python -m jaxgames.web's flags: 127.0.0.1 by default, bad flags refused with exit 2."""

import pytest

from jaxgames.web import cli


def test_default_bind_is_this_machine_only():
    args = cli.parse_args([])
    assert args.host == "127.0.0.1"
    assert args.port == cli.DEFAULT_PORT
    assert args.runs == {}
    assert args.warm_up is True and cli.parse_args(["--no-warm-up"]).warm_up is False


def test_host_port_and_runs():
    args = cli.parse_args(["--host", "0.0.0.0", "--port", "9000", "--run", "holdem=runs/holdem/x",
                           "--run", "2048=runs/game2048/y"])
    assert (args.host, args.port) == ("0.0.0.0", 9000)
    assert args.runs == {"holdem": "runs/holdem/x", "2048": "runs/game2048/y"}


@pytest.mark.parametrize("argv, says", [
    (["--port", "0"], "--port"),
    (["--port", "70000"], "--port"),
    (["--port", "http"], "must be an integer"),
    (["--bogus"], "unrecognized arguments"),
    (["--run", "chess=runs/x"], "no game 'chess'"),
    (["--run", "holdem"], "GAME=RUN_FOLDER"),
    (["--run", "holdem=a", "--run", "holdem=b"], "given twice"),
])
def test_bad_flags_exit_2_with_one_line(argv, says, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert says in err
    assert err.strip().splitlines()[-1].startswith("python -m jaxgames.web: error:")
