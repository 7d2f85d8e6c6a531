"""The shared downloader against a local HTTP server on 127.0.0.1 (never the internet)."""

from __future__ import annotations

import io
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest
from PIL import Image

from probekit.data.download import (DownloadError, OfflineError, check_image, fetch_file, fetch_images,
                                    image_filename)


def encoded(fmt: str, colour=(200, 30, 30), size=(24, 16)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, format=fmt)
    return buf.getvalue()


class Server:
    """Serves ``routes`` ({path: bytes, a list of status codes/bytes served in turn, or ("redirect", path)});
    records every request."""

    def __init__(self, routes: dict):
        self.routes, self.requests = routes, []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                owner.requests.append(self.path)
                body = owner.routes.get(self.path)
                if isinstance(body, list):
                    body = body.pop(0) if len(body) > 1 else body[0]
                if isinstance(body, tuple):  # ("redirect", target path): a 302, as image hosts answer
                    self.send_response(302)
                    self.send_header("Location", body[1])
                    self.end_headers()
                    return
                if body is None or isinstance(body, int):
                    self.send_response(body or 404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    jpeg, png = encoded("JPEG"), encoded("PNG", (10, 200, 10))
    srv = Server({"/a.jpg": jpeg, "/b.png": png, "/garbage.jpg": b"<html>moved</html>",
                  "/truncated.jpg": jpeg[: len(jpeg) // 2], "/flaky.jpg": [503, jpeg], "/data.csv": b"x,y\n1,2\n"})
    yield srv
    srv.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fetch_images_keeps_only_decodable_images_and_records_failures(server, tmp_path):
    urls = {"1": f"{server.url}/a.jpg", "2": f"{server.url}/b.png", "dead": f"{server.url}/missing.jpg",
            "bad": f"{server.url}/garbage.jpg", "cut": f"{server.url}/truncated.jpg"}
    table = fetch_images(urls, tmp_path, workers=4, retries=0, progress=False)
    assert list(table["id"]) == list(urls)
    ok = table.set_index("id")
    assert ok.loc["1", "ok"] and ok.loc["1", "path"].endswith("1.jpg")
    assert ok.loc["2", "ok"] and ok.loc["2", "path"].endswith("2.png")
    assert Image.open(ok.loc["2", "path"]).size == (24, 16)
    assert not ok.loc["dead", "ok"] and ok.loc["dead", "path"] is None and "HTTP 404" in ok.loc["dead", "error"]
    assert "not a decodable image" in ok.loc["bad", "error"]
    assert "not a decodable image" in ok.loc["cut", "error"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1.jpg", "2.png", "manifest.csv"]
    manifest = pd.read_csv(tmp_path / "manifest.csv", dtype={"id": str})
    assert set(manifest["id"]) == set(urls) and manifest.set_index("id").loc["dead", "ok"] == False  # noqa: E712


def test_rerun_uses_cache_and_skips_permanent_failures(server, tmp_path):
    urls = {"1": f"{server.url}/a.jpg", "dead": f"{server.url}/missing.jpg"}
    fetch_images(urls, tmp_path, retries=0, progress=False)
    server.requests.clear()
    again = fetch_images(urls, tmp_path, retries=0, progress=False).set_index("id")
    assert server.requests == []
    assert again.loc["1", "ok"] and again.loc["1", "cached"]
    assert not again.loc["dead", "ok"] and "HTTP 404" in again.loc["dead", "error"]
    fetch_images(urls, tmp_path, retries=0, progress=False, retry_failed=True)
    assert server.requests == ["/missing.jpg"]


def test_transient_errors_are_retried(server, tmp_path):
    table = fetch_images({"f": f"{server.url}/flaky.jpg"}, tmp_path, retries=2, backoff=0, progress=False)
    assert table["ok"].all()
    assert server.requests == ["/flaky.jpg", "/flaky.jpg"]
    server.routes["/flaky.jpg"] = [503]
    (tmp_path / "f.jpg").unlink()
    failed = fetch_images({"f": f"{server.url}/flaky.jpg"}, tmp_path, retries=1, backoff=0, progress=False)
    assert not failed["ok"].any() and "HTTP 503" in failed["error"].iloc[0]


def test_images_a_user_already_has_are_used(tmp_path):
    Image.new("RGB", (8, 8)).save(tmp_path / "42.png")
    url = f"http://127.0.0.1:{closed_port()}/42.png"
    table = fetch_images({"42": url}, tmp_path, progress=False)
    assert table["ok"].all() and table["cached"].all() and table["path"].iloc[0] == str(tmp_path / "42.png")


def test_offline_names_the_folder_and_how_to_fill_it(tmp_path):
    base = f"http://127.0.0.1:{closed_port()}"
    urls = {str(i): f"{base}/{i}.jpg" for i in range(6)}
    with pytest.raises(OfflineError, match=str(tmp_path)) as err:
        fetch_images(urls, tmp_path, workers=2, retries=0, progress=False, offline_after=3)
    assert "<image id>.<ext>" in str(err.value)
    Image.new("RGB", (8, 8)).save(tmp_path / "0.jpg")
    with pytest.warns(UserWarning, match="5 of 6 images are missing"):
        table = fetch_images(urls, tmp_path, workers=2, retries=0, progress=False, offline_after=3)
    assert table.set_index("id").loc["0", "ok"] and table["ok"].sum() == 1


def test_fetch_file_downloads_once_and_explains_failures(server, tmp_path):
    dest = fetch_file(f"{server.url}/data.csv", tmp_path / "sub" / "data.csv", retries=0)
    assert dest.read_bytes() == b"x,y\n1,2\n"
    server.requests.clear()
    fetch_file(f"{server.url}/data.csv", dest, retries=0)
    assert server.requests == []
    with pytest.raises(DownloadError, match=r"HTTP 404.*place it at .*nope\.csv"):
        fetch_file(f"{server.url}/nope.csv", tmp_path / "nope.csv", retries=0)
    with pytest.raises(OfflineError, match="curl -L -o"):
        fetch_file(f"http://127.0.0.1:{closed_port()}/x.csv", tmp_path / "x.csv", retries=0)
    assert not (tmp_path / "nope.csv").exists()


def test_image_filename_is_safe_and_distinct():
    assert image_filename("12345") == "12345"
    odd = image_filename("a/b?c")
    assert "/" not in odd and odd != image_filename("a_b_c") and odd.startswith("a_b_c_")
    assert check_image(encoded("PNG")) == ".png"
    with pytest.raises(ValueError, match="not a decodable image"):
        check_image(b"GIF89a-nope")


def test_an_interrupted_download_leaves_no_half_file_behind(server, tmp_path):
    (tmp_path / "1.jpg.1a2b3c4d.part").write_bytes(b"\xff\xd8 half a jpeg")  # what a killed run can leave
    table = fetch_images({"1": f"{server.url}/a.jpg"}, tmp_path, retries=0, progress=False)
    assert table["ok"].all() and not table["cached"].any()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1.jpg", "manifest.csv"]


def test_a_redirect_to_a_hosts_placeholder_photo_counts_as_missing(tmp_path):
    stand_in, photo = encoded("PNG", (128, 128, 128), (50, 40)), encoded("JPEG", (10, 20, 200))
    srv = Server({"/photos/1.jpg": ("redirect", "/images/photo_unavailable.png"),
                  "/images/photo_unavailable.png": stand_in,
                  "/photos/2.jpg": ("redirect", "/static/s.png"), "/photos/3.jpg": ("redirect", "/static/s.png"),
                  "/static/s.png": stand_in,  # one unnamed target reached from two ids: a stand-in too
                  "/photos/4.jpg": ("redirect", "/cdn/4-large.jpg"), "/cdn/4-large.jpg": photo})
    try:
        urls = {str(i): f"{srv.url}/photos/{i}.jpg" for i in range(1, 5)}
        table = fetch_images(urls, tmp_path, workers=2, retries=0, progress=False).set_index("id")
        assert table["ok"].to_dict() == {"1": False, "2": False, "3": False, "4": True}  # a moved photo is kept
        assert table["placeholder"].to_dict() == {"1": True, "2": True, "3": True, "4": False}
        assert "photo_unavailable" in table.loc["1", "error"] and "2 ids" in table.loc["2", "error"]
        assert sorted(p.name for p in tmp_path.glob("*") if p.name != "manifest.csv") == ["4.jpg"]
        srv.requests.clear()  # placeholders are permanent failures: a re-run asks for none of them again
        again = fetch_images(urls, tmp_path, workers=2, retries=0, progress=False).set_index("id")
        assert srv.requests == [] and again["placeholder"].sum() == 3 and again.loc["4", "ok"]
    finally:
        srv.close()


def test_a_tampered_annotation_file_is_refused_naming_both_hashes(server, tmp_path, monkeypatch):
    from hashlib import sha256

    from probekit import checksums

    url, good = f"{server.url}/data.csv", b"x,y\n1,2\n"
    recorded, served = sha256(b"x,y\n1,3\n").hexdigest(), sha256(good).hexdigest()
    monkeypatch.setitem(checksums.SHA256, url, recorded)
    dest = tmp_path / "data.csv"
    with pytest.raises(checksums.ChecksumError) as err:          # a changed upstream file: refused, not kept
        fetch_file(url, dest, retries=0)
    assert served in str(err.value) and recorded in str(err.value) and "PROBEKIT_SKIP_SHA256" in str(err.value)
    assert not dest.exists()
    dest.write_bytes(good)                                       # the same file placed by hand: refused too
    with pytest.raises(checksums.ChecksumError, match=str(dest)):
        fetch_file(url, dest, retries=0)
    monkeypatch.setenv("PROBEKIT_SKIP_SHA256", "1")               # the documented override
    assert fetch_file(url, dest, retries=0).read_bytes() == good
    monkeypatch.delenv("PROBEKIT_SKIP_SHA256")
    monkeypatch.setitem(checksums.SHA256, url, served)            # the recorded file: kept
    assert fetch_file(url, dest, retries=0).read_bytes() == good


def test_every_predicate_noun_file_the_loaders_download_has_a_recorded_hash():
    from probekit import checksums
    from probekit.data import prednoun, prednoun_released as released

    urls = [prednoun.EVAL_SET_URL] + [f"{released.BASE_URL}/{folder}/{released.file_name(c, t)}"
                                      for folder in [*released.MODELS, *released.CTRL_MODELS]
                                      for c, t in released.runs(folder)]
    assert len(urls) == 39 and all(len(checksums.SHA256.get(u, "")) == 64 for u in urls)


def test_a_substituted_or_truncated_dataset_file_in_place_is_refused_naming_it(tmp_path):
    """Files found where a download lands are checked too, not only fresh downloads: a well-formed fake
    eval_set.json (the loader once returned it before fetch_file) and a truncated svo_probes.csv."""
    import json

    from probekit import checksums
    from probekit.data import prednoun, svo

    fake = tmp_path / "prednoun" / prednoun.EVAL_SET_NAME
    fake.parent.mkdir()
    fake.write_text(json.dumps([{"sentence": "a dog runs", "pos": "subject"}]))
    with pytest.raises(checksums.ChecksumError) as err:
        prednoun.eval_set_path(tmp_path)
    assert str(fake) in str(err.value) and "Delete it and run again" in str(err.value)
    assert len(str(err.value).splitlines()) == 1
    csv = svo.svo_dir(tmp_path) / "svo_probes.csv"
    csv.parent.mkdir()
    csv.write_text("sentence,pos_triplet,neg_triplet\na dog runs,")   # the first bytes of a CSV, cut off
    for download in (False, True):   # True: nothing is fetched, the file is there and refused
        with pytest.raises(checksums.ChecksumError, match=str(csv)):
            svo.load_svo_probes(tmp_path, download=download)
    assert checksums.state(csv, checksums.SVO_CSV_URL).startswith("present, does not match")


def test_every_download_has_a_recorded_hash_or_says_why_not():
    from probekit import checksums
    from probekit.data import svo, vcoco
    from probekit.scorers import REGISTRY

    downloads = {svo.SVO_CSV_URL, vcoco.VCOCO_URL.format(split=vcoco.SPLIT), checksums.COCO_ANNOTATIONS_URL,
                 REGISTRY["vilt-itm"].source}
    assert all(checksums.known(u) != (u in checksums.UNPINNED) for u in downloads)
    assert "/master/" not in vcoco.VCOCO_URL and "/main/" not in svo.SVO_CSV_URL   # a pinned revision
    assert checksums._blob(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"   # git hash-object's
