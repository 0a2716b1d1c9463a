"""What ``pip install mcp-elicit`` gives a user: the sdist and the wheel, built as a
frontend builds them (the sdist from the tracked files, the wheel from the unpacked sdist)
with setuptools from the package index, and the wheel run outside the source tree.

The tracked files (``git ls-files``) are copied to a temporary directory first, so files
lying in the worktree but not in git cannot leak into what is checked, and no build
output is left in the repository. Without the package index the tests are skipped.
"""

from __future__ import annotations

import ast
import configparser
import email.message
import email.parser
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import mcp_elicit

pytestmark = [pytest.mark.packaging, pytest.mark.slow, pytest.mark.xdist_group("packaging")]

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable


@dataclass
class Built:
    sdist: Path
    wheel: Path
    tracked: list[str]
    installed: Path  # the wheel unzipped: what site-packages would hold


def _run(
    args: list[str], *, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


def _build(directory: Path, hook: str, out: Path, backend: Path) -> Path:
    """Run setuptools' PEP 517 hook ``build_sdist`` or ``build_wheel`` in ``directory``."""
    env = {**os.environ, "PYTHONPATH": str(backend)}
    code = f"import sys, setuptools.build_meta as backend; print(backend.{hook}(sys.argv[1]))"
    done = _run([PYTHON, "-c", code, str(out)], cwd=directory, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("packaging")
    listed = _run(["git", "ls-files", "-z"], cwd=ROOT)
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout, so the tracked files are unknown: {listed.stderr.strip()}")
    tracked = [name for name in listed.stdout.split("\0") if name and (ROOT / name).is_file()]
    source = tmp / "source"
    for name in tracked:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)

    pyproject = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    wheels = tmp / "backend-wheels"
    fetch = [PYTHON, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
    fetch += ["--timeout", "15", "--retries", "1", "-d", str(wheels), *pyproject["build-system"]["requires"]]
    try:
        fetched = _run(fetch, cwd=tmp)
    except subprocess.TimeoutExpired:
        pytest.skip("cannot fetch the build backend: the package index did not answer within 120 s")
    if fetched.returncode != 0:
        pytest.skip(f"cannot fetch the build backend from the package index: {fetched.stderr.strip()[-600:]}")
    backend = tmp / "backend"
    for wheel in wheels.glob("*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(backend)

    sdist = _build(source, "build_sdist", tmp / "dist", backend)
    unpacked = tmp / "unpacked"
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (top,) = unpacked.iterdir()
    wheel = _build(top, "build_wheel", tmp / "dist", backend)
    installed = tmp / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(installed)
    return Built(sdist, wheel, tracked, installed)


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _metadata(built: Built) -> email.message.Message:
    with zipfile.ZipFile(built.wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(archive.read(name).decode("utf-8"))


def _package_files(built: Built) -> set[str]:
    return {name for name in built.tracked if name.startswith("mcp_elicit/")}


def test_the_wheel_holds_every_tracked_package_file_and_nothing_else(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as archive:
        names = archive.namelist()
    dist_info = f"mcp_elicit-{mcp_elicit.__version__}.dist-info/"
    assert {n for n in names if not n.startswith(dist_info)} == _package_files(built)
    assert "mcp_elicit/py.typed" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_the_console_script_is_the_command_lines_main(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        points = configparser.ConfigParser()
        points.read_string(archive.read(name).decode("utf-8"))
    assert dict(points["console_scripts"]) == {"mcp-elicit": "mcp_elicit.cli.entry:main"}


def _requirements(texts: list[str], extra: str | None = None) -> set[str]:
    marked = []
    for text in texts:
        requirement = Requirement(text)
        if extra is not None:
            marker = f"({requirement.marker}) and " if requirement.marker else ""
            requirement = Requirement(f"{str(requirement).split(';')[0]}; {marker}extra == '{extra}'")
        marked.append(str(Requirement(str(requirement))))
    return set(marked)


def test_the_metadata_says_what_pyproject_says(built: Built) -> None:
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    metadata = _metadata(built)
    assert metadata["Name"] == "mcp-elicit"
    assert metadata["Version"] == mcp_elicit.__version__
    assert metadata["Summary"] == project["description"]
    assert metadata["Requires-Python"] == project["requires-python"]
    expected = _requirements(project["dependencies"])
    for extra, texts in project["optional-dependencies"].items():
        expected |= _requirements(texts, extra)
    assert _requirements(metadata.get_all("Requires-Dist") or []) == expected
    assert set(metadata.get_all("Provides-Extra") or []) == {"cli", "redis", "oauth", "otel", "dev"}
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload() == (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_license_is_declared_and_shipped(built: Built) -> None:
    metadata = _metadata(built)
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "mcp-elicit contributors" in text
    with zipfile.ZipFile(built.wheel) as archive:
        assert (
            archive.read(f"mcp_elicit-{mcp_elicit.__version__}.dist-info/licenses/LICENSE").decode() == text
        )


def test_the_classifiers_say_typed_and_the_python_versions(built: Built) -> None:
    classifiers = set(_metadata(built).get_all("Classifier") or [])
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3 :: Only" in classifiers
    # README: "runs on Python 3.11 and later", the suite passing on 3.12 and 3.13 too
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in (11, 12, 13)} <= classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # the expression says it


def test_the_sdist_holds_the_project_and_not_a_part_of_the_tests(built: Built) -> None:
    with tarfile.open(built.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "LICENSE", "PKG-INFO"} <= names
    assert _package_files(built) <= names
    # the suite needs tests/support, Node and the peers: a few of its files would be no use
    assert not [name for name in names if name.startswith(("tests/", "bench/"))]


def _isolated(built: Built, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -P -s ARGS`` with only the unzipped wheel on PYTHONPATH (the dependencies
    come from the interpreter's own site-packages), run in an empty directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(built.installed)
    return _run([PYTHON, "-P", "-s", *args], cwd=tmp_path, env=env)


#: The console script as pip writes it: the entry point of the installed distribution,
#: called with the command line.
_CONSOLE_SCRIPT = """
import importlib.metadata, json, sys
import mcp_elicit
dist = importlib.metadata.distribution("mcp-elicit")
(point,) = [p for p in dist.entry_points if p.group == "console_scripts" and p.name == "mcp-elicit"]
print(json.dumps({"package": mcp_elicit.__file__, "dist": str(dist.locate_file(""))}), file=sys.stderr)
sys.argv[0] = "mcp-elicit"
sys.exit(point.load()())
"""


def _where(stderr: str) -> dict[str, str]:
    found: dict[str, str] = json.loads(stderr.splitlines()[0])
    return found


def test_the_installed_command_runs_outside_the_source_tree(built: Built, tmp_path: Path) -> None:
    done = _isolated(built, tmp_path, "-c", _CONSOLE_SCRIPT, "--help")
    assert done.returncode == 0, done.stderr
    where = _where(done.stderr)
    assert Path(where["package"]).is_relative_to(built.installed), where
    assert Path(where["dist"]) == built.installed, where
    assert done.stdout.startswith("usage: mcp-elicit")
    for command in ("serve", "keygen", "check", "call"):
        assert command in done.stdout


def test_version_says_the_installed_version(built: Built, tmp_path: Path) -> None:
    done = _isolated(built, tmp_path, "-c", _CONSOLE_SCRIPT, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"mcp-elicit {_metadata(built)['Version']}\n"
    assert _metadata(built)["Version"] == mcp_elicit.__version__


#: The browser answerer of the unzipped package, its link caught instead of a browser
#: opened; prints where it was imported from and what its page's assets are.
_WEB_ASSETS = """
import asyncio, json, sys
import httpx
from mcp_elicit.core.client_inputs import Origin, ServerInfo, parse_elicitation
from mcp_elicit.ui import web
from mcp_elicit.ui.web_assets import STATIC

async def main():
    loop = asyncio.get_running_loop()
    links = asyncio.Queue()
    def opener(url):
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True
    request = parse_elicitation(
        {"mode": "form", "message": "Your name?",
         "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}},
        server=ServerInfo(name="demo", version="1"), key="k", origin=Origin("tools/call", "t"),
    )
    answerer = web.WebAnswerer(open_url=opener, announce=lambda text: None, timeout=30)
    task = asyncio.ensure_future(answerer.elicit_many([request]))
    link = await asyncio.wait_for(links.get(), 10)
    base = link.split("/r/")[0]
    assets = {}
    async with httpx.AsyncClient(timeout=10) as client:
        for path in STATIC:
            response = await client.get(f"{base}{path}")
            assets[path.rsplit("/", 1)[1]] = [response.status_code, response.headers["content-type"], response.text]
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    print(json.dumps({"package": web.__file__, "link": link, "assets": assets}))

asyncio.run(main())
"""


def test_the_installed_web_answerer_serves_its_page_assets(built: Built, tmp_path: Path) -> None:
    done = _isolated(built, tmp_path, "-c", _WEB_ASSETS)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert Path(seen["package"]).is_relative_to(built.installed), seen["package"]
    assert seen["link"].startswith("http://127.0.0.1:")
    static = ROOT / "mcp_elicit" / "ui" / "web_static"
    # every script the page loads (urlstep.js among them) and its stylesheet, each shipped
    assert set(seen["assets"]) == {path.name for path in static.iterdir()}
    for name, (status, content_type, text) in seen["assets"].items():
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        assert status == 200, (name, status)
        assert content_type.startswith(kind), (name, content_type)
        assert text == (static / name).read_text(encoding="utf-8")


def test_the_client_says_the_packages_version_when_not_installed() -> None:
    """``clientInfo`` and ``--version`` read the installed distribution; from a source tree
    that is not installed they fall back on ``ClientInfo``'s default, which must not drift."""
    from mcp_elicit.core.client import ClientInfo

    assert ClientInfo().version == mcp_elicit.__version__


#: Imported by the package without being a requirement of its own, and why that is safe.
_IMPORTED_THROUGH = {"pydantic-core": "pydantic requires the exact pydantic-core it was built with"}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_library_the_package_imports_is_a_requirement() -> None:
    """A module importing a library that is only there because something else brought it
    along works here and fails in a user's environment (or after a dependency's release)."""
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    declared = {_normalized(Requirement(text).name) for text in project["dependencies"]}
    for extra, texts in project["optional-dependencies"].items():
        if extra != "dev":
            declared |= {_normalized(Requirement(text).name) for text in texts}
    providers = importlib.metadata.packages_distributions()
    undeclared: dict[str, set[str]] = {}
    for path in sorted((ROOT / "mcp_elicit").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top in ("mcp_elicit", "__future__", "_typeshed"):
                    continue
                names = {_normalized(name) for name in providers.get(top, [top])}
                if not names & (declared | set(_IMPORTED_THROUGH)):
                    undeclared.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    assert not undeclared, f"imported but not in pyproject's dependencies or extras: {undeclared}"
