"""Dagster's asset checks on the plug-ins, and alerts for operators and publishers (issue 20;
beyond the spec, changing none of its rules): the pure check and alert rules (`rules`), the
facts they read from the store (`facts`), the tables of sent alerts and chosen recipients
(`models`), and the sending of alert mail at most once a day per plug-in and cause (`send`)."""
