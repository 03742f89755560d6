"""A lookup port with TLS 1.3 (client certificates of its own client CA) and a token, through the
Python client: lookups and a session are the cache's values bit for bit; a wrong token, no token,
no client certificate or one of another CA get nothing."""

from __future__ import annotations

import subprocess
import time
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import RANGE_SIZE, Node, launcher, make_certificates, reference
from tensorcache import TensorCacheClient, Unauthorized, Unavailable, tls_context

EXAMPLES = 1024
JOB = ["--examples", str(EXAMPLES), "--range-size", str(RANGE_SIZE)]
TOKEN = "py-token-of-the-lookup-port"
IDLE = 3  # seconds: the node closes connections idle longer, pooled ones of the client too


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    """A node whose lookup port takes TLS and a token, on a cache filled in one process first."""
    certs = tmp_path_factory.mktemp("certs")
    nodes = make_certificates(certs, "nodes-ca", "node")
    clients = make_certificates(certs, "clients-ca", "trainer")
    (certs / "rogue").mkdir()
    rogue = make_certificates(certs / "rogue", "rogue-ca", "rogue")
    token = certs / "lookup.token"
    token.write_text(TOKEN + "\n")
    data = tmp_path_factory.mktemp("secure")
    done = launcher(["fill", "--local", "--data-dir", str(data)] + JOB,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = done.communicate(timeout=600)
    assert done.returncode == 0, out
    node = Node(data, job=JOB + [
        "--lookup-tls-cert", str(nodes["node"]), "--lookup-tls-key", str(nodes["node.key"]),
        "--lookup-tls-client-ca", str(clients["clients-ca"]), "--lookup-token-file", str(token),
    ], java_opts=f"-Dtensorcache.lookup.endpoint.idle-timeout={IDLE}s")
    try:
        yield SimpleNamespace(
            node=node, ref=reference(data, node.cache, EXAMPLES),
            tls=(str(nodes["nodes-ca"]), str(clients["trainer"]), str(clients["trainer.key"])),
            rogue=(str(nodes["nodes-ca"]), str(rogue["rogue"]), str(rogue["rogue.key"])),
        )
    finally:
        node.stop()


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32)


def test_lookups_and_a_session_over_tls_with_the_token_are_the_caches(port):
    cache = port.node.cache
    rng = np.random.default_rng(4)
    with TensorCacheClient(port.node.endpoint, timeout=60, token=TOKEN, tls=port.tls) as client:
        for size in (1, 37, 1024):
            indices = rng.integers(0, EXAMPLES, size)
            values = client.lookup(cache, indices)
            for name, expected in port.ref.items():
                assert np.array_equal(bits(values[name]), bits(expected[indices])), name
        session = client.session(cache, "py-tls", 0, 2, 11, 64)
        steps = [next(session) for _ in range(3)]
        time.sleep(IDLE + 1.5)  # the node closes the pooled connection meanwhile
        steps.append(next(session))  # and the session goes on, on a new one, at its step
        assert [s.step for s in steps] == [0, 1, 2, 3]
        for s in steps:
            assert len(s.indices) == 32
            for name, expected in port.ref.items():
                assert np.array_equal(bits(s.values[name]), bits(expected[s.indices])), name
        values = client.lookup(cache, [3, 1000])  # so does a lookup
        assert np.array_equal(bits(values["chosen_logp"]), bits(port.ref["chosen_logp"][[3, 1000]]))


def test_a_wrong_token_or_none_is_unauthorized(port):
    cache = port.node.cache
    with TensorCacheClient(port.node.endpoint, timeout=60, token="guess", tls=port.tls) as client:
        with pytest.raises(Unauthorized) as e:
            client.lookup(cache, [1])
        assert "unauthorized: wrong token" in str(e.value)
        assert isinstance(e.value, PermissionError)
    with TensorCacheClient(port.node.endpoint, timeout=60, tls=port.tls) as client:
        with pytest.raises(Unauthorized) as e:
            client.describe(cache)
        assert "needs an AUTH request" in str(e.value)


@pytest.mark.parametrize("credentials", ["no client certificate", "another CA's", "no TLS"])
def test_a_client_without_a_certificate_of_the_client_ca_gets_nothing(port, credentials):
    tls = {"no client certificate": (port.tls[0],), "another CA's": port.rogue, "no TLS": None}[credentials]
    with TensorCacheClient(port.node.endpoint, timeout=20, token=TOKEN, tls=tls) as client:
        with pytest.raises(Unavailable):
            client.lookup(port.node.cache, [1])
    with TensorCacheClient(port.node.endpoint, timeout=60, token=TOKEN, tls=port.tls) as client:
        assert client.describe(port.node.cache).n == EXAMPLES  # the node serves the others


def test_tls_files_that_cannot_be_loaded_are_named(tmp_path, port):
    missing = tmp_path / "missing-ca.pem"
    with pytest.raises(FileNotFoundError) as e:
        tls_context(missing)
    assert str(missing) in str(e.value)
    with pytest.raises(ValueError) as e:
        tls_context(port.tls[0], port.tls[0], port.tls[0])  # a certificate as the key
    assert port.tls[0] in str(e.value)
