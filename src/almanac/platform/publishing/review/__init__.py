"""Review ("Version in the portal": submit, in review): the submission gate, review
information, attestations, submit and withdraw, and the review desk's decisions."""
