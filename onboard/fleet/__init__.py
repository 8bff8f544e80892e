"""The fleet channel: each supervisor tells the other members where it is and hears where they are.

:mod:`.channel` owns the sockets and the one thread that uses them; what it
hears goes into ``FlightBridge.update_traffic``, where the separation rule
acts on it. :mod:`.settings` is the ``fleet_channel:`` section of config.yaml.
"""
