"""Small programs run *inside* a jail to prove what it enforces.

Each probe is a standalone script: standard library only, no import of stockade (the jail
may not see the package), quick to start with ``python3 -I -S``. Each prints one JSON object.
"""
