"""Never show a server path to a browser user: messages of the core name files by their path
on the server (a catalog that does not load, a trace that does not parse); a page shows only
the file's name (issue 25, part 5)."""

from __future__ import annotations

import re

#: An absolute POSIX path of two or more parts, not inside a URL (``http://host/a/b``) and not
#: a relative one (``uploads/x.json``): the lookbehind refuses a ``/`` after a word character,
#: ``:`` or ``/``.
_PATH = re.compile(r"(?<![\w:/.~-])(?:~|/)(?:[\w.@+-]+/)+([\w.@+-]+)")


def hide_paths(text: str) -> str:
    """``text`` with every absolute path replaced by its last part (the file's name)."""
    return _PATH.sub(lambda m: m.group(1), text)
