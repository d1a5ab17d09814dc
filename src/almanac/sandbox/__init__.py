"""The adapters that talk to the world, each behind a port of the domain or the orchestration:
the locked room, the source downloader, the domain proof's well-known file and DNS, SMTP mail,
and the tool's imports check in Node."""
