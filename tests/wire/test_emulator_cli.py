"""`pi-desktop emulator --port N` serves the same endpoints from a separate process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson

from desktop.host.providers import WireRequest, send_streaming

ROOT = Path(__file__).resolve().parents[2]


def test_emulator_command_serves_streams_until_interrupted() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "desktop", "emulator", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("pi-desktop emulator listening on http://127.0.0.1:"), first
        lines = [process.stdout.readline() for _ in range(7)]
        google = next(line.split()[-1] for line in lines if line.strip().startswith("google"))
        body = {"contents": [{"role": "user", "parts": [{"text": "ping"}]}]}
        request = WireRequest(
            f"{google}/models/gemini-2.5-flash:streamGenerateContent?alt=sse", orjson.dumps(body)
        )
        model = {"id": "gemini-2.5-flash", "api": "google-generative-ai", "provider": "google"}
        message = send_streaming(request, model=model, api_key="offline")
        assert message["stopReason"] == "stop"
        assert message["content"][-1]["text"] == "Echo: ping"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
    assert process.returncode == 0


def test_emulator_command_reports_a_busy_port() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "desktop", "emulator", "--port", str(port)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=20,
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr and "--port" in result.stderr
