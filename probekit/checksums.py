"""What every file probekit downloads must hold, keyed by URL, checked on every use (a fetch, and each later read of
the cached copy): a file that differs (changed upstream, truncated, a wrong file placed by hand) is refused with
one line naming it and how to fetch it again, because it would change the numbers silently.

* :data:`SHA256`: the predicate-noun release (Nikolaus et al. 2022), hashes of the authors' repository at commit
  d2bb433 (2024-12-19), the ``main`` its raw URLs serve.
* :data:`GIT_BLOB`: files served from a pinned commit of their authors' repository, identified by git's blob id
  (SHA-1 of ``"blob <size>\\0"`` + the bytes) as that commit's tree records it: SVO-Probes' ``svo_probes.csv``
  (google-deepmind/svo_probes@206219e) and V-COCO's ``vcoco_test.json`` (s-gupta/v-coco@489cc4d).
* :data:`UNPINNED`: downloads whose bytes no source here records; they are used unverified and ``probekit check``
  says so ("present, not verifiable (no known hash)").

Web images (SVO-Probes, COCO) carry no hash: each is checked to decode as a whole image
(:func:`probekit.data.download.check_image`).  Model weights are verified by their own downloaders (open_clip checks
the SHA-256 in OpenAI's URLs; the Hugging Face hub checks each file against its commit), except ViLT's checkpoint
(:data:`UNPINNED`).  ``$PROBEKIT_SKIP_SHA256`` switches every check off.
"""

from __future__ import annotations

import os
from hashlib import sha1, sha256
from pathlib import Path

SVO_COMMIT = "206219e2afd9640b8bbe6ef95f49b52b0d4ed350"
VCOCO_COMMIT = "489cc4db74f2f10ab4b134f67da3874afbf245ab"
SVO_CSV_URL = f"https://raw.githubusercontent.com/google-deepmind/svo_probes/{SVO_COMMIT}/svo_probes.csv"
VCOCO_URL = f"https://raw.githubusercontent.com/s-gupta/v-coco/{VCOCO_COMMIT}/data/vcoco/vcoco_{{split}}.json"
COCO_ANNOTATIONS_URL = "http://images.cocodataset.org/annotations/annotations_trainval2014.zip"
VILT_ITM_URL = "https://github.com/dandelin/ViLT/releases/download/200k/vilt_200k_mlm_itm.ckpt"
_PREDNOUN = "https://raw.githubusercontent.com/mitjanikolaus/multimodal-predicate-noun-dependencies/main/"

