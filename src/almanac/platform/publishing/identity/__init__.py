"""Who publishes: an organization's roles in publishing moves, its domain and the proof of it,
its invitation, the Developer Agreement it accepted, and the plug-in ids it holds."""
