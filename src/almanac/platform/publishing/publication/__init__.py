"""Publication and the store ("Listing of a published plug-in"): publishing an approved
version, its listing and the publisher's moves on it, the store readers browse, and the
notices the portal keeps for an organization."""
