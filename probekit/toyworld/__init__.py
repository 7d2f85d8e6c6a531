"""The toy world: a procedurally generated, deterministic world that mirrors each study's structure.

Images are 64x64 px boards of 4x4 cells of 16 px (the toy models' patch size); every entity fills one cell, so
boxes are grid-aligned (``Entity.box``) and masks are exact (``scene.render`` returns one per entity).

Vocabulary (``vocab``): agents man/woman/child/dog (fixed body colours, distinct silhouettes); intransitive
predicates standing/sitting/jumping/lying/running (poses); transitive verbs hold/kick/carry/ride/throw/watch/chase,
each a pose of the agent plus the object's cell relative to the agent (hold: right; carry: above; ride: below;
throw: above right; watch: two cells right; chase: running, right); objects ball/cup/box/book/kite/bike;
attributes with antonyms: colour (red-green, blue-yellow, white-black), size (big-small), pattern (plain-striped);
scenes park/beach/street/kitchen.

Statistics set on purpose (so that context and language priors are measurable):
- plausibility: only the (subject, verb, object) triples in ``PLAUSIBLE_SUBJECTS`` x ``PLAUSIBLE_OBJECTS`` ever
  occur (a dog only watches or chases; only bikes are ridden); Probe-R's unlikely swaps are exactly the rest.
- language priors: verbs pick objects with skewed weights (kick: ball 4 : box 1; carry: box; ride: bike only), so a
  text-only masked LM recovers many verbs from the object alone.
- context: each object has a typical scene (ball-park, kite-beach, bike/box-street, cup/book-kitchen) used with
  probability 0.8 (``TYPICAL_SCENE_P``); Probe-B items record ``scene`` and ``typical_scene``.

Splits: a scene belongs to "eval" when the hash of its content falls in one fifth of the hash space, otherwise to
"train" (``Scene.split``); generators draw scenes until they fall in the requested split, so train and eval
items (and the toy models' training stream) never share an image.  File names are the content hash, so a
re-run reuses the PNGs under ``data_dir/toy/<probe>/``.

Generators (registered in ``probekit.datasets``): ``svo.make_items``, ``prednoun.make_items``,
``masking.make_items``, ``conceptual.make_probe_r/_c/_b``, ``classify.make_items``; the training stream for the
toy models is ``stream``.
"""
