"""Who reads which plug-in: reader lists of private plug-ins, the `shown` preference with the
organization default, and readers' reports."""
