"""The onboard map: what the vehicle knows of its operating area before it flies.

Built once from an OpenStreetMap extract (`build.build_map`), carried as one
file (`map_file`), and read by the simulator too (`sim.world` builds its world
from it), so the corridors the agent flies are the ones the benchmark scores.

Nothing is imported here so that importing a submodule stays cheap (pyrosm and
geopandas load only in `osm_extract`, when an extract is parsed)::

    from onboard.map.build import build_map
    from onboard.map.map_file import load_map, save_map
"""
