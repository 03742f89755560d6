"""Real TensorCache node processes for the client's tests, started through ./tensorcache."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

EXAMPLES = 3000
RANGE_SIZE = 512
MAX_BATCH = 4096
JOB = ["--examples", str(EXAMPLES), "--range-size", str(RANGE_SIZE)]
UP = re.compile(r"node up: \S+ roles=\S+(?: \S+)* cache=(\S+) lookup-port=(\S+)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_pytest() -> None:
    """In the child, before exec: SIGKILL when pytest ends, however it ends (Linux's
    PR_SET_PDEATHSIG, kept across the launcher's exec of java); elsewhere nothing."""
    if sys.platform.startswith("linux"):
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


def launcher(args: List[str], java_opts: str = "", **kw) -> subprocess.Popen:
    env = dict(os.environ)
    # small heaps: several JVMs on a small machine; every node allows batches of up to MAX_BATCH
    env["JAVA_OPTS"] = f"-Xmx512m -Dtensorcache.lookup.max-batch={MAX_BATCH} {java_opts}".strip()
    return subprocess.Popen([str(ROOT / "tensorcache")] + args, cwd=ROOT, env=env,
                            preexec_fn=_die_with_pytest, **kw)


class Node:
    """One `./tensorcache node` process with a lookup port."""

    def __init__(self, data_dir: Path, seeds: Optional[str] = None, job: Optional[List[str]] = None,
                 java_opts: str = "") -> None:
        self.port = free_port()
        self.log = data_dir / f"node-{self.port}.log"
        args = ["node", "--host", "127.0.0.1", "--port", str(self.port), "--lookup-port", "0",
                "--data-dir", str(data_dir)] + (JOB if job is None else job)
        if seeds:
            args += ["--seeds", seeds]
        self.process = launcher(args, java_opts, stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        self.cache, self.endpoint = self._await_up(240)

    def _await_up(self, within: float):
        deadline = time.time() + within
        while time.time() < deadline:
            m = UP.search(self.log.read_text(errors="replace"))
            if m:
                return m.group(1), m.group(2)
            if self.process.poll() is not None:
                raise RuntimeError(f"node exited {self.process.returncode}: {self.log.read_text()[-3000:]}")
            time.sleep(0.5)
        raise RuntimeError(f"node not up within {within} s: {self.log.read_text()[-3000:]}")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()


def reference(data_dir: Path, cache: str, examples: int = EXAMPLES) -> Dict[str, np.ndarray]:
    """Every value of the cache, from its verified segment files (safetensors), in index order."""
    from safetensors.numpy import load_file

    parts: Dict[str, List[np.ndarray]] = {}
    files = sorted((data_dir / cache / "segments").glob("range-*.safetensors"))
    assert len(files) == -(-examples // RANGE_SIZE), files
    for f in files:
        for name, values in load_file(str(f)).items():
            if name != "__present__":
                parts.setdefault(name, []).append(values)
    return {name: np.concatenate(v) for name, v in parts.items()}


@pytest.fixture(scope="session")
def filled(tmp_path_factory) -> Path:
    """A data directory whose cache is filled and persisted in one process."""
    data = tmp_path_factory.mktemp("filled")
    done = launcher(["fill", "--local", "--data-dir", str(data)] + JOB,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = done.communicate(timeout=600)
    assert done.returncode == 0, out
    return data


@pytest.fixture(scope="session")
def nodes(filled) -> Iterator[List[Node]]:
    """Three nodes in one cluster on one data directory, as nodes of one machine share it (the H2
    journal, so the trainer sessions, and the segments): the first restores the filled cache, the
    others join it. Three, so that the two left after one dies are a majority and stay up."""
    first = Node(filled)
    nodes = [first]
    try:
        nodes.append(Node(filled, seeds=first.address))
        nodes.append(Node(filled, seeds=first.address))
        yield nodes
    finally:
        for n in reversed(nodes):
            n.stop()


def make_certificates(out: Path, ca: str, *names: str) -> Dict[str, Path]:
    """With ``openssl``, as docs/security.md shows: a CA ``ca`` (``<ca>.pem``, ``<ca>.key``) and for
    each name a certificate it signs for 127.0.0.1 and localhost (``<name>.pem``) with its unencrypted
    PKCS#8 key (``<name>.key``). Skips the test without openssl, except on CI."""
    if shutil.which("openssl") is None:
        if os.environ.get("CI") == "true":
            raise RuntimeError("CI: openssl is needed to make the TLS tests' certificates")
        pytest.skip("no openssl to make certificates with")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=out, check=True, capture_output=True)

    openssl("req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2",
            "-subj", f"/CN={ca}", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    (out / "leaf.ext").write_text(
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "extendedKeyUsage=serverAuth,clientAuth\nsubjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid\n")
    files = {ca: out / f"{ca}.pem"}
    for name in names:
        openssl("req", "-new", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", "leaf.ext")
        files[name] = out / f"{name}.pem"
        files[name + ".key"] = out / f"{name}.key"
    return files
