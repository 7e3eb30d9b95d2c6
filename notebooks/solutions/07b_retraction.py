"""Reference solution for notebook 07b's "Your turn" (for instructors).

The five steps run on a fresh teaching store (profile-001 + conversation-001..006: 7 lines):

1  retract profile-001       -> appends r-1                               (8 lines)
2  retract conversation-005  -> appends r-2                               (9 lines)
3  retract conversation-005  -> idempotent: returns r-2, writes nothing   (9 lines)
4  retract r-2               -> RemoteMemoryValidationError: a retraction cannot be
                                retracted; nothing written                (9 lines)
5  retract conversation-002  -> appends r-5                               (10 lines)

lines      10: read_all() keeps every record, retractions and their targets included.
returned   "r-2": retracting twice returns the first retraction.
profile    None: profile-001 was the only profile, and selection skips retracted ones.
searched   4: only CONVERSATION records are searched (6), minus the 2 retracted ones.
retracted  2: conversation-005 and conversation-002. The retracted profile is not counted:
           profiles are never searched, so the search never had to skip it.
"""

my_prediction = {
    "lines": 10,
    "returned": "r-2",
    "profile": None,
    "searched": 4,
    "retracted": 2,
}
