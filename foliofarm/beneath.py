"""Files that someone else's code made or brought (a series' tree, what its
build wrote, a scratch copy the selftests' make had), opened by the host.

Each is reached from a directory the host made, one component at a time,
without following a link on any component below it (an O_NOFOLLOW walk: what
openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does, with no syscall Python
lacks), and only if it is what it should be: a regular file (never a FIFO that
blocks, a device, or a link to a host file), of a bounded size. What the host
writes there is written new and renamed into place: a link planted where it
goes is replaced, never written through. Where a link is in the way the
refusal says so, naming the path."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

from foliofarm.errors import InfraError

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _parts(rel: str | os.PathLike[str]) -> list[str]:
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise InfraError(f"{rel}: a path below a directory is needed (no '..', not absolute)")
    return parts


def _refused(root: Path, rel: str | os.PathLike[str], exc: OSError, what: str) -> InfraError:
    where = root / rel
    why = {errno.ELOOP: "a symbolic link is on its way (refused: the host follows no link "
                        "in a directory a series' code could write)",
           errno.ENOTDIR: "a part of its path is not a directory",
           errno.ENOENT: "it does not exist",
           errno.EISDIR: "it is a directory"}.get(exc.errno or 0, exc.strerror or str(exc))
    return InfraError(f"{what or where}: {where}: {why}")


def _open_dir(name: str, dir_fd: int) -> int:
    """An fd of directory ``name`` in ``dir_fd``; a link there is ELOOP."""
    try:
        return os.open(name, _DIR, dir_fd=dir_fd)
    except NotADirectoryError:
        if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), name) from None
        raise


def _dir_fd(root: Path, parts: list[str], create: bool) -> int:
    """An fd of the directory root/parts, every component opened without following a link."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            try:
                nfd = _open_dir(part, fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                nfd = _open_dir(part, fd)
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_beneath(root: Path, rel: str | os.PathLike[str], what: str = "") -> int:
    """An fd to read root/rel, following no link on any component below
    ``root``; refused (InfraError) if it is not a regular file."""
    parts = _parts(rel)
    try:
        dfd = _dir_fd(root, parts[:-1], create=False)
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=dfd)
        finally:
            os.close(dfd)
    except OSError as exc:
        raise _refused(root, rel, exc, what) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InfraError(f"{what or root / rel}: {root / rel} is not a regular file; refused")
    return fd


def read_beneath(root: Path, rel: str | os.PathLike[str], max_bytes: int, what: str = "") -> bytes:
    """root/rel's bytes (open_beneath's terms), at most ``max_bytes`` or refused."""
    with os.fdopen(open_beneath(root, rel, what), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise InfraError(f"{what or root / rel}: {root / rel} is {size >> 20} MB, over the "
                             f"{max_bytes >> 20} MB such a file may have; refused")
        return f.read(max_bytes + 1)[:max_bytes]


def exists_beneath(root: Path, rel: str | os.PathLike[str]) -> bool:
    """True if root/rel is a regular file reached without a link."""
    try:
        os.close(open_beneath(root, rel))
        return True
    except InfraError:
        return False


def write_beneath(root: Path, rel: str | os.PathLike[str], data: bytes, what: str = "",
                  mode: int = 0o644) -> None:
    """Make root/rel hold ``data``: its directories made or walked without
    following a link, the file written new beside it and renamed over it (a
    link planted in its place is replaced, never written through)."""
    parts = _parts(rel)
    try:
        dfd = _dir_fd(root, parts[:-1], create=True)
    except OSError as exc:
        raise _refused(root, rel, exc, what) from None
    tmp = f".foliofarm-new-{os.getpid()}-{threading.get_ident()}"
    try:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except FileNotFoundError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644, dir_fd=dfd)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), mode)
        os.rename(tmp, parts[-1], src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError as exc:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise _refused(root, rel, exc, what) from None
    finally:
        os.close(dfd)


def mkdir_beneath(root: Path, rel: str | os.PathLike[str], what: str = "") -> None:
    """root/rel made a directory (and its parents), following no link; refused
    when a link or a file is in the way."""
    try:
        os.close(_dir_fd(root, _parts(rel), create=True))
    except OSError as exc:
        raise _refused(root, rel, exc, what) from None


def list_beneath(root: Path, rel: str | os.PathLike[str] = ".") -> list[tuple[str, bool]]:
    """(name, is a regular file) of each entry of root/rel, reached without a link."""
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    try:
        dfd = _dir_fd(root, parts, create=False)
    except OSError as exc:
        raise _refused(root, rel, exc, "") from None
    try:
        out = []
        for name in sorted(os.listdir(dfd)):
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            out.append((name, stat.S_ISREG(st.st_mode)))
        return out
    finally:
        os.close(dfd)


def read_regular(path: Path, max_bytes: int, what: str = "", beneath: Path | None = None) -> bytes:
    """A file someone else's code wrote, read only if it is a regular file of
    at most ``max_bytes`` (never a FIFO that blocks, a device, or a link to a
    host file): below ``beneath`` (the directory the host made) no component of
    its path may be a link; without it, its last component may not."""
    if beneath is not None:
        return read_beneath(beneath, Path(path).relative_to(beneath), max_bytes, what)
    return read_beneath(Path(path).parent, Path(path).name, max_bytes, what)


def tree_file_bytes(path: str | os.PathLike[str]) -> bytes:
    """A tree's file as a cache key sees it (a series' tree: anything may be
    there): a link by where it points, never followed (a link to /dev/zero
    would be read forever); anything but a regular file by its kind alone."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return b"link:" + os.fsencode(os.readlink(path))
    if not stat.S_ISREG(st.st_mode):
        return f"special:{stat.S_IFMT(st.st_mode)}".encode()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        return f.read()


def copy_regular(src: Path, dst: Path, max_bytes: int, what: str = "",
                 beneath: Path | None = None) -> None:
    """Copy a file someone else's code made, on read_regular's terms."""
    dst.write_bytes(read_regular(src, max_bytes, what, beneath))
    st = os.stat(src, follow_symlinks=False)
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


def tree_size(path: Path) -> int:
    """Bytes a directory tree takes on disk (links not followed)."""
    return tree_usage(path)[0]


def tree_usage(path: Path) -> tuple[int, int]:
    """Bytes a directory tree takes on disk and the files and directories
    (inodes) in it (links not followed, walked without recursion)."""
    total = entries = 0
    stack = [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    entries += 1
                    if e.is_dir(follow_symlinks=False):
                        stack.append(Path(e.path))
        except OSError:
            continue
    return total, entries
