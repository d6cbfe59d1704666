"""A run's artifacts where a lab's workers can fetch them: the kernel,
initramfs, disk images and job disks each job deploys, by an address the lab
reaches and with its sha256 (LAVA checks what it downloaded against it).

Two ways, as the run is told:
- the farm's own small HTTP server (the default), listening on
  ``--lab-serve HOST:PORT`` for the run's length and serving only the files
  the run's jobs name (each under its checksum's name; nothing else of the
  machine), at ``--lab-artifacts URL`` if the lab knows the machine by
  another name;
- a directory a web server already serves (``--lab-publish DIR`` and
  ``--lab-artifacts URL``, the address it is served at): each file copied
  there under its checksum's name, once.

A file of PACK_BYTES or more (the disk images, the swap disk: most of a
job's bytes, much of them zeros) goes as zstd (-1, made once under
CACHE/lab-artifacts and kept while the image is): the job says
``compression: zstd`` and the worker unpacks it as it downloads (Debian's
lava-dispatcher recommends zstd); its sha256 is the packed file's."""

from __future__ import annotations

import hashlib
import http.server
import os
import shutil
import subprocess
import threading
from pathlib import Path

from foliofarm.errors import InfraError, UsageError

PACK_BYTES = 32 << 20
DIGESTS: dict[tuple[str, int, int], str] = {}     # (path, size, mtime) -> sha256, for the process
_LOCK = threading.Lock()
_PACKING = threading.Lock()


def sha256(path: Path) -> str:
    """The file's sha256, read once per process (a run serves a disk image to
    every job of its cells)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in DIGESTS:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        with _LOCK:
            DIGESTS[key] = h.hexdigest()
    return DIGESTS[key]


def packed(path: Path) -> Path:
    """``path`` packed with zstd, once per content (CACHE/lab-artifacts)."""
    from foliofarm import hosttools
    from foliofarm.paths import cache_dir
    hosttools.require("zstd")
    store = cache_dir() / "lab-artifacts"
    store.mkdir(parents=True, exist_ok=True)
    dest = store / f"{sha256(path)[:16]}-{path.name}.zst"
    with _PACKING:      # the cells' threads ask for the same swap disk at once: packed once
        if not dest.exists():
            pack(path, dest)
    return dest


def pack(path: Path, dest: Path) -> None:
    part = dest.with_name(f"{dest.name}.{os.getpid()}.part")      # another run's is its own
    p = subprocess.run(["zstd", "-q", "-1", "-T0", "-f", str(path), "-o", str(part)],
                       capture_output=True, text=True, check=False)
    if p.returncode:
        part.unlink(missing_ok=True)
        raise InfraError(f"zstd {path}: {p.stderr.strip()[-300:]}")
    os.replace(part, dest)


class ArtifactServer:
    def __init__(self, serve: str = "127.0.0.1:0", url: str | None = None, publish: Path | None = None) -> None:
        self.files: dict[str, Path] = {}          # served name -> file
        self.publish = publish
        self.server: http.server.ThreadingHTTPServer | None = None
        if publish is not None:
            if not url:
                raise UsageError("--lab-publish DIR needs --lab-artifacts URL: the address a web server "
                                 "serves DIR at, as the lab's workers reach it")
            if not publish.is_dir() or not os.access(publish, os.W_OK):
                raise UsageError(f"--lab-publish {publish}: not a directory this user can write")
            self.url = url.rstrip("/") + "/"
            return
        host, _, port = serve.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--lab-serve {serve}: give HOST:PORT to listen on (PORT 0: any free one)")
        files = self.files

        class Handler(http.server.SimpleHTTPRequestHandler):
            def translate_path(self, path: str) -> str:     # only the run's files, by name
                name = path.split("?", 1)[0].lstrip("/")
                return str(files.get(name, "/nonexistent/foliofarm"))

            def list_directory(self, path):                  # no listing
                self.send_error(404)

            def log_message(self, *args) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address) -> None:
                pass        # a worker that went away mid-download: its job says so

        try:
            self.server = Server((host, int(port)), Handler)
        except OSError as exc:
            raise UsageError(f"--lab-serve {serve}: cannot listen there: {exc.strerror}") from None
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="lab-artifacts", daemon=True).start()
        self.url = (url or f"http://{host}:{self.server.server_address[1]}").rstrip("/") + "/"

    def add(self, path: Path) -> tuple[str, str, str | None]:
        """(URL, sha256, compression) of ``path`` as the lab fetches it."""
        compression = None
        if path.stat().st_size >= PACK_BYTES:
            path, compression = packed(path), "zstd"
        digest = sha256(path)
        name = f"{digest[:16]}-{path.name}"
        if self.publish is not None:
            dest = self.publish / name
            if not dest.exists():
                part = dest.with_name(dest.name + ".part")
                shutil.copyfile(path, part)
                os.replace(part, dest)
        with _LOCK:
            self.files[name] = path
        return self.url + name, digest, compression

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
