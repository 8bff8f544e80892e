"""The ground station's web dashboard: live view of the vehicles and replay of past flights.

:mod:`.app` is a small Starlette (ASGI) app reading the flight log read-only
(:mod:`.log_reader`), turning envelopes into JSON items (:mod:`.items`) and
streaming new ones to the page with Server-Sent Events; :mod:`.server` runs it
with uvicorn in a thread of ``aerie ground`` (or alone: ``aerie ground
dashboard``). The page (``static/``) is hand-written JS and SVG, no CDN.
"""