SHA256 = {
    _PREDNOUN + "data/sentence-semantics/eval_set.json":
        "fe9d4a5d052b30207df799a544c3d8697b4eccada672276f9256f3ff2e693ef5",
    _PREDNOUN + "runs/sentence-semantics/CLIP/results.csv":
        "5b91e0b5de4ee397090b417a4319959b108f8770398e2362939ef776f73aea85",
    _PREDNOUN + "runs/sentence-semantics/CLIP/results_alt_sentences.csv":
        "8e9733fd8bba1152998d54a76d2441325c95fa6554ac8448af7fd35783a951e3",
    _PREDNOUN + "runs/sentence-semantics/CLIP/results_cropped_images.csv":
        "7b8c8fb0c3acb58f16f949cf22ec259fb1e0e2af6a0d5bd70f9c0e78aef39180",
    _PREDNOUN + "runs/sentence-semantics/CLIP/results_cropped_images_alt_sentences.csv":
        "324c0a7a977ec09e0c677608bbb783fb254fe4b2f20f71d91fb39db8cbfba10f",
    _PREDNOUN + "runs/sentence-semantics/CTRL_LXMERT/results.csv":
        "14242767a652b80df6a10bd5ee8f7c48d50839156c6aa4b335c635f4dbb09f0e",
    _PREDNOUN + "runs/sentence-semantics/CTRL_LXMERT/results_cropped_images.csv":
        "b9e0e94ba11d1ef12f50540bca5b825c7adaaa3e87573928de07b9deca36bda2",
    _PREDNOUN + "runs/sentence-semantics/CTRL_UNITER_BASE/results.csv":
        "d4710bd0a4e4a060263bdacae990f06b183fb775feb674e8d2971619cd0ac3a2",
    _PREDNOUN + "runs/sentence-semantics/CTRL_UNITER_BASE/results_cropped_images.csv":
        "5a0c7cc8bd53e0be0600f17e49d0edf71ab4212b8071ff5202119a4e6f57cfe1",
    _PREDNOUN + "runs/sentence-semantics/CTRL_VILBERT_BASE/results.csv":
        "9c1c2e5ae6ec38953349ae4f030264bf291bd0f8fd50581ddae56b441d6f3cbc",
    _PREDNOUN + "runs/sentence-semantics/CTRL_VILBERT_BASE/results_cropped_images.csv":
        "933b987911b838f0d5c9de1ea82f1560d7bea78c6378564a02aa776506ee50e7",
    _PREDNOUN + "runs/sentence-semantics/CTRL_VISUALBERT_BASE/results.csv":
        "b01086cba5bf6b55f39ebf9bda43890d3d32bfbae165833e14cd59171515ab4c",
    _PREDNOUN + "runs/sentence-semantics/CTRL_VISUALBERT_BASE/results_cropped_images.csv":
        "7e42bc90b8d857495272b6ceeb3d266bc6356f0c466a2fcfe636e42a60a98799",
    _PREDNOUN + "runs/sentence-semantics/CTRL_VL-BERT_BASE/results.csv":
        "2ee68ecbe968b259cd73bfedcea193e0a59ad87c847a2b174896d575fc8a9052",
    _PREDNOUN + "runs/sentence-semantics/CTRL_VL-BERT_BASE/results_cropped_images.csv":
        "cf38124f808ad25e288332ea4a0eefa1aff22f5e9fbee0d47d160b273321aefe",
    _PREDNOUN + "runs/sentence-semantics/LXMERT/results.csv":
        "97e5db0cd4a17c7774b2c6a77c242078ae6ded82a65d15350af9d4acd6863ac2",
    _PREDNOUN + "runs/sentence-semantics/LXMERT/results_alt_sentences.csv":
        "527a6357ebb8429f87f206a65a0818631daf950a4c7bcee0be6f8fc327610988",
    _PREDNOUN + "runs/sentence-semantics/LXMERT/results_cropped_images.csv":
        "ba18cb1bc8e2f1cc050645426016762cf2496ba88ee436feb348f85ac7f39e43",
    _PREDNOUN + "runs/sentence-semantics/LXMERT/results_cropped_images_alt_sentences.csv":
        "d556d98d615ab796ef68892ea1910ba142107a2ab25f95bcdfad744a1a479889",
    _PREDNOUN + "runs/sentence-semantics/Oscar/results.csv":
        "6a2c9e06b575e7bde824dcf23eb6e9b677ddeac93ab1c07e1ed50cf73c888c8a",
    _PREDNOUN + "runs/sentence-semantics/Oscar/results_alt_sentences.csv":
        "17a822c8b4820ae3e5296201edef0435822301762ed4bf703a9a3a7252c22273",
    _PREDNOUN + "runs/sentence-semantics/Oscar/results_cropped_images.csv":
        "6c1c52c9d109df44451f47302df2f3c599958b9a14d84d25b1f7f27b1067a32e",
    _PREDNOUN + "runs/sentence-semantics/Oscar/results_cropped_images_alt_sentences.csv":
        "e2dcddb9288b5b7b37d319acb8bc941af8c6d8ed1744f40a2d1f1e46ee47842a",
    _PREDNOUN + "runs/sentence-semantics/UNITER/results.csv":
        "b54f0039c279e5f7b5170d67655a7bf6b9b4401733570843efa50c4c9ebaf203",
    _PREDNOUN + "runs/sentence-semantics/UNITER/results_alt_sentences.csv":
        "5053b20ab46047e250883da8169b15c7b9504949e733db4c07c8ae4dee94fdf8",
    _PREDNOUN + "runs/sentence-semantics/UNITER/results_cropped_images.csv":
        "f4424676af8a088b2f0e09febfea2c6ff30244dd242492516ea2f2ff36a849b5",
    _PREDNOUN + "runs/sentence-semantics/UNITER/results_cropped_images_alt_sentences.csv":
        "48fd15d08630981cd6aac4e844b368d29b8a2a5854104a6fdddecbb63246e09f",
    _PREDNOUN + "runs/sentence-semantics/VILBERT/results.csv":
        "de753e347fd007d439a1f917b7c54d3c41554ba28bea455ae96f27d851efd6a4",
    _PREDNOUN + "runs/sentence-semantics/VILBERT/results_alt_sentences.csv":
        "2e326aeda706b1bc2250c5dbcff38d6c1bc9f4158ddc6c220024c2c6eff1a82b",
    _PREDNOUN + "runs/sentence-semantics/VILBERT/results_cropped_images.csv":
        "61fb78f3646ab7eda2a2c1cd6d70bc81d435c4333e9b22180b87d809ae3d25a3",
    _PREDNOUN + "runs/sentence-semantics/VILBERT/results_cropped_images_alt_sentences.csv":
        "9e99a135faea01831cb558c73bf76ef34cc7bdd48192567b5bba591dc7db8098",
    _PREDNOUN + "runs/sentence-semantics/VILT/results.csv":
        "f79e2f8c991461d6edcf5d0a4e0166403ba05a6e93cd751c6d64b65142210245",
    _PREDNOUN + "runs/sentence-semantics/VILT/results_alt_sentences.csv":
        "6b622e8bf46f72c20743eae9df75f377b62657d30b578e63149df91394ada082",
    _PREDNOUN + "runs/sentence-semantics/VILT/results_cropped_images.csv":
        "9eed988b64632680a16e262eb4a36b16e5a5fb10dba21cc58c7dac5e7c946f28",
    _PREDNOUN + "runs/sentence-semantics/VILT/results_cropped_images_alt_sentences.csv":
        "ddb95ed83453b7e6fb058857948976276fbc695824a208bc449bb697b864b91d",
    _PREDNOUN + "runs/sentence-semantics/VINVL/results.csv":
        "370fcbf0c70589c51670f4389afbb456f914e658bb471ab2ccada121f5168efa",
    _PREDNOUN + "runs/sentence-semantics/VINVL/results_alt_sentences.csv":
        "24010184fab20338dfc8cde6ebcb7cd3bfc867c1ac2daf8167ffbd3859062e6a",
    _PREDNOUN + "runs/sentence-semantics/VINVL/results_cropped_images.csv":
        "8bf9ca60f162e4d63427acf1dd7bb12d66bb1a0a337eba5a04da556f47a2dd7c",
    _PREDNOUN + "runs/sentence-semantics/VINVL/results_cropped_images_alt_sentences.csv":
        "55cf0b52a34a11424b7e0d43d73e1afbff0e1e720ad48de96877566299005062",
}


