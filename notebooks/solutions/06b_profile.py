"""Reference solution for notebook 06b's "Your turn" (for instructors).

The memory_id in the ``<remote_profile>`` block of ``build_system_prompt`` for each call,
each on its own fresh copy of the chapter's teaching store (profile-001, captured
2026-07-30T09:00:00Z, and six conversations), or None when there is no block:

A  profile-000, captured 2026-08-01: the newest captured_at wins; its smaller memory_id
   matters only on a tie.
B  profile-002, captured at the same instant as profile-001: the tie is broken by
   memory_id, and "profile-002" > "profile-001".
C  profile-001: the imported snapshot is on the last line and stored most recently, but
   it was captured in March; file order and stored_at never count.
D  profile-001: a conversation that talks about the profile is a conversation (recall's
   road); only PROFILE records can be injected.
E  None: without any snapshot the prompt starts with the memory rules, no empty block.
"""

my_prediction = {
    "A": "profile-000",
    "B": "profile-002",
    "C": "profile-001",
    "D": "profile-001",
    "E": None,
}
