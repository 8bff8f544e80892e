"""The Helsinki world from OpenStreetMap: city, street graph, visibility, renderer, oracle perception.

Entry point: `sim.world.cache.load_world()`.
"""
