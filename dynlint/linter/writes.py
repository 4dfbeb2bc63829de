"""Writing what the user asked for (`-o`, `--report`, `--fix`, the cache) without being led elsewhere.

Three ways a file system can turn a write into someone else's: a symbolic link in the project that leads out of it
(a repository's `report.sarif -> ~/.bashrc`), a link another user left in a shared sticky folder
(`/tmp/report.json -> ~/.bashrc`, which the kernel's `protected_symlinks` stops `open()` from following but not a
rename over the target), and a folder on the way swapped for a link between the check and the write. The path
is resolved here one link at a time, each link judged as the kernel judges it, and the file is then written and
renamed through a handle on the folder it resolved to, which no later swap can move.
"""
from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import Optional, Tuple

from dynlint.linter.files import _printable, _under, escapes, in_project

MAX_LINKS = 40                      # as Linux's ELOOP


class UnsafeWrite(OSError):
    """A write that would follow a symbolic link out of the project, or one another user planted."""


def _refuse(path, why: str) -> UnsafeWrite:
    return UnsafeWrite(0, f"refusing to write {_printable(str(path))}: {why}")


def _link_trusted(folder_st: os.stat_result, link_st: os.stat_result) -> bool:
    """The kernel's `fs.protected_symlinks` rule: a link in a sticky folder others may write (`/tmp`) is followed
    only when it is the follower's own or the folder owner's."""
    shared = folder_st.st_mode & stat.S_ISVTX and folder_st.st_mode & stat.S_IWOTH
    return not shared or link_st.st_uid in (os.geteuid(), folder_st.st_uid)


def resolve(path) -> Tuple[str, str]:
    """The real folder `path` lies in and its name there, every symbolic link on the way followed one at a time
    (UnsafeWrite for one another user planted in a shared sticky folder). The name may not exist yet."""
    rest = [c for c in os.path.abspath(path).split(os.sep) if c][::-1]
    current, links = os.sep, 0
    while rest:
        part = rest.pop()
        if part == ".":
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        try:
            st = os.lstat(candidate)
        except FileNotFoundError as e:
            if rest:
                raise OSError(e.errno, e.strerror, str(path)) from None
            return current, part
        except OSError as e:            # a file on the way (ENOTDIR), a folder closed to us
            raise OSError(e.errno, e.strerror, str(path)) from None
        if not stat.S_ISLNK(st.st_mode):
            current = candidate
            continue
        links += 1
        if links > MAX_LINKS:
            raise _refuse(path, "too many levels of symbolic links")
        if not _link_trusted(os.stat(current), st):
            raise _refuse(path, f"{_printable(candidate)} is a symbolic link another user made in a shared folder")
        try:
            target = os.readlink(candidate)
        except OSError:                 # no longer a link: swapped while we looked
            raise _refuse(path, "a folder on its way changed while it was written") from None
        if _under(current, "/proc") and ":" in target and not os.path.isabs(target):
            return current, part        # /proc/self/fd/1 -> pipe:[42]: a kernel handle, opened as it is
        if os.path.isabs(target):
            current = os.sep
        rest.extend(c for c in target.split(os.sep)[::-1] if c)
    return os.path.dirname(current), os.path.basename(current)


def _folder_path(fd: int) -> Optional[str]:
    """Where the open folder `fd` really is (Linux, through /proc); None where that cannot be asked."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _open_folder(path, folder: str, root: Optional[Path]) -> int:
    """A handle on `folder`, checked after opening: it is the folder `resolve` found (not one swapped in since),
    and it stays in the project when `path` is in it as written."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as e:                # name the file the user asked for, not its folder
        raise OSError(e.errno, e.strerror, str(path)) from None
    try:
        real = _folder_path(fd)
        if real is None:                # no /proc: the folder at that path must still be the one opened
            now, opened = os.stat(folder), os.fstat(fd)
            same = (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)
        else:
            same = real == folder
        if not same:
            raise _refuse(path, "a folder on its way changed while it was written")
        if root is not None and in_project(path, root) and not _under(folder, os.path.realpath(root)):
            raise _refuse(path, "a symbolic link leads out of the project")
        return fd
    except BaseException:
        os.close(fd)
        raise


def write_output(path, data: bytes, root: Optional[Path]) -> None:
    """A report the user asked for (`-o`, `--report`): a regular file is replaced atomically (`write_atomic`); a
    character device or a FIFO (`/dev/null`, `/dev/stdout`, a named pipe) is written to, never replaced by a file:
    run as root, a rename over `/dev/null` would turn it into a regular file for the whole machine."""
    if root is not None:
        why = escapes(path, root)
        if why:
            raise _refuse(path, why)
    folder, name = resolve(path)
    try:
        kind = os.stat(os.path.join(folder, name)).st_mode     # /dev/stdout -> /proc/self/fd/1 -> a pipe
    except OSError:
        kind = 0
    if stat.S_ISCHR(kind) or stat.S_ISFIFO(kind):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        return
    write_atomic(path, data, root)


def write_atomic(path, data: bytes, root: Optional[Path], mode: Optional[int] = None) -> None:
    """Write to a temporary file beside `path`, then rename over it: readers never see half a file, and an
    interrupted write leaves the old one. The file keeps its mode (a new one gets `mode`, or what open() would
    give it). A symbolic link inside the project is followed (the link stays a link); one that leads out of the
    project `root` is refused (UnsafeWrite), so a repository cannot aim a report, a fix or the cache at a file
    of the user's; so is one another user left in a shared sticky folder. `root` None: the user named the place,
    follow it. The temporary file is made and renamed inside a handle on the resolved folder. Reports, fixed
    sources and the cache use it."""
    if root is not None:
        why = escapes(path, root)
        if why:
            raise _refuse(path, why)
    folder, name = resolve(path)
    dfd = _open_folder(path, folder, root)
    try:
        try:
            mode = stat.S_IMODE(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode)
        except OSError:
            if mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                os.fchmod(f.fileno(), mode)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
    finally:
        os.close(dfd)
