"""Publishers: domain proof and its states, invitations, the Developer Agreement, ids, the gate."""
