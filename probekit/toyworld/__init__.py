"""The toy world: a procedurally generated, deterministic world that mirrors each study's structure, hard enough
that the toy models are not at ceiling and controlled enough that a knock-out can remove one kind of information.

Images are 64x64 px boards of 4x4 cells of 16 px (the toy models' patch size), aligned with the patch grid, which
tiny models learn fast.  An object is drawn inside one cell.  An agent stands in two, one above the other: its bust
(head and torso in its kind's colour, shape and size) in the upper cell and its limbs (the pose, the same stick
figure for every kind, each joint jittered per drawing) in the lower one.  The limbs wear one of three colours, each
shared by two kinds (``glyphs.LIMBS``), as clothes would be: the limbs alone bind a pose to a pair of kinds, and
only the bust in the patch above tells the two apart (``prednoun.limbs_only_accuracy`` is what the limbs alone
reach; binding across the two patches alone was beyond the toy models).  Boxes are the square around
what is drawn (``scene.box``, for crops) or its tight rectangle (``scene.tight_box``, for ablations), so box sizes
vary with the agent's kind and pose and the object's size, and distances with the cells.  Masks are exact
(``scene.render`` returns one per entity).

Vocabulary (``vocab``): agents man/woman/boy/girl/dog/cat (bust colour, human or animal bust, adult or small size: close
pairs such as man/boy); intransitive predicates standing/sitting/jumping/lying/running/waving/kneeling/ walking (poses;
standing/walking/waving differ in one or two limbs); 24 transitive verbs, each one of three poses (standing, walking,
kneeling) plus one of eight places of the object relative to the agent's limbs (eight verbs per pose differ only in
the object's place, three per place only in the pose, so the pose alone leaves a masked verb one of about seven:
``pose_only_topk(5)`` = 74.3%); objects ball/cup/box/book/kite/bike/hat/bag/chair/lamp/bottle/shoe; attributes with
antonyms: colour (red-green, blue-yellow, white-black), size (big-small), pattern (plain-striped); scenes
park/beach/street/kitchen/forest/snow; distractor objects placed away from every agent.

Statistics set on purpose:
- plausibility: every verb has one object it never takes and every agent two verbs it never does
  (``IMPLAUSIBLE_OBJECT``, ``IMPLAUSIBLE_VERBS``); Probe-R's unlikely swaps are exactly those triples.
- no language prior beyond plausibility: triples are drawn uniformly among the plausible ones, so given subject and
  object a masked verb is one of 20-21 equally likely verbs (``prior_topk(5)`` = 24.8%; chance 5/24 = 20.8%).
- context: each object has a typical scene used with probability 0.8 (``TYPICAL_SCENE_P``); Probe-B items record
  ``scene`` and ``typical_scene``.
- counterbalancing: every image-choice item pairs one sentence with two images, every predicate-noun pair swaps its
  two sentences over two images, so a model that ignores the image cannot beat chance on them.

Splits: a scene belongs to "eval" when the hash of its content falls in one fifth of the hash space, otherwise to
"train" (``Scene.split``); generators draw scenes until they fall in the requested split, so train and eval
items (and the toy models' training stream) never share an image.  File names are the content hash and the
drawing's fingerprint (``scene.drawing``), so a re-run reuses the PNGs under ``data_dir/toy/<probe>/`` and a change
to the drawing code draws them anew.

Generators (registered in ``probekit.datasets``): ``svo.make_items``, ``prednoun.make_items``,
``masking.make_items``, ``conceptual.make_probe_r/_c/_b``, ``classify.make_items``; the training stream of the
toy models, with the knock-out recipes, is ``stream``.
"""
