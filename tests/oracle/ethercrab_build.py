"""Build the ethercrab programs the judge tests run, cached under target/ethercrab-judges/.

* ethercrab 0.7.1's own examples (`discover`, `dc`), built unchanged from the crate's
  published source: `cargo metadata` on bench/ethercrab-peer (whose Cargo.lock pins
  ethercrab 0.7.1) puts that source into cargo's registry; it is copied to
  target/ethercrab-judges/ethercrab-0.7.1 and built there with its own published Cargo.lock
  (`--locked`; dev-dependencies come from crates.io). The crate pins toolchain 1.85 in
  rust-toolchain.toml; the build uses this repo's active toolchain instead (RUSTUP_TOOLCHAIN),
  which changes nothing in the crate. The root Cargo.toml excludes target/ from the
  workspace so the copy builds on its own.
* `ethercrab-request-op`, the request-OP-then-cycle program in bench/ethercrab-peer.

Both share the target directory target/ethercrab-judges/target, so a second run only checks
fingerprints. The first build compiles ethercrab's dev-dependencies and takes minutes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from helpers import REPO, describe, need, run

VERSION = "0.7.1"
JUDGES = REPO / "target" / "ethercrab-judges"
TARGET = JUDGES / "target"
PEER = REPO / "bench" / "ethercrab-peer" / "Cargo.toml"
BUILD_TIMEOUT = 1500.0


def cargo_env() -> dict[str, str]:
    """The environment for cargo: this repo's toolchain, whatever the crate pins."""
    env = dict(os.environ)
    if "RUSTUP_TOOLCHAIN" not in env and shutil.which("rustup"):
        p = run(["rustup", "show", "active-toolchain"], cwd=REPO, timeout=60)
        words = p.stdout.split()
        if p.returncode == 0 and words:
            env["RUSTUP_TOOLCHAIN"] = words[0]
    return env


def _cargo(args: list, cwd: Path, env: dict[str, str], what: str):
    p = run(["cargo", *args], cwd=cwd, env=env, timeout=BUILD_TIMEOUT)
    if p.returncode != 0:
        pytest.fail(f"{what} failed:\n{describe(p)}", pytrace=False)
    return p


def _source(env: dict[str, str]) -> Path:
    """The published ethercrab source in cargo's registry (downloaded if needed)."""
    p = _cargo(
        ["metadata", "--format-version", "1", "--locked", "--manifest-path", PEER],
        REPO,
        env,
        "cargo metadata of bench/ethercrab-peer",
    )
    for pkg in json.loads(p.stdout)["packages"]:
        if pkg["name"] == "ethercrab" and pkg["version"] == VERSION:
            src = Path(pkg["manifest_path"]).parent
            if "registry" not in src.parts:
                pytest.fail(f"ethercrab {VERSION} does not come from a registry: {src}")
            return src
    pytest.fail(f"bench/ethercrab-peer/Cargo.lock does not resolve ethercrab {VERSION}")


def build() -> dict[str, Path]:
    """Build (or find up to date) the judges; returns {"discover", "dc", "request-op"}."""
    need(None if shutil.which("cargo") else "cargo not installed: cannot build ethercrab")
    env = cargo_env()
    crate = JUDGES / f"ethercrab-{VERSION}"
    if not (crate / "Cargo.toml").is_file():
        src = _source(env)
        JUDGES.mkdir(parents=True, exist_ok=True)
        tmp = JUDGES / f".copy-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src, tmp)
        tmp.rename(crate)
    common = ["build", "--release", "--locked", "--target-dir", TARGET]
    _cargo(
        [*common, "--example", "discover", "--example", "dc"],
        crate,
        env,
        f"building ethercrab {VERSION}'s examples",
    )
    _cargo(
        [*common, "--manifest-path", PEER, "--bin", "ethercrab-request-op"],
        REPO,
        env,
        "building bench/ethercrab-peer's ethercrab-request-op",
    )
    out = {
        "discover": TARGET / "release" / "examples" / "discover",
        "dc": TARGET / "release" / "examples" / "dc",
        "request-op": TARGET / "release" / "ethercrab-request-op",
    }
    for name, path in out.items():
        assert path.is_file(), f"{name}: {path} missing after the build"
    return out
