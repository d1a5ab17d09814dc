"""Publishers ("Version in the portal", "Listing of a published plug-in"): domain proof and its
states, invitations, the Developer Agreement, ids, the gate; uploads and their static checks,
the room checks, review information and submit, the review desk, publication, listings, the
store readers browse, and the portal's notices."""
