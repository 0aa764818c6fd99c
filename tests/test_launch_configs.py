"""The LAUNCH_CONFIGS codec: one reader/writer, strict about the convention."""

from __future__ import annotations

import pytest

from kernelopt_jupyter.launch_configs import (
    LaunchConfigError,
    format_launch_configs,
    has_launch_configs,
    read_launch_configs,
    write_launch_configs,
)

SOURCE = """import triton

LAUNCH_CONFIGS = {
    "k_add": {"XBLOCK": 1024, "num_warps": 4, "num_stages": 1},
    "k_sum": {"XBLOCK": 8, "R0_BLOCK": 512, "num_warps": 8, "num_stages": 1},
}


def launch():  # kept byte for byte
    return LAUNCH_CONFIGS["k_add"]
"""


def test_read_write_round_trip_keeps_the_rest() -> None:
    configs = read_launch_configs(SOURCE)
    assert configs["k_sum"] == {"XBLOCK": 8, "R0_BLOCK": 512, "num_warps": 8, "num_stages": 1}
    configs["k_add"]["XBLOCK"] = 2048
    new = write_launch_configs(SOURCE, configs)
    assert read_launch_configs(new)["k_add"]["XBLOCK"] == 2048
    assert new.startswith("import triton\n\nLAUNCH_CONFIGS = {\n")
    assert new.endswith('def launch():  # kept byte for byte\n    return LAUNCH_CONFIGS["k_add"]\n')
    # Writing what was read changes nothing but the formatting of the dict.
    assert write_launch_configs(new, read_launch_configs(new)) == new


def test_no_dict_reads_empty_and_cannot_be_written() -> None:
    assert read_launch_configs("x = 1\n") == {}
    assert not has_launch_configs("x = 1\n")
    assert has_launch_configs(SOURCE)
    with pytest.raises(LaunchConfigError, match="no LAUNCH_CONFIGS"):
        write_launch_configs("x = 1\n", {"k": {"XBLOCK": 2}})


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("LAUNCH_CONFIGS = make()\n", "not a literal"),
        ("LAUNCH_CONFIGS = [1]\n", "not a dict"),
        ("LAUNCH_CONFIGS = {'k': 4}\n", "not a dict of settings"),
        ("LAUNCH_CONFIGS = {'k': {'XBLOCK': 1.5}}\n", "not a named integer"),
        ("LAUNCH_CONFIGS = {'k': {'XBLOCK': True}}\n", "not a named integer"),
        ("LAUNCH_CONFIGS = {'k': {'XBLOCK': 0}}\n", "not positive"),
        ("LAUNCH_CONFIGS = {\n", "does not parse"),
    ],
)
def test_broken_dicts_are_refused(text: str, why: str) -> None:
    with pytest.raises(LaunchConfigError, match=why):
        read_launch_configs(text)


def test_format_is_one_kernel_a_line_and_checked() -> None:
    text = format_launch_configs({"k": {"XBLOCK": 64, "num_warps": 2}})
    assert text == "LAUNCH_CONFIGS = {\n    'k': {'XBLOCK': 64, 'num_warps': 2},\n}"
    with pytest.raises(LaunchConfigError):
        format_launch_configs({"k": {"XBLOCK": -1}})
