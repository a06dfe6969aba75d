"""Schema privacy: what of the user's files may reach the model, the value scan, and
the filter over every request and output."""
