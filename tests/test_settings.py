"""The service's settings from the environment: a value it cannot use is refused with the
variable named, and `almanac` answers it as it answers a bad argument (status 2, no
traceback), before anything is made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from almanac.settings import SettingsError, load_settings


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ALMANAC_PORT", "abc"),
        ("ALMANAC_DAGSTER_PORT", "3000x"),
        ("ALMANAC_RUN_SLOTS", "-1"),
        ("ALMANAC_API_WORKERS", "0"),
        ("ALMANAC_DNS_SERVERS", "nonsense"),
        ("ALMANAC_NETWORK_PROBE", "http://www.example.org/"),
        ("ALMANAC_NETWORK_PROBE", "www.example.org"),
        ("ALMANAC_HOST", "localhost"),
    ],
)
def test_a_value_the_service_cannot_use_names_its_variable(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=f"^{name}: '{value}' "):
        load_settings({name: value})


def test_the_defaults_and_whole_numbers_are_taken() -> None:
    settings = load_settings({"ALMANAC_PORT": " 8100", "ALMANAC_RUN_SLOTS": "0"})
    assert (settings.api_port, settings.dagster_port, settings.run_slots) == (8100, 3000, 0)
    assert settings.api_workers == 1
    assert settings.network_probe is None
    assert settings.host == "127.0.0.1"
    assert load_settings({"ALMANAC_HOST": " 10.0.0.5 "}).host == "10.0.0.5"
    probe = load_settings({"ALMANAC_NETWORK_PROBE": "https://www.example.org/"}).network_probe
    assert probe == "https://www.example.org/"


def test_almanac_up_refuses_a_bad_setting_before_making_anything(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "almanac"), "up"],
        env={**os.environ, "ALMANAC_HOME": str(home), "ALMANAC_API_WORKERS": "many"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "almanac: error: ALMANAC_API_WORKERS: 'many' is not a number of workers (1 to 64)"
    )
    assert "Traceback" not in done.stderr
    assert not home.exists()
