"""The SVO-Probes loader on a fixture in the real CSV's schema, its images served from 127.0.0.1."""

from __future__ import annotations

import pandas as pd
import pytest
from PIL import Image
from test_download import Server, encoded

import probekit.data.svo as svo
from probekit.datasets import SCHEMAS, load_dataset

pytestmark = pytest.mark.usefixtures("hand_made_annotations")

ROWS = [  # sentence, pos_triplet, neg_triplet, pos id, neg id, pos file, neg file, subj, verb, obj
    ("A girl lying on the grass.", "girl,lying,grass", "girl,sit,grass", 101, 201, "g1", "g2", False, True, False),
    ("A girl lying on the grass.", "girl,lying,grass", "puppy,lie,grass", 101, 202, "g1", "dead", True, False, False),
    ("A man rides a horse.", "man,ride,horse", "man,feed,horse", 102, 203, "g3", "bad", False, True, False),
    ("A man rides a horse.", "man,ride,horse", "man,ride,bike", 102, 204, "g3", "g4", False, False, True),
]


@pytest.fixture
def release(tmp_path):
    routes = {f"/{name}.jpg": encoded("JPEG", (40 * i, 90, 160)) for i, name in enumerate(["g1", "g2", "g3", "g4"])}
    routes["/bad.jpg"] = b"\x89PNG not really"
    srv = Server(routes)
    table = pd.DataFrame([dict(sentence=s, pos_triplet=pt, neg_triplet=nt, pos_image_id=pi, neg_image_id=ni,
                               pos_url=f"{srv.url}/{pf}.jpg", neg_url=f"{srv.url}/{nf}.jpg",
                               subj_neg=sn, verb_neg=vn, obj_neg=on)
                          for s, pt, nt, pi, ni, pf, nf, sn, vn, on in ROWS])
    csv_path = tmp_path / "served" / "svo_probes.csv"
    csv_path.parent.mkdir()
    table.to_csv(csv_path)  # pandas' default leading index column, as a re-saved release has
    srv.routes["/svo_probes.csv"] = csv_path.read_bytes()
    yield srv, tmp_path / "data"
    srv.close()


def test_loader_downloads_csv_and_images_and_counts_the_missing(release, monkeypatch):
    srv, data_dir = release
    monkeypatch.setattr(svo, "SVO_CSV_URL", f"{srv.url}/svo_probes.csv")
    items = load_dataset("verbs", "svo-probes", data_dir=data_dir)
    assert set(SCHEMAS["verbs"]) <= set(items.columns)
    assert list(items["item_id"]) == ["svo-0", "svo-1", "svo-2", "svo-3"]
    assert list(items["pos_image_id"]) == ["101", "101", "102", "102"]
    assert items["neg_image"].iloc[1] is None and items["neg_image"].iloc[2] is None  # dead URL, undecodable
    assert all(Image.open(p).size == (24, 16) for p in items["pos_image"])
    assert items["neg_image"].iloc[0].endswith("svo-probes/images/201.jpg")
    assert list(items["verb"]) == ["lie", "lie", "ride", "ride"]
    assert items["verb_neg"].tolist() == [True, False, True, False] and items["subj_neg"].dtype == bool
    assert items.attrs["n_images"] == 6 and items.attrs["n_images_missing"] == 2
    manifest = pd.read_csv(items.attrs["image_manifest"], dtype={"id": str}).set_index("id")
    assert "HTTP 404" in manifest.loc["202", "error"] and "decodable" in manifest.loc["203", "error"]

    srv.requests.clear()  # a re-run reads the cache: nothing but the failed-for-good ids is known, no request
    again = load_dataset("verbs", "svo-probes", data_dir=data_dir)
    assert srv.requests == [] and again["neg_image"].isna().sum() == 2


def test_limit_is_a_seeded_sample_and_only_its_images_are_fetched(release, monkeypatch):
    srv, data_dir = release
    monkeypatch.setattr(svo, "SVO_CSV_URL", f"{srv.url}/svo_probes.csv")
    first = load_dataset("verbs", "svo-probes", data_dir=data_dir, limit=2, seed=3)
    assert len(first) == 2
    assert list(load_dataset("verbs", "svo-probes", data_dir=data_dir, limit=2, seed=3)["item_id"]) == \
        list(first["item_id"])
    fetched = {p.rsplit("/", 1)[1] for p in srv.requests if p.endswith(".jpg")}
    wanted = {u.rsplit("/", 1)[1] for u in pd.read_csv(data_dir / "svo-probes" / "svo_probes.csv")
              .set_index("Unnamed: 0").loc[[int(i[4:]) for i in first["item_id"]], ["pos_url", "neg_url"]]
              .to_numpy().ravel()}
    assert fetched == wanted


def test_images_already_on_disk_need_no_network(tmp_path):
    root = tmp_path / "svo-probes"
    (root / "images").mkdir(parents=True)
    pd.DataFrame([dict(sentence="A dog chases a ball.", pos_triplet="dog,chase,ball", neg_triplet="dog,chase,cat",
                       pos_image_id=7, neg_image_id=8, pos_url="http://127.0.0.1:9/7.jpg",
                       neg_url="http://127.0.0.1:9/8.jpg", subj_neg="False", verb_neg="False", obj_neg="True")]
                 ).to_csv(root / "svo_probes.csv", index=False)
    Image.new("RGB", (8, 8)).save(root / "images" / "7.jpg")
    Image.new("RGB", (8, 8)).save(root / "images" / "8.png")
    items = svo.load_svo_probes(tmp_path, None, 0, "eval", download=False)
    assert items["pos_image"].iloc[0].endswith("7.jpg") and items["neg_image"].iloc[0].endswith("8.png")
    assert items["obj_neg"].iloc[0] and items["item_id"].iloc[0] == "svo-0" and items["verb"].iloc[0] == "chase"


def test_bad_csv_is_named_with_the_missing_column(tmp_path):
    root = tmp_path / "svo-probes"
    root.mkdir()
    pd.DataFrame({"sentence": ["x"], "pos_triplet": ["a,b,c"]}).to_csv(root / "svo_probes.csv", index=False)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['neg_triplet'"):
        load_dataset("verbs", "svo-probes", data_dir=tmp_path)
    with pytest.raises(ValueError, match="only an evaluation split"):
        load_dataset("verbs", "svo-probes", data_dir=tmp_path, split="train")


def test_a_placeholder_photo_is_a_missing_image_and_counted(release, monkeypatch):
    srv, data_dir = release
    monkeypatch.setattr(svo, "SVO_CSV_URL", f"{srv.url}/svo_probes.csv")
    srv.routes["/g4.jpg"] = ("redirect", "/images/photo_unavailable.png")
    srv.routes["/images/photo_unavailable.png"] = srv.routes["/g1.jpg"]  # a real image file, not the photo
    items = load_dataset("verbs", "svo-probes", data_dir=data_dir)
    assert items["neg_image"].iloc[3] is None and items["neg_image"].isna().sum() == 3
    assert items.attrs["n_images_placeholder"] == 1 and items.attrs["n_images_missing"] == 3
