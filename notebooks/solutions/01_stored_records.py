"""Reference solution for notebook 01 (stored records), "Your turn".

Compute the user_scope of ``EXERCISE_USER_ID = "  Dana.Okafor@Northwind.example "``
by hand: strip the spaces, casefold, sha256 of the UTF-8 bytes, first 16 hex chars.
"""

import hashlib

user_id = "  Dana.Okafor@Northwind.example "
my_scope = hashlib.sha256(user_id.strip().casefold().encode("utf-8")).hexdigest()[:16]