#: URL -> git blob id of the file at the pinned commit in its URL (the commit's tree, read from the repository)
GIT_BLOB = {
    SVO_CSV_URL: "2dbab46af1169c2d6feb8b2cee26fe7140ffda19",
    VCOCO_URL.format(split="test"): "c633fc3aeca04ed7b14c8b5bf7ff5b68bb9552f8",
}

#: URL -> why its bytes are not verified
UNPINNED = {
    COCO_ANNOTATIONS_URL: "COCO publishes no checksum for its annotation archive, and none could be taken here",
    VILT_ITM_URL: "a GitHub release asset of dandelin/ViLT; its authors publish no checksum, and none could be taken "
                  "here",
}


class ChecksumError(ValueError):
    """A data file whose bytes are not those recorded for its URL."""


def _blob(data: bytes) -> str:
    return sha1(b"blob %d\0" % len(data) + data).hexdigest()


def mismatch(data: bytes, url: str) -> str | None:
    """None when ``data`` is the file recorded for ``url`` (or nothing is recorded); else how it differs."""
    if url in SHA256 and (got := sha256(data).hexdigest()) != SHA256[url]:
        return f"has SHA-256 {got}, but {SHA256[url]} is recorded"
    if url in GIT_BLOB and (got := _blob(data)) != GIT_BLOB[url]:
        return f"has git blob id {got} ({len(data)} bytes), but {GIT_BLOB[url]} is recorded"
    return None


def known(url: str) -> bool:
    """Whether the bytes of ``url`` are recorded (else it is in :data:`UNPINNED`, or not a known download)."""
    return url in SHA256 or url in GIT_BLOB


def verify(data: bytes, url: str, where: str | os.PathLike, what: str) -> None:
    """Raise :class:`ChecksumError` (one line: the file, both hashes, the fix) when ``data`` is not the file recorded
    for ``url``; nothing when no hash is recorded or ``$PROBEKIT_SKIP_SHA256`` is set."""
    if os.environ.get("PROBEKIT_SKIP_SHA256") or (why := mismatch(data, url)) is None:
        return
    raise ChecksumError(f"{what} ({where}) {why} for {url}: the file changed upstream, was truncated, or is another "
                        f"file. Delete it and run again to fetch it anew (or download {url} there by hand), or set "
                        f"PROBEKIT_SKIP_SHA256=1 to use it anyway (its numbers may then differ from the paper's).")


def verify_file(path: str | os.PathLike, url: str, what: str) -> Path:
    """``path`` once :func:`verify` passes on its bytes (read only when a hash is recorded)."""
    if known(url) and not os.environ.get("PROBEKIT_SKIP_SHA256"):
        verify(Path(path).read_bytes(), url, path, what)
    return Path(path)


def state(path: str | os.PathLike, url: str | None) -> str:
    """What ``probekit check`` says of a file that is present: verified, does not match, or not verifiable."""
    if url is None or not known(url):
        return "present, not verifiable (no known hash)"
    if os.environ.get("PROBEKIT_SKIP_SHA256"):
        return "present, not checked (PROBEKIT_SKIP_SHA256 is set)"
    why = mismatch(Path(path).read_bytes(), url)
    return "present, verified" if why is None else (f"present, does not match: it {why}; fix: delete it to fetch "
                                                    f"{url} again")
