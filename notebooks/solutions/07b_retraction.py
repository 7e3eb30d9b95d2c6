"""Reference solution for notebook 07b's "Your turn" (for instructors).

The six steps run on a fresh teaching store (profile-001 + conversation-001..006: 7 lines):

1  retract profile-001       -> appends r-1                               (8 lines)
2  retract conversation-005  -> appends r-2                               (9 lines)
3  retract conversation-005  -> idempotent: returns r-2, writes nothing   (9 lines)
4  retract r-2               -> RemoteMemoryValidationError: a retraction cannot be
                                retracted; nothing written                (9 lines)
5  retract conversation-002  -> appends r-5                               (10 lines)
6  retract conversation-006  -> appends r-6                               (11 lines)

lines      11: read_all() keeps every record, retractions and their targets included.
returned   "r-2": retracting twice returns the first retraction.
profile    None: profile-001 was the only profile, and selection skips retracted ones.
searched   3: only CONVERSATION records are searched (6), minus the 3 retracted ones.
retracted  3: conversation-005, -002 and -006, whatever the query. The retracted profile is not counted:
           profiles are never searched, so the search never had to skip it.
"""

my_prediction = {
    "lines": 11,
    "returned": "r-2",
    "profile": None,
    "searched": 3,
    "retracted": 3,
}
