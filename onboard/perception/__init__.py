"""What the vehicle sees: detections with bearing and range, masks, a caption, geoinstruct.

* ``types``: ``Detection``, the ``Detector`` / ``Segmenter`` protocols
* ``ssdlite_detector``, ``grounding_dino``, ``oracle_detector``: detector backends
* ``sam_segmenter``: SAM-style encoder/decoder segmentation with box prompts
* ``camera_model``: pixel -> bearing / range from intrinsics and pose
* ``text_reader`` (``text_detection``, ``text_recognition``, ``name_matching``, ``text_range``):
  names read on facades with PP-OCRv5, as ``TextSighting`` (name, bearing, range)
* ``captioning``, ``geoinstruct``: text for the planner
* ``pipeline``: one perception step (``PerceptionPipeline.perceive_async``)
* ``int8_agreement``: whether a quantized detector still finds what its original finds

The STAND-IN DINO/SAM graphs for tests and the benchmark are `sim/standin_models.py`.
"""
