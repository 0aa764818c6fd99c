"""What a person meets on a fresh clone (issue 13, packaging): the README's prerequisites and
screenshots, ``scripts/demo.sh``'s own kernel, ``scripts/test.sh`` without sudo, and session
folders that git ignores. The scripts are read, not run: they install into an environment."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "docs" / "screenshots"


def _commands(script: Path) -> list[str]:
    """The script's commands: comments dropped, continued lines joined."""
    text = re.sub(r"\\\n\s*", " ", script.read_text())
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def test_readme_lists_the_prerequisites() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Prerequisites", 1)[1].split("\n## ", 1)[0]
    for needed in ("Python 3.11", "Node.js >= 20", "npm", "disk", "chromium"):
        assert needed in section, f"README's prerequisites do not mention {needed!r}"


def test_readme_screenshots_exist_and_are_the_browser_tests() -> None:
    readme = (ROOT / "README.md").read_text()
    shown = re.findall(r"!\[[^\]]*\]\((docs/screenshots/[^)]+)\)", readme)
    assert shown, "the README shows no screenshot of the panel"
    assert all((ROOT / path).is_file() for path in shown), shown
    # Each one is taken by a browser test (refreshed with KERNELOPT_UPDATE_GOLDEN=1), so it
    # stays true; none is a hand-made picture the tests never redraw.
    browser = "".join(p.read_text() for p in (ROOT / "tests" / "browser").glob("test_*.py"))
    taken = set(re.findall(r'doc_shot\(page, \w+, "([\w-]+)"\)', browser))
    assert {Path(path).stem for path in shown} <= taken, (shown, taken)
    assert {p.stem for p in SCREENSHOTS.glob("*.png")} <= taken


def test_demo_installs_a_kernel_of_its_own_inside_its_environment() -> None:
    commands = _commands(ROOT / "scripts" / "demo.sh")
    [install] = [c for c in commands if "ipykernel install" in c]
    assert "--sys-prefix" in install and "--name kernelopt" in install, install
    assert "--user" not in install and "--name python3" not in install, install
    [execute] = [c for c in commands if "nbconvert" in c]
    assert "kernel_name=kernelopt" in execute and "store_widget_state=False" in execute


def test_test_script_never_runs_sudo_and_says_what_it_installs() -> None:
    commands = _commands(ROOT / "scripts" / "test.sh")
    unquoted = [re.sub(r"\"[^\"]*\"|'[^']*'", "", c) for c in commands]
    assert not [c for c in unquoted if re.search(r"\bsudo\b", c)], "test.sh runs sudo"
    for installer in ("pip install", "apt-get install"):
        said = [c for c in commands if c.startswith("echo") and installer.split()[0] in c]
        assert said, f"test.sh runs {installer} without saying so"


def test_session_folders_are_ignored_by_git() -> None:
    for path in ("runs/x-1/events.jsonl", "notebooks/runs/x-1/events.jsonl"):
        ignored = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT)
        assert ignored.returncode == 0, f"{path} is not ignored by git"
