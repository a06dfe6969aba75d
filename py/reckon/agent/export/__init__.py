"""A session as a notebook or a script and back, the transcript, and markdown made
inert."""
