"""An image host's "photo unavailable" placeholder, reached by a redirect, is not the photo asked for.

It decodes as an image, so :func:`probekit.data.download.fetch_images` recognises it by where the redirect went:

* a target whose path names it a placeholder (:data:`PLACEHOLDER_MARKERS`, e.g. Flickr's
  ``.../photo_unavailable.png``), checked as each image arrives (:func:`placeholder_target`);
* one target reached from two or more different ids of a run: a real photo has one id, a host's stand-in many
  (:func:`drop_shared_redirects`, after all downloads of the run).

Either way the id is missing, with an error starting "placeholder" and marked as a permanent failure.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

#: words in a redirect target's path that mark a host's "photo unavailable" image
PLACEHOLDER_MARKERS = ("unavailable", "placeholder", "not_found", "notfound", "removed", "deleted")
PLACEHOLDER = "placeholder"


def placeholder_target(url: str, final_url: str) -> bool:
    """Whether a redirect from ``url`` landed on a path named as a placeholder ("photo_unavailable.png")."""
    if final_url == url:
        return False
    path = urllib.parse.urlsplit(final_url).path.lower()
    return any(marker in path for marker in PLACEHOLDER_MARKERS)


def drop_shared_redirects(rows: dict[str, dict]) -> None:
    """Ids (download rows with ``redirect``, ``ok``, ``path``) redirected to one same target got the host's
    placeholder: remove their files and mark them missing."""
    targets: dict[str, list[dict]] = {}
    for row in rows.values():
        if row.get("redirect") and row["ok"]:
            targets.setdefault(row["redirect"], []).append(row)
    for target, shared in targets.items():
        if len(shared) < 2:
            continue
        for row in shared:
            Path(row["path"]).unlink(missing_ok=True)
            row.update(path=None, ok=False, permanent=True,
                       error=f"{PLACEHOLDER}: redirected to {target}, as {len(shared)} ids were")
