"""Publishers ("Version in the portal", "Listing of a published plug-in"), in the order of a
publisher's journey, one sub-package a step:

- `identity/`: who publishes: who in an organization may make a move (`roles`), its domain
  and the proof of it (`domain_names`, `domains`, `proof`), its invitation (`invitations`),
  the Developer Agreement (`agreement`, its text in `texts/`), and the plug-in ids it holds
  (`ids`).
- `uploads/`: an upload and its checks: the upload and its static checks (`uploads`), its
  states in one table (`upload_states`), the locked-room checks' queue (`check_queue`), the
  five room checks (`room_checks`) and their one run (`check_pipeline`), whose fault a failed
  download is (`network`), the record diff (`diff`), its review information and the digest a
  reviewer reviews (`review_information`), and the reviewer's decisions on it
  (`decisions`), which its page shows.
- `review/`: the submission gate (`gate`), review information, attestations, submit and
  withdraw (`submission`), and the review desk (`desk`).
- `publication/`: publishing an approved version (`publication`), its listing and the
  publisher's moves on it (`listings`), the store readers browse (`storefront`), and what the
  portal tells an organization (`notices`).

`models.py` holds the tables of all four. The sub-packages stand in layers (pyproject's
`[tool.importlinter]`): `review/` above `publication/` (the desk publishes on approval), both
above `uploads/`, and all above `identity/` and `models.py`. review.json's own rules are the
contract's (`contract/review.py`), shared with the tool.
"""
