"""What every Aerie process uses and no socket carries: config and YAML loading, the log format, geodesy.

``contract`` holds what crosses between processes; these are shared by the
processes without crossing: each reads its YAML with ``typed_config``, writes
JSON-lines logs with ``log_setup``, reads untrusted YAML (configs, mission files) with
``untrusted_yaml`` and converts between latitude/longitude and
local metres with ``geodesy``, and predicts where PX4 brings a moving multirotor to rest with
``stopping``. One copy of each, below every process package
(``onboard``, ``sim``, ``ground_station``, ``firmware_bridge``, ``deploy``,
``aerie``) and above ``contract`` only; a test checks that.
"""
