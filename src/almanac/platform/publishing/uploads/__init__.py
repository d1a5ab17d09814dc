"""An upload and its checks ("Version in the portal": upload, checks): the upload and its
static checks, its states, the locked-room checks (queue, the five checks, their one run), the
record diff, its review information, and the decisions on it."""
