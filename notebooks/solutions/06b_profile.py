"""Reference solution for notebook 06b's "Your turn" (for instructors).

The memory_id in the ``<remote_profile>`` block of ``build_system_prompt`` for each call,
or None when there is no block. Each call starts from a fresh store, as the table's "store
holds" column says: calls A-D from this course's teaching store (the contract's seeded
store: profile-001, the id of the chapter's example block, captured and stored
2026-07-30T09:00:00Z, the course's date, and six conversations); calls E and F from the
same six conversations without profile-001:

A  profile-000, captured 2026-08-01: the newest captured_at wins; that its memory_id is
   smaller matters only on a tie.
B  profile-9: profile-9 and profile-10 are captured at the same instant (a day after
   profile-001), so max() takes the larger memory_id compared as text: "profile-9" >
   "profile-10" because "9" > "1". A numeric reading would say profile-10.
C  profile-001: the imported snapshot is on the last line and stored most recently, but it
   was captured in March; file order and stored_at never count.
D  profile-001: 2026-07-30T16:00:00+08:00 is 08:00 UTC (the store keeps it as
   2026-07-30T08:00:00Z), one hour before profile-001's 09:00 UTC. Comparing the strings as
   given would pick profile-sg.
E  None: a conversation that talks about the profile is a conversation (recall's road); with
   no PROFILE record the prompt starts with the memory rules, no empty block.
F  profile-hr: the only PROFILE record. The conversation saying the profile changed is newer
   (captured_at and stored_at) and on the last line, but it is never injected.
"""

my_prediction = {
    "A": "profile-000",
    "B": "profile-9",
    "C": "profile-001",
    "D": "profile-001",
    "E": None,
    "F": "profile-hr",
}
